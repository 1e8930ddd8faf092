//! Members of groups and organizations: `member_*`, and `group_member_*` /
//! `organization_member_*` (a user as a member with a role, through `member_create` and
//! `member_delete`).

use catalog_framework::params::{decode, text};
use catalog_framework::prelude::*;
use catalog_framework::store::GroupRow;

use crate::group::kind;

pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod list;
pub(crate) mod roles_list;

fn object_table(object_type: &str) -> CkanResult<&'static str> {
    match object_type {
        "package" => Ok("package"),
        "user" => Ok("user"),
        "group" => Ok("group"),
        other => {
            let mut t = other.to_string();
            if let Some(f) = t.get_mut(0..1) {
                f.make_ascii_uppercase();
            }
            Err(validation_message(format!("{t} isn't a valid model")))
        }
    }
}

/// What `member_create` and `member_delete` name, as sent: the group (`id`), the object and
/// its type; `capacity` too on create.
struct Member<'a> {
    id: Option<&'a Value>,
    object: Option<&'a Value>,
    object_type: Option<&'a Value>,
}

/// A `member_create` / `member_delete` call checked up to its write: every required field
/// (`Missing value` each, at once: CKAN's `_get_or_bust`), the group (locked), the object, then
/// the caller's access (`auth`: the parameters). Returns the group, the object's table and the
/// object's id.
async fn member_target(
    ctx: &mut ActionContext,
    m: Member<'_>,
    capacity: Option<Option<&Value>>,
    mut auth: Params,
    action: &str,
) -> CkanResult<(GroupRow, &'static str, String)> {
    let mut required = vec![
        ("id", m.id),
        ("object", m.object),
        ("object_type", m.object_type),
    ];
    required.extend(capacity.map(|c| ("capacity", c)));
    let mut errs = ValidationBuilder::default();
    for (k, v) in required {
        if text(v).is_none_or(|s| s.is_empty()) {
            errs.push(k, "Missing value");
        }
    }
    errs.finish()?;
    let (gid, obj, otype): (String, String, String) = (
        decode("id", m.id)?,
        decode("object", m.object)?,
        decode("object_type", m.object_type)?,
    );
    let g = ctx
        .group_for_update(&gid)
        .await?
        .ok_or_else(|| not_found("Group was not found."))?;
    let table = object_table(&otype)?;
    let obj_id = resolve_object(ctx, table, &obj).await?;
    auth.insert("id".into(), json!(g.id));
    ctx.check_access(action, &auth).await?;
    Ok((g, table, obj_id))
}

/// The id of a member object. A dataset is locked (in a write call): its group memberships
/// change only under its lock, whether through member_create or package_update.
async fn resolve_object(ctx: &mut ActionContext, table: &str, r: &str) -> CkanResult<String> {
    let found = match table {
        "package" => ctx.package_for_update(r).await?.map(|x| x.id),
        "user" => ctx.user_row(r).await?.map(|x| x.id),
        _ => ctx.group_row(r).await?.map(|x| x.id),
    };
    let label = match table {
        "package" => "Package",
        "user" => "User",
        _ => "Group",
    };
    found.ok_or_else(|| not_found(format!("{label} was not found.")))
}

/// `group_member_*` / `organization_member_*`: `gid` is the group's `id` (already decoded),
/// `user` the `username` and `user_id` and `role` the role (on create) as sent, `auth` the
/// parameters (the auth function sees them with `id` set to the group's id).
async fn member_user(
    ctx: &mut ActionContext,
    auth: Params,
    gid: String,
    user: (Option<Value>, Option<Value>),
    role: Option<Value>,
    is_org: bool,
    create: bool,
) -> CkanResult<Value> {
    let g = ctx
        .group_for_update(&gid)
        .await?
        .filter(|g| g.is_organization == is_org);
    if !create {
        let g = g.ok_or_else(|| not_found("That group name or ID does not exist."))?;
        let username = text(user.0.as_ref())
            .or_else(|| text(user.1.as_ref()))
            .ok_or_else(|| missing("username"))?;
        let user = ctx
            .user_row(&username)
            .await?
            .ok_or_else(|| validation().field("username", "User not found").build())?;
        return ctx.call("member_delete", member_of(&g, &user.id)).await;
    }
    // CKAN: the caller's access first (a non-sysadmin may not learn whether a group exists),
    // then member_schema, every field at once.
    let mut auth = auth;
    auth.insert(
        "id".into(),
        json!(g.as_ref().map_or(gid.as_str(), |g| g.id.as_str())),
    );
    ctx.check_access(&format!("{}_member_create", kind(is_org)), &auth)
        .await?;
    let mut errs = ValidationBuilder::default();
    if g.is_none() {
        errs.push("id", "That group name or ID does not exist.");
    }
    let user = match text(user.0.as_ref()).or_else(|| text(user.1.as_ref())) {
        None => {
            errs.push("username", "Missing value");
            None
        }
        Some(name) => {
            let found = ctx.user_row(&name).await?;
            if found.is_none() {
                errs.push("username", "User not found");
            }
            found
        }
    };
    match role.as_ref() {
        None | Some(Value::Null) => errs.push("role", "Missing value"),
        Some(r)
            if !r
                .as_str()
                .is_some_and(|r| ["admin", "editor", "member"].contains(&r)) =>
        {
            errs.push("role", "role does not exist.")
        }
        Some(_) => {}
    }
    errs.finish()?;
    let (Some(g), Some(user), Some(role)) = (g, user, role) else {
        return Err(internal("member_create checked without its fields"));
    };
    let mut m = member_of(&g, &user.id);
    m.insert("capacity".into(), role);
    ctx.call("member_create", m).await
}

/// `member_create` / `member_delete`'s parameters for user `user_id` in group `g`.
fn member_of(g: &GroupRow, user_id: &str) -> Params {
    let mut m = Params::new();
    m.insert("id".into(), json!(g.id));
    m.insert("object".into(), json!(user_id));
    m.insert("object_type".into(), json!("user"));
    m
}
