use catalog_framework::prelude::*;

use super::{
    auth_data, bad_type, comment, relationship_params, relationships_of, triple, triple_args,
    update_comment,
};

relationship_params! {
    /// Change the comment of a relationship between two datasets (the caller must be able to
    /// edit both). A missing `comment` clears it.
    ///
    /// :param subject: the subject dataset's id or name
    /// :param object: the object dataset's id or name
    /// :param type: the relationship's type, read from the subject's side
    /// :param comment: optional
    /// :rtype: dictionary
    PackageRelationshipUpdateParams {
        /// the new comment (absent: cleared; null: null)
        comment: catalog_framework::typed::Raw,
    }
}

pub(crate) async fn package_relationship_update(
    ctx: &mut ActionContext,
    p: PackageRelationshipUpdateParams,
) -> CkanResult<Value> {
    let t = triple(ctx, triple_args!(p)).await?;
    ctx.check_access("package_relationship_update", &auth_data(&t, None))
        .await?;
    if !super::TYPES.contains(&t.rel_type.as_str()) {
        return Err(bad_type("type"));
    }
    let r = relationships_of(ctx, &t.subject.id, Some(&t.object.id), Some(&t.rel_type))
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| not_found("This relationship between the packages was not found."))?;
    update_comment(ctx, r, comment(&p.comment)).await
}
