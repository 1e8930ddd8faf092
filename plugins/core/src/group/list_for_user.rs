use catalog_framework::authz;
use catalog_framework::params::text;
use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::{AsBool, Later};

use super::{dataset_counts, raw_group, CountScope};
use crate::dictize::sorted;
use crate::shapes::{LaterExt, Scalar};

action_params! {
    /// Return the organizations where a user has a permission.
    pub struct OrganizationListForUserParams {
        /// the user's id or name (default: the caller)
        id: Later<Scalar>,
        /// the permission the user must have in the organization (default `manage_group`)
        permission: catalog_framework::typed::Raw,
        /// include each organization's `package_count` (default false)
        include_dataset_count: Later<AsBool>,
    }
}

pub(crate) async fn organization_list_for_user(
    ctx: &mut ActionContext,
    p: OrganizationListForUserParams,
) -> CkanResult<Value> {
    // Absent: `manage_group`; given, it names a permission or none (`null`, a number: CKAN's
    // `get_roles_with_permission` finds no role, so a user who is not a sysadmin has none).
    let perm = match p.permission.get() {
        None => Some("manage_group".to_string()),
        Some(v) => text(Some(v)),
    };
    let include_count = p.include_dataset_count.or(false)?;
    ctx.check_access("organization_list_for_user", &p.to_params())
        .await?;
    let user = match p.id.value().map(|r| r.0) {
        Some(r) => Some(
            ctx.user_row(&r)
                .await?
                .ok_or_else(|| not_found("User not found"))?,
        ),
        None => match ctx.user_id().map(str::to_string) {
            Some(uid) => ctx.user_row(&uid).await?,
            None => None,
        },
    };
    let Some(user) = user else {
        return Ok(json!([]));
    };
    let orgs = q::active_groups_of_kind(ctx.db().await?, true).await?;
    let held = match &perm {
        Some(perm) if !user.sysadmin => authz::groups_with_permission(ctx, &user.id, perm).await?,
        _ => Default::default(),
    };
    let counts = if include_count {
        Some(dataset_counts(ctx, CountScope::AllOfTypeDataset).await?)
    } else {
        None
    };
    let site = ctx.config().site_url().to_string();
    let mut out = Vec::new();
    for g in orgs {
        let cap = if user.sysadmin {
            Some("admin".to_string())
        } else {
            held.get(&g.id).cloned()
        };
        let Some(cap) = cap else { continue };
        let mut m = raw_group(&site, &g);
        m.insert("capacity".into(), json!(cap));
        if let Some(c) = &counts {
            m.insert("package_count".into(), json!(c.of(&g)));
        }
        out.push((g.display_name().to_lowercase(), Value::Object(sorted(m))));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Value::Array(out.into_iter().map(|x| x.1).collect()))
}
