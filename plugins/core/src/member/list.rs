use catalog_framework::authz;
use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::Later;

use crate::shapes::{LaterExt, Scalar};

action_params! {
    /// Return the members of a group as (id, type, capacity) triples.
    pub struct MemberListParams {
        /// the id or name of the group
        id: String,
        /// only the members of this type (`package`, `user` or `group`)
        object_type: Later<Scalar>,
        /// only the members with this capacity
        capacity: Later<Scalar>,
    }
}

pub(crate) async fn member_list(ctx: &mut ActionContext, p: MemberListParams) -> CkanResult<Value> {
    let g = ctx.group_row(&p.id).await?.ok_or_else(|| not_found(""))?;
    let mut auth = p.to_params();
    auth.insert("id".into(), json!(g.id));
    ctx.check_access("member_list", &auth).await?;
    let object_type = p.object_type.value().map(|t| t.0);
    let capacity = p.capacity.value().map(|c| c.0);
    let rows = q::group_memberships(ctx.db().await?, &g.id).await?;
    // Datasets the caller may not read are left out (CKAN lists private ones to anyone:
    // docs/API-COMPAT.md).
    let hidden = unreadable_datasets(
        ctx,
        rows.iter()
            .filter(|r| r.table_name == "package")
            .map(|r| r.table_id.clone())
            .collect(),
    )
    .await?;
    let mut out = Vec::new();
    for r in rows {
        let (tid, table, cap) = (r.table_id, r.table_name, r.capacity);
        if object_type.as_deref().is_some_and(|t| t != table)
            || capacity.as_deref().is_some_and(|c| c != cap)
            || (table == "package" && hidden.contains(&tid))
        {
            continue;
        }
        let shown = match cap.as_str() {
            "admin" => "Admin".to_string(),
            "editor" => "Editor".to_string(),
            "member" => "Member".to_string(),
            other => other.to_string(),
        };
        out.push(json!([tid, table, shown]));
    }
    Ok(Value::Array(out))
}

/// Of these dataset ids, the ones the caller may not read.
async fn unreadable_datasets(
    ctx: &mut ActionContext,
    ids: Vec<String>,
) -> CkanResult<std::collections::HashSet<String>> {
    let mut hidden = std::collections::HashSet::new();
    if ids.is_empty() || ctx.is_sysadmin() || ctx.ignore_auth {
        return Ok(hidden);
    }
    let mine = authz::user_labels(ctx).await?;
    let collaborators = ctx.config().catalog.auth.allow_dataset_collaborators;
    for pkg in q::package_summaries(ctx.db().await?, &ids).await? {
        if !authz::dataset_labels(&pkg, collaborators)
            .iter()
            .any(|l| mine.contains(l))
        {
            hidden.insert(pkg.id);
        }
    }
    Ok(hidden)
}
