//! Members of groups and organizations: `member_*`, and `group_member_*` /
//! `organization_member_*` (a user as a member with a role, through `member_create` and
//! `member_delete`).

use std::borrow::Cow;

use catalog_framework::params::text;
use catalog_framework::prelude::*;
use catalog_framework::store::GroupRow;
use catalog_framework::typed::{Later, ParamType};

use crate::group::kind;
use crate::shapes::{LaterExt, Scalar};

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

/// A member's role in `group_member_create` / `organization_member_create`: `admin`,
/// `editor` or `member` (anything else, `""` too, is `role does not exist.`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MemberRole(pub(crate) String);

const ROLES: [&str; 3] = ["admin", "editor", "member"];

impl ParamType for MemberRole {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match v.as_str() {
            Some(r) if ROLES.contains(&r) => Ok(MemberRole(r.to_string())),
            _ => Err("role does not exist.".into()),
        }
    }
    fn schema() -> Value {
        json!({"type": "string", "enum": ROLES})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// What `member_create` and `member_delete` name: the group (`id`), the object and its type;
/// `capacity` too on create.
struct Member<'a> {
    id: &'a Later<String>,
    object: &'a Later<String>,
    object_type: &'a Later<String>,
}

/// A `member_create` / `member_delete` call checked up to its write: every required field
/// (`Missing value` each, at once: CKAN's `_get_or_bust`), the group (locked), the object, then
/// the caller's access (`auth`: the parameters). Returns the group, the object's table and the
/// object's id.
async fn member_target(
    ctx: &mut ActionContext,
    m: Member<'_>,
    capacity: Option<&Later<String>>,
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
        // Given as CKAN's `_get_or_bust` sees it: a non-empty scalar (a boolean too, which
        // the decoding below then refuses).
        if text(v.raw()).is_none_or(|s| s.is_empty()) {
            errs.push(k, "Missing value");
        }
    }
    errs.finish()?;
    let (gid, obj, otype) = (
        m.id.require()?,
        m.object.require()?,
        m.object_type.require()?,
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
/// `user` the `username` and `user_id` and `role` the role (on create), `auth` the
/// parameters (the auth function sees them with `id` set to the group's id).
async fn member_user(
    ctx: &mut ActionContext,
    auth: Params,
    gid: String,
    user: (&Later<Scalar>, &Later<Scalar>),
    role: Option<&Later<MemberRole>>,
    is_org: bool,
    create: bool,
) -> CkanResult<Value> {
    let g = ctx
        .group_for_update(&gid)
        .await?
        .filter(|g| g.is_organization == is_org);
    if !create {
        let g = g.ok_or_else(|| not_found("That group name or ID does not exist."))?;
        let username = user
            .0
            .value()
            .or_else(|| user.1.value())
            .ok_or_else(|| missing("username"))?
            .0;
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
    let user = match user.0.value().or_else(|| user.1.value()).map(|u| u.0) {
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
    let role = match role.map(Later::get).transpose() {
        Ok(Some(Some(r))) => Some(r),
        Ok(_) => {
            errs.push("role", "Missing value");
            None
        }
        Err(e) => {
            errs.merge(e);
            None
        }
    };
    errs.finish()?;
    let (Some(g), Some(user), Some(role)) = (g, user, role) else {
        return Err(internal("member_create checked without its fields"));
    };
    let mut m = member_of(&g, &user.id);
    m.insert("capacity".into(), json!(role.0));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_is_one_of_three() {
        let role = |v: Value| Later::<MemberRole>::new("role", Some(v)).get();
        assert_eq!(role(json!("editor")).unwrap().unwrap().0, "editor");
        assert_eq!(role(json!(null)).unwrap(), None);
        for v in [json!(""), json!("Admin"), json!(1), json!(["admin"])] {
            assert_eq!(
                role(v).unwrap_err().body["role"],
                json!(["role does not exist."])
            );
        }
    }
}
