use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::Later;

use super::{member_target, member_user, Member, MemberRole};
use crate::membership::add_member;
use crate::shapes::Scalar;

action_params! {
    /// Make an object (user, dataset or group) a member of a group.
    pub struct MemberCreateParams {
        /// the id or name of the group (required, as are the three others: each is
        /// `Missing value` at once, then checked one at a time)
        id: Later<String>,
        /// the id or name of the object to add
        object: Later<String>,
        /// the type of the object: `package`, `user` or `group`
        object_type: Later<String>,
        /// the capacity of the membership (`member`, `editor`, `admin` …)
        capacity: Later<String>,
    }
}

pub(crate) async fn member_create(
    ctx: &mut ActionContext,
    p: MemberCreateParams,
) -> CkanResult<Value> {
    let m = Member {
        id: &p.id,
        object: &p.object,
        object_type: &p.object_type,
    };
    let (g, table, obj_id) =
        member_target(ctx, m, Some(&p.capacity), p.to_params(), "member_create").await?;
    let cap = p.capacity.require()?;
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
        username: Later<Scalar>,
        /// the user's id, when `username` is not given
        user_id: Later<Scalar>,
        /// `admin`, `editor` or `member` (required; checked with the group and the user, every
        /// error at once)
        role: Later<MemberRole>,
    }
}

pub(crate) async fn group_member_create(
    ctx: &mut ActionContext,
    p: GroupMemberCreateParams,
) -> CkanResult<Value> {
    let auth = p.to_params();
    let user = (&p.username, &p.user_id);
    member_user(ctx, auth, p.id, user, Some(&p.role), false, true).await
}

action_params! {
    /// Make a user a member of an organization with a role.
    pub struct OrganizationMemberCreateParams {
        /// the id or name of the organization
        id: String,
        /// the user's name or id
        username: Later<Scalar>,
        /// the user's id, when `username` is not given
        user_id: Later<Scalar>,
        /// `admin`, `editor` or `member` (required; checked with the group and the user, every
        /// error at once)
        role: Later<MemberRole>,
    }
}

pub(crate) async fn organization_member_create(
    ctx: &mut ActionContext,
    p: OrganizationMemberCreateParams,
) -> CkanResult<Value> {
    let auth = p.to_params();
    let user = (&p.username, &p.user_id);
    member_user(ctx, auth, p.id, user, Some(&p.role), true, true).await
}
