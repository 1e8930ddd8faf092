use catalog_framework::prelude::*;
use catalog_framework::store as q;

use super::{member_target, member_user};
use crate::membership::add_member;

action_params! {
    /// Make an object (user, dataset or group) a member of a group.
    pub struct MemberCreateParams {}
}

pub async fn member_create(ctx: &mut ActionContext, p: MemberCreateParams) -> CkanResult<Value> {
    let p = p.__extras;
    let (g, table, obj_id) = member_target(
        ctx,
        &p,
        "member_create",
        &["id", "object", "object_type", "capacity"],
    )
    .await?;
    let cap = req_str(&p, "capacity")?;
    if table == "user"
        && Some(obj_id.as_str()) == ctx.user_id()
        && cap != "admin"
        && !ctx.is_sysadmin()
    {
        let held = q::user_memberships(ctx.db().await?, &obj_id).await?;
        if held.iter().any(|(gid, c)| *gid == g.id && c == "admin") {
            return Err(not_authorized(
                "Administrators cannot revoke their own admin status",
            ));
        }
    }
    add_member(ctx, &g.id, table, &obj_id, &cap).await
}

action_params! {
    /// Make a user a member of a group with a role.
    pub struct GroupMemberCreateParams {
        /// the id or name of the group
        id: String,
    }
}

pub async fn group_member_create(
    ctx: &mut ActionContext,
    p: GroupMemberCreateParams,
) -> CkanResult<Value> {
    member_user(ctx, p.id, p.__extras, false, true).await
}

action_params! {
    /// Make a user a member of an organization with a role.
    pub struct OrganizationMemberCreateParams {
        /// the id or name of the organization
        id: String,
    }
}

pub async fn organization_member_create(
    ctx: &mut ActionContext,
    p: OrganizationMemberCreateParams,
) -> CkanResult<Value> {
    member_user(ctx, p.id, p.__extras, true, true).await
}
