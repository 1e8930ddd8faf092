use catalog_framework::prelude::*;
use catalog_framework::store::{self as q, RelationshipRow};

use super::{
    auth_data, bad_type, comment, is_forward, relationship_dict, relationship_params,
    relationships_of, reverse, save, triple, triple_args, update_comment,
};

relationship_params! {
    /// Create a relationship between two datasets (the caller must be able to edit both).
    ///
    /// :param subject: the subject dataset's id or name
    /// :param object: the object dataset's id or name
    /// :param type: `depends_on`, `dependency_of`, `derives_from`, `has_derivation`,
    ///   `links_to`, `linked_from`, `child_of` or `parent_of`
    /// :param comment: optional
    /// :rtype: dictionary
    PackageRelationshipCreateParams {
        /// a comment (absent: none; null: null)
        comment: catalog_framework::typed::Raw,
    }
}

pub(crate) async fn package_relationship_create(
    ctx: &mut ActionContext,
    p: PackageRelationshipCreateParams,
) -> CkanResult<Value> {
    let t = triple(ctx, triple_args!(p)).await?;
    if t.rel_type.is_empty() {
        return Err(validation().field("type", "Missing value").build());
    }
    if !super::TYPES.contains(&t.rel_type.as_str()) {
        return Err(bad_type("type"));
    }
    // An id is refused, not a parameter: it stays in `__extras`.
    if p.__extras
        .get("id")
        .is_some_and(|v| !v.is_null() && v.as_str() != Some(""))
    {
        return Err(validation()
            .field("id", "The input field id was not expected.")
            .build());
    }
    ctx.check_access("package_relationship_create", &auth_data(&t, None))
        .await?;
    let comment = comment(&p.comment);
    let existing = relationships_of(ctx, &t.subject.id, Some(&t.object.id), Some(&t.rel_type))
        .await?
        .into_iter()
        .next();
    if let Some(r) = existing {
        return update_comment(ctx, r, comment).await;
    }
    let (subject, object, stored_type) = if is_forward(&t.rel_type) {
        (&t.subject.id, &t.object.id, t.rel_type.as_str())
    } else {
        (&t.object.id, &t.subject.id, reverse(&t.rel_type))
    };
    // A deleted relationship of the same triple comes back rather than a second row.
    let r = match q::relationship_by_triple(ctx.db().await?, subject, object, stored_type).await? {
        Some(mut old) => {
            old.state = "active".into();
            old.comment = comment;
            old
        }
        None => RelationshipRow {
            id: q::new_id(),
            subject_package_id: subject.clone(),
            object_package_id: object.clone(),
            rel_type: stored_type.to_string(),
            comment,
            state: "active".into(),
        },
    };
    save(ctx, &r).await?;
    relationship_dict(ctx, &r, None).await
}
