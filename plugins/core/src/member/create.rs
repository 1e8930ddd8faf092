use catalog_framework::prelude::*;
use catalog_framework::store as q;

use super::{member_target, member_user};
use crate::membership::add_member;

pub async fn member_create(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
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

pub async fn group_member_create(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    member_user(ctx, p, false, true).await
}

pub async fn organization_member_create(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    member_user(ctx, p, true, true).await
}
