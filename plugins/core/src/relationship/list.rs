use catalog_framework::authz;
use catalog_framework::prelude::*;
use catalog_framework::typed::{AnyText, Raw};

use super::{bad_type, relationship_dict, relationships_of, text};

action_params! {
    /// Return a dataset's relationships, read from its side.
    ///
    /// :param id: the dataset's id or name
    /// :param id2: optional: only those with this dataset
    /// :param rel: optional: only those of this type (`relationships` or empty: every type)
    /// :rtype: list of dictionaries
    pub struct PackageRelationshipsListParams {
        /// the dataset's id or name (required; a null counts as given)
        id: Raw,
        /// only the relationships with this dataset (id or name)
        id2: Option<AnyText>,
        /// only the relationships of this type, read from the dataset's side
        /// (`relationships` or empty: every type)
        rel: Option<AnyText>,
    }
}

pub(crate) async fn package_relationships_list(
    ctx: &mut ActionContext,
    p: PackageRelationshipsListParams,
) -> CkanResult<Value> {
    if p.id.get().is_none() {
        return Err(missing("id"));
    }
    let id_given = text(p.id.get());
    let pkg = ctx
        .package_row(&id_given)
        .await?
        .ok_or_else(|| not_found("First package named in request was not found."))?;
    let id2_given = p.id2.map(|t| t.0).unwrap_or_default();
    let other = if id2_given.is_empty() {
        None
    } else {
        Some(
            ctx.package_row(&id2_given)
                .await?
                .ok_or_else(|| not_found("Second package named in address was not found."))?,
        )
    };
    let mut auth = Map::new();
    auth.insert("id".into(), json!(pkg.id));
    if let Some(o) = &other {
        auth.insert("id2".into(), json!(o.id));
    }
    ctx.check_access("package_relationships_list", &auth)
        .await?;
    let rel = p.rel.map(|t| t.0).unwrap_or_default();
    let rel = (!rel.is_empty() && rel != "relationships").then_some(rel);
    if let Some(r) = &rel {
        if !super::TYPES.contains(&r.as_str()) {
            return Err(bad_type("rel"));
        }
    }
    let mut rows = relationships_of(
        ctx,
        &pkg.id,
        other.as_ref().map(|o| o.id.as_str()),
        rel.as_deref(),
    )
    .await?;
    // Only relationships with datasets the caller may read: the others would name a private
    // or draft dataset (CKAN lists them; docs/API-COMPAT.md).
    if !ctx.is_sysadmin() {
        let mut readable = std::collections::HashMap::new();
        let mut kept = Vec::with_capacity(rows.len());
        for r in rows {
            let other_end = if r.subject_package_id == pkg.id {
                &r.object_package_id
            } else {
                &r.subject_package_id
            };
            if authz::may_read_dataset(ctx, other_end, &mut readable).await? {
                kept.push(r);
            }
        }
        rows = kept;
    }
    if rows.is_empty() {
        if let Some(r) = &rel {
            let id2 = if id2_given.is_empty() {
                "None".to_string()
            } else {
                id2_given
            };
            return Err(not_found(format!(
                "Relationship \"{id_given} {r} {id2}\" not found."
            )));
        }
    }
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        out.push(relationship_dict(ctx, r, Some(&pkg.id)).await?);
    }
    Ok(Value::Array(out))
}
