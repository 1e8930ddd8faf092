use catalog_framework::prelude::*;

use super::{
    auth_data, bad_type, relationship_params, relationships_of, save, triple, triple_args,
};

relationship_params! {
    /// Delete a relationship between two datasets (the caller must be able to edit both).
    ///
    /// :param subject: the subject dataset's id or name
    /// :param object: the object dataset's id or name
    /// :param type: the relationship's type, read from the subject's side
    PackageRelationshipDeleteParams {}
}

pub(crate) async fn package_relationship_delete(
    ctx: &mut ActionContext,
    p: PackageRelationshipDeleteParams,
) -> CkanResult<Value> {
    let t = triple(ctx, triple_args!(p)).await?;
    if !super::TYPES.contains(&t.rel_type.as_str()) {
        return Err(bad_type("type"));
    }
    let mut r = relationships_of(ctx, &t.subject.id, Some(&t.object.id), Some(&t.rel_type))
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| not_found(""))?;
    ctx.check_access("package_relationship_delete", &auth_data(&t, Some(&r.id)))
        .await?;
    r.state = "deleted".into();
    save(ctx, &r).await?;
    Ok(Value::Null)
}
