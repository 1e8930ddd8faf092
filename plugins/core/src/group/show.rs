use catalog_framework::prelude::*;

use super::{group_dict, kind, load_group, ShowOpts};

async fn show(ctx: &mut ActionContext, id: String, p: Params, is_org: bool) -> CkanResult<Value> {
    let g = load_group(ctx, &id, is_org).await?;
    let opts = ShowOpts {
        datasets: bool_param(&p, "include_datasets", false)?,
        dataset_count: bool_param(&p, "include_dataset_count", true)?,
        extras: bool_param(&p, "include_extras", true)?,
        users: bool_param(
            &p,
            "include_users",
            ctx.config().catalog.auth.public_user_details,
        )?,
        groups: bool_param(&p, "include_groups", true)?,
        counts: None,
        after_write: false,
    };
    let followers = bool_param(&p, "include_followers", true)?;
    let mut auth = p.clone();
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

action_params! {
    /// Return the details of a group.
    pub struct GroupShowParams {
        /// the group's id or name
        id: String,
    }
}

pub async fn group_show(ctx: &mut ActionContext, p: GroupShowParams) -> CkanResult<Value> {
    show(ctx, p.id, p.__extras, false).await
}

action_params! {
    /// Return the details of an organization.
    pub struct OrganizationShowParams {
        /// the organization's id or name
        id: String,
    }
}

pub async fn organization_show(
    ctx: &mut ActionContext,
    p: OrganizationShowParams,
) -> CkanResult<Value> {
    show(ctx, p.id, p.__extras, true).await
}
