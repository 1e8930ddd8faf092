use catalog_framework::prelude::*;
use catalog_framework::typed::{AsBool, Later};

use super::{group_dict, kind, load_group, ShowOpts};

/// The flags of `group_show` and `organization_show` (read one at a time once the group is
/// found).
struct ShowFlags {
    datasets: Later<AsBool>,
    dataset_count: Later<AsBool>,
    extras: Later<AsBool>,
    users: Later<AsBool>,
    groups: Later<AsBool>,
    followers: Later<AsBool>,
}

async fn show(
    ctx: &mut ActionContext,
    (id, mut auth): (String, Params),
    f: ShowFlags,
    is_org: bool,
) -> CkanResult<Value> {
    let g = load_group(ctx, &id, is_org).await?;
    let opts = ShowOpts {
        datasets: f.datasets.or(false)?,
        dataset_count: f.dataset_count.or(true)?,
        extras: f.extras.or(true)?,
        users: f.users.or(ctx.config().catalog.auth.public_user_details)?,
        groups: f.groups.or(true)?,
        counts: None,
        after_write: false,
    };
    let followers = f.followers.or(true)?;
    auth.insert("id".into(), json!(g.id));
    ctx.check_access(&format!("{}_show", kind(is_org)), &auth)
        .await?;
    let mut d = group_dict(ctx, &g, &opts).await?;
    if followers {
        // CKAN counts with group_follower_count (organizations too); without the plugin that
        // keeps followers, nobody follows.
        d["num_followers"] = follower_count(ctx, "group_follower_count", &g.id).await?;
    }
    Ok(d)
}

/// The follower count a `*_follower_count` action gives, or 0 when no plugin registers it.
pub(crate) async fn follower_count(
    ctx: &mut ActionContext,
    action: &str,
    id: &str,
) -> CkanResult<Value> {
    if !ctx.has_action(action) {
        return Ok(json!(0));
    }
    let mut p = Params::new();
    p.insert("id".into(), json!(id));
    ctx.call_ignoring_auth(action, p).await
}

/// The params struct and fn of `group_show` and `organization_show`.
macro_rules! show_params {
    ($($(#[doc = $doc:literal])* $name:ident($id:literal) => $f:ident($is_org:expr);)*) => {$(
        action_params! {
            $(#[doc = $doc])*
            pub struct $name {
                #[doc = $id]
                id: String,
                /// include its datasets (default false)
                include_datasets: Later<AsBool>,
                /// include `package_count` (default true)
                include_dataset_count: Later<AsBool>,
                /// include its extras (default true)
                include_extras: Later<AsBool>,
                /// include its users (default `catalog.auth.public_user_details`)
                include_users: Later<AsBool>,
                /// include its sub-groups (default true)
                include_groups: Later<AsBool>,
                /// include `num_followers` (default true)
                include_followers: Later<AsBool>,
            }
        }

        pub(crate) async fn $f(ctx: &mut ActionContext, p: $name) -> CkanResult<Value> {
            let auth = p.to_params();
            let flags = ShowFlags {
                datasets: p.include_datasets,
                dataset_count: p.include_dataset_count,
                extras: p.include_extras,
                users: p.include_users,
                groups: p.include_groups,
                followers: p.include_followers,
            };
            show(ctx, (p.id, auth), flags, $is_org).await
        }
    )*};
}

show_params! {
    /// Return the details of a group.
    GroupShowParams("the group's id or name") => group_show(false);
    /// Return the details of an organization.
    OrganizationShowParams("the organization's id or name") => organization_show(true);
}
