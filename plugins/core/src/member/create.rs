use catalog_framework::params::decode;
use catalog_framework::prelude::*;
use catalog_framework::store as q;

use super::{member_target, member_user, Member};
use crate::membership::add_member;

action_params! {
    /// Make an object (user, dataset or group) a member of a group.
    pub struct MemberCreateParams {
        /// the id or name of the group (required, as are the three others: each is
        /// `Missing value` at once, then checked one at a time)
        id: Option<Value>,
        /// the id or name of the object to add
        object: Option<Value>,
        /// the type of the object: `package`, `user` or `group`
        object_type: Option<Value>,
        /// the capacity of the membership (`member`, `editor`, `admin` …)
        capacity: Option<Value>,
    }
}

pub(crate) async fn member_create(
    ctx: &mut ActionContext,
    p: MemberCreateParams,
) -> CkanResult<Value> {
    let m = Member {
        id: p.id.as_ref(),
        object: p.object.as_ref(),
        object_type: p.object_type.as_ref(),
    };
    let (g, table, obj_id) = member_target(
        ctx,
        m,
        Some(p.capacity.as_ref()),
        p.to_params(),
        "member_create",
    )
    .await?;
    let cap: String = decode("capacity", p.capacity.as_ref())?;
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
        /// the user's name or id
        username: Option<Value>,
        /// the user's id, when `username` is not given
        user_id: Option<Value>,
        /// `admin`, `editor` or `member` (required; checked with the group and the user, every
        /// error at once)
        role: Option<Value>,
    }
}

pub(crate) async fn group_member_create(
    ctx: &mut ActionContext,
    p: GroupMemberCreateParams,
) -> CkanResult<Value> {
    let auth = p.to_params();
    let user = (p.username, p.user_id);
    member_user(ctx, auth, p.id, user, p.role, false, true).await
}

action_params! {
    /// Make a user a member of an organization with a role.
    pub struct OrganizationMemberCreateParams {
        /// the id or name of the organization
        id: String,
        /// the user's name or id
        username: Option<Value>,
        /// the user's id, when `username` is not given
        user_id: Option<Value>,
        /// `admin`, `editor` or `member` (required; checked with the group and the user, every
        /// error at once)
        role: Option<Value>,
    }
}

pub(crate) async fn organization_member_create(
    ctx: &mut ActionContext,
    p: OrganizationMemberCreateParams,
) -> CkanResult<Value> {
    let auth = p.to_params();
    let user = (p.username, p.user_id);
    member_user(ctx, auth, p.id, user, p.role, true, true).await
}
