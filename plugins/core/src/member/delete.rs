use catalog_framework::prelude::*;
use catalog_framework::typed::Later;

use super::{member_target, member_user, Member};
use crate::membership::remove_member;
use crate::shapes::Scalar;

action_params! {
    /// Remove an object from a group.
    pub struct MemberDeleteParams {
        /// the id or name of the group (required, as are the two others: each is
        /// `Missing value` at once, then checked one at a time)
        id: Later<String>,
        /// the id or name of the object to remove
        object: Later<String>,
        /// the type of the object: `package`, `user` or `group`
        object_type: Later<String>,
    }
}

pub(crate) async fn member_delete(
    ctx: &mut ActionContext,
    p: MemberDeleteParams,
) -> CkanResult<Value> {
    let m = Member {
        id: &p.id,
        object: &p.object,
        object_type: &p.object_type,
    };
    let (g, table, obj_id) = member_target(ctx, m, None, p.to_params(), "member_delete").await?;
    remove_member(ctx, &g.id, table, &obj_id).await?;
    Ok(Value::Null)
}

action_params! {
    /// Remove a user from a group.
    pub struct GroupMemberDeleteParams {
        /// the id or name of the group
        id: String,
        /// the user's name or id
        username: Later<Scalar>,
        /// the user's id, when `username` is not given
        user_id: Later<Scalar>,
    }
}

pub(crate) async fn group_member_delete(
    ctx: &mut ActionContext,
    p: GroupMemberDeleteParams,
) -> CkanResult<Value> {
    let auth = p.to_params();
    let user = (&p.username, &p.user_id);
    member_user(ctx, auth, p.id, user, None, false, false).await
}

action_params! {
    /// Remove a user from an organization.
    pub struct OrganizationMemberDeleteParams {
        /// the id or name of the organization
        id: String,
        /// the user's name or id
        username: Later<Scalar>,
        /// the user's id, when `username` is not given
        user_id: Later<Scalar>,
    }
}

pub(crate) async fn organization_member_delete(
    ctx: &mut ActionContext,
    p: OrganizationMemberDeleteParams,
) -> CkanResult<Value> {
    let auth = p.to_params();
    let user = (&p.username, &p.user_id);
    member_user(ctx, auth, p.id, user, None, true, false).await
}
