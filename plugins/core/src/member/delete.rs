use catalog_framework::prelude::*;

use super::{member_target, member_user};
use crate::membership::remove_member;

action_params! {
    /// Remove an object from a group.
    pub struct MemberDeleteParams {}
}

pub async fn member_delete(ctx: &mut ActionContext, p: MemberDeleteParams) -> CkanResult<Value> {
    let p = p.__extras;
    let (g, table, obj_id) =
        member_target(ctx, &p, "member_delete", &["id", "object", "object_type"]).await?;
    remove_member(ctx, &g.id, table, &obj_id).await?;
    Ok(Value::Null)
}

action_params! {
    /// Remove a user from a group.
    pub struct GroupMemberDeleteParams {
        /// the id or name of the group
        id: String,
    }
}

pub async fn group_member_delete(
    ctx: &mut ActionContext,
    p: GroupMemberDeleteParams,
) -> CkanResult<Value> {
    member_user(ctx, p.id, p.__extras, false, false).await
}

action_params! {
    /// Remove a user from an organization.
    pub struct OrganizationMemberDeleteParams {
        /// the id or name of the organization
        id: String,
    }
}

pub async fn organization_member_delete(
    ctx: &mut ActionContext,
    p: OrganizationMemberDeleteParams,
) -> CkanResult<Value> {
    member_user(ctx, p.id, p.__extras, true, false).await
}
