use catalog_framework::prelude::*;
use catalog_framework::store;

use super::{emit_group, kind, load_group};

/// `id`: the group's id or name; `auth`: the parameters.
async fn delete(
    ctx: &mut ActionContext,
    (id, mut auth): (String, Params),
    is_org: bool,
    purge: bool,
) -> CkanResult<Value> {
    let g = load_group(ctx, &id, is_org).await?;
    let verb = if purge { "purge" } else { "delete" };
    auth.insert("id".into(), json!(g.id));
    ctx.check_access(&format!("{}_{verb}", kind(is_org)), &auth)
        .await?;
    if is_org {
        let ids = store::organization_package_ids(ctx.db().await?, &g.id).await?;
        if !ids.is_empty() {
            if !ctx.config().catalog.auth.create_unowned_dataset {
                let what = if purge { "purged" } else { "deleted" };
                return Err(validation_message(format!(
                    "Organization cannot be {what} while it still has datasets"
                )));
            }
            for pid in ids {
                let row = crate::package::load(ctx, &pid).await?;
                let mut doc: Map<String, Value> = serde_json::from_str(&row.data)?;
                doc.insert("owner_org".into(), Value::Null);
                doc.insert("private".into(), json!(false));
                let data = serde_json::to_string(&doc)?;
                store::detach_package_from_organization(ctx.db().await?, &pid, &data).await?;
            }
        }
    }
    let conn = ctx.db().await?;
    if purge {
        store::purge_group(conn, &g.id).await?;
    } else {
        store::mark_group_deleted(conn, &g.id).await?;
    }
    if purge {
        emit_group(ctx, Change::Purged, Some(&g), None);
    } else {
        let mut after = g.clone();
        after.state = "deleted".into();
        emit_group(ctx, Change::Deleted, Some(&g), Some(&after));
    }
    Ok(Value::Null)
}

/// The params struct of each delete and purge action: the group's id or name.
macro_rules! delete_params {
    ($($(#[doc = $doc:literal])* $name:ident => $f:ident($is_org:expr, $purge:expr);)*) => {$(
        action_params! {
            $(#[doc = $doc])*
            pub struct $name {
                /// the id or name of the group or organization
                id: String,
            }
        }

        pub(crate) async fn $f(ctx: &mut ActionContext, p: $name) -> CkanResult<Value> {
            let auth = p.to_params();
            delete(ctx, (p.id, auth), $is_org, $purge).await
        }
    )*};
}

delete_params! {
    /// Delete a group.
    GroupDeleteParams => group_delete(false, false);
    /// Delete an organization.
    OrganizationDeleteParams => organization_delete(true, false);
    /// Purge a group. Sysadmins only.
    GroupPurgeParams => group_purge(false, true);
    /// Purge an organization. Sysadmins only.
    OrganizationPurgeParams => organization_purge(true, true);
}
