//! CKAN's authorization functions for the core actions (spec/ckan-write-auth-legacy.md §7.4).
//!
//! Sysadmins never reach these (the framework's bypass); actions without a registered auth
//! function are sysadmin-only (`dataset_purge`, `*_purge`, `package_owner_org_update`, `user_delete`).
#![forbid(unsafe_code)]

use catalog_framework::authz;
use catalog_framework::params::truthy;
use catalog_framework::prelude::*;
use catalog_framework::store as q;

register_plugin!("default_auth");

/// Declares an auth function from an async fn `(ctx, data) -> CkanResult<()>`.
macro_rules! auth {
    ($( $name:ident, anon = $anon:expr, $f:path; )*) => {
        $(
            #[allow(non_camel_case_types)]
            struct $name;
            #[async_trait]
            impl AuthFunction for $name {
                fn allow_anonymous(&self) -> bool {
                    $anon
                }
                async fn check(&self, ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
                    $f(ctx, data).await
                }
            }
            register_auth!(stringify!($name), $name);
        )*
    };
}

auth! {
    package_show, anon = true, package_read;
    resource_show, anon = true, resource_read;
    package_search, anon = true, allow;
    package_list, anon = true, allow;
    current_package_list_with_resources, anon = true, allow;
    group_show, anon = true, group_read;
    organization_show, anon = true, group_read;
    group_list, anon = true, allow;
    organization_list, anon = true, allow;
    organization_list_for_user, anon = true, allow;
    group_list_authz, anon = true, allow;
    member_list, anon = true, group_read;
    member_roles_list, anon = true, allow;
    user_show, anon = true, user_read;
    user_list, anon = true, user_list_check;
    tag_list, anon = true, allow;
    tag_show, anon = true, allow;
    tag_search, anon = true, allow;
    tag_autocomplete, anon = true, allow;
    resource_search, anon = true, allow;
    format_autocomplete, anon = true, allow;
    package_autocomplete, anon = true, allow;
    user_autocomplete, anon = true, user_list_check;
    group_autocomplete, anon = true, allow;
    organization_autocomplete, anon = true, allow;
    group_package_show, anon = true, allow;
    status_show, anon = true, allow;
    site_read, anon = true, allow;
    license_list, anon = true, allow;
    help_show, anon = true, allow;
    package_create, anon = true, package_create_check;
    package_update, anon = true, package_update_check;
    package_revise, anon = true, package_update_check;
    package_delete, anon = false, package_update_check;
    resource_create, anon = true, resource_write;
    resource_update, anon = true, resource_write;
    resource_delete, anon = false, resource_write;
    package_collaborator_create, anon = false, manage_collaborators;
    package_collaborator_delete, anon = false, manage_collaborators;
    package_collaborator_list, anon = false, manage_collaborators;
    package_collaborator_list_for_user, anon = false, self_only_collab;
    group_create, anon = false, group_create_check;
    organization_create, anon = false, organization_create_check;
    group_update, anon = false, group_admin;
    organization_update, anon = false, group_admin;
    group_delete, anon = false, group_delete_check;
    organization_delete, anon = false, organization_delete_check;
    member_create, anon = false, member_write;
    member_delete, anon = false, member_write;
    group_member_create, anon = false, group_membership;
    organization_member_create, anon = false, group_membership;
    user_invite, anon = false, invite_check;
    bulk_update_private, anon = false, bulk_check;
    bulk_update_public, anon = false, bulk_check;
    bulk_update_delete, anon = false, bulk_check;
    user_create, anon = true, user_create_check;
    user_update, anon = true, user_self;
    api_token_create, anon = false, token_owner_user;
    api_token_list, anon = false, token_list_check;
    api_token_revoke, anon = false, token_revoke_check;
    vocabulary_list, anon = true, allow;
    vocabulary_show, anon = true, allow;
    vocabulary_create, anon = true, sysadmin_bare;
    vocabulary_update, anon = true, sysadmin_bare;
    vocabulary_delete, anon = true, sysadmin_bare;
    tag_create, anon = true, sysadmin_bare;
    tag_delete, anon = true, sysadmin_bare;
    package_relationship_create, anon = true, relationship_edit;
    package_relationship_update, anon = true, relationship_edit;
    package_relationship_delete, anon = true, relationship_edit;
    package_relationships_list, anon = true, relationships_read;
    task_status_show, anon = true, allow;
    resource_status_show, anon = true, allow;
    task_status_update, anon = true, task_status_write;
    task_status_update_many, anon = true, allow;
    task_status_delete, anon = true, sysadmin_bare;
    term_translation_show, anon = true, allow;
    term_translation_update, anon = true, term_translation_write;
    term_translation_update_many, anon = true, allow;
    get_site_user, anon = true, internal_only;
    config_option_list, anon = true, sysadmin_bare;
    config_option_show, anon = true, sysadmin_bare;
    config_option_update, anon = true, sysadmin_bare;
    job_list, anon = true, sysadmin_bare;
    job_show, anon = true, sysadmin_bare;
    job_clear, anon = true, sysadmin_bare;
    job_cancel, anon = true, sysadmin_bare;
}

async fn internal_only(_: &mut ActionContext, _: &Params) -> CkanResult<()> {
    Err(not_authorized(
        "Only internal services allowed to use this action",
    ))
}

async fn task_status_write(ctx: &mut ActionContext, _: &Params) -> CkanResult<()> {
    Err(deny(ctx, "update task_status table"))
}

async fn term_translation_write(ctx: &mut ActionContext, _: &Params) -> CkanResult<()> {
    Err(deny(ctx, "update term_translation table"))
}

/// A relationship write: the caller must be able to edit both datasets. The message names
/// the relationship when the action passes its id (`relationship_id`, on delete).
async fn relationship_edit(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    for key in ["subject", "object"] {
        if !can_update_package(ctx, &id_of(data, key)).await? {
            return Err(match data.get("relationship_id").and_then(Value::as_str) {
                Some(r) => deny(ctx, &format!("delete relationship {r}")),
                None => deny(ctx, "edit these packages"),
            });
        }
    }
    Ok(())
}

/// `package_relationships_list`: the caller must be able to read `id` and `id2`.
async fn relationships_read(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    for key in ["id", "id2"] {
        if data.contains_key(key) {
            let pkg = ctx
                .package_row(&id_of(data, key))
                .await?
                .ok_or_else(|| not_found(""))?;
            if !authz::can_read_package(ctx, &pkg).await? {
                return Err(deny(ctx, "read these packages"));
            }
        }
    }
    Ok(())
}

/// CKAN's sysadmin-only auth functions that give no reason: a bare `Access denied` (the
/// framework's default for an action without an auth function names the user and action).
async fn sysadmin_bare(_: &mut ActionContext, _: &Params) -> CkanResult<()> {
    Err(not_authorized(""))
}

fn deny(ctx: &ActionContext, what: &str) -> CkanError {
    not_authorized(format!("User {} not authorized to {what}", ctx.user_name()))
}

fn id_of(data: &Params, key: &str) -> String {
    data.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

async fn allow(_: &mut ActionContext, _: &Params) -> CkanResult<()> {
    Ok(())
}

/// `package_show`: the caller must be able to read the dataset. The refusal names the dataset
/// as the caller did (CKAN names its id, which tells whoever asked by name the id of a private
/// dataset; docs/API-COMPAT.md).
async fn package_read(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    let id = id_of(data, "id");
    let pkg = ctx.package_row(&id).await?.ok_or_else(|| not_found(""))?;
    if authz::can_read_package(ctx, &pkg).await? {
        Ok(())
    } else {
        Err(deny(ctx, &format!("read package {id}")))
    }
}

/// `resource_show`: the caller must be able to read the resource's dataset (`package_id`, or
/// the dataset of the resource `id`). The refusal names the resource.
async fn resource_read(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    let id = id_of(data, "id");
    let package = match data.get("package_id").and_then(Value::as_str) {
        Some(p) => p.to_string(),
        None => q::active_resource_package_id(ctx.db().await?, &id)
            .await?
            .ok_or_else(|| not_found("Resource was not found."))?,
    };
    let pkg = ctx
        .package_row(&package)
        .await?
        .ok_or_else(|| not_found(""))?;
    if authz::can_read_package(ctx, &pkg).await? {
        Ok(())
    } else {
        Err(deny(ctx, &format!("read resource {id}")))
    }
}

async fn group_read(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    let id = id_of(data, "id");
    let g = ctx.group_row(&id).await?.ok_or_else(|| not_found(""))?;
    let wants_users = truthy(data.get("include_users"))
        || data.get("object_type").and_then(Value::as_str) == Some("user");
    let needs_read =
        g.state != "active" || (wants_users && !ctx.config().catalog.auth.public_user_details);
    if !needs_read || authz::has_permission(ctx, &g.id, "read").await? {
        Ok(())
    } else {
        Err(deny(ctx, &format!("read group {}", g.id)))
    }
}

async fn user_read(ctx: &mut ActionContext, _: &Params) -> CkanResult<()> {
    if ctx.config().catalog.auth.public_user_details || ctx.user.is_some() {
        Ok(())
    } else {
        Err(not_authorized("Not authorized to see this user"))
    }
}

async fn user_list_check(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    if data.get("email").is_some_and(|v| !v.is_null()) {
        return Err(not_authorized("Only sysadmins may filter users by email"));
    }
    user_read(ctx, data).await
}

/// CKAN's first condition of `package_create`: may this caller create datasets at all?
async fn may_create_dataset(ctx: &mut ActionContext) -> CkanResult<bool> {
    let a = ctx.config().catalog.auth.clone();
    if ctx.user.is_none() {
        return Ok(a.anon_create_dataset
            && a.create_dataset_if_not_in_organization
            && a.create_unowned_dataset);
    }
    if a.create_dataset_if_not_in_organization && a.create_unowned_dataset {
        return Ok(true);
    }
    authz::has_permission_for_some_org(ctx, "create_dataset").await
}

/// `manage_group` on every group listed, except those the dataset is already in (`current`):
/// CKAN checks only the groups an update adds.
async fn check_groups(
    ctx: &mut ActionContext,
    data: &Params,
    current: &[String],
) -> CkanResult<()> {
    for g in data
        .get("groups")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let r = g
            .get("id")
            .or_else(|| g.get("name"))
            .and_then(Value::as_str)
            .or(g.as_str())
            .unwrap_or_default();
        let Some(group) = ctx.group_row(r).await? else {
            return Err(not_found("Group was not found."));
        };
        if current.contains(&group.id) {
            continue;
        }
        if !authz::has_permission(ctx, &group.id, "manage_group").await? {
            return Err(deny(ctx, &format!("edit group {}", group.id)));
        }
    }
    Ok(())
}

async fn package_create_check(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    let owner = data
        .get("owner_org")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    match owner {
        Some(org) => {
            let g = ctx.group_row(&org).await?;
            // An unknown organization is the validator's to report.
            if let Some(g) = g {
                if !authz::has_permission(ctx, &g.id, "create_dataset").await? {
                    return Err(not_authorized(format!(
                        "User {} not authorized to add dataset to this organization",
                        ctx.user_name()
                    )));
                }
            }
        }
        None => {
            if !may_create_dataset(ctx).await? {
                return Err(deny(ctx, "create package"));
            }
        }
    }
    check_groups(ctx, data, &[]).await
}

async fn can_update_package(ctx: &mut ActionContext, id: &str) -> CkanResult<bool> {
    let pkg = ctx.package_row(id).await?.ok_or_else(|| not_found(""))?;
    if let Some(uid) = ctx.user_id().map(str::to_string) {
        if ctx.config().catalog.auth.allow_dataset_collaborators {
            let collabs = q::user_collaborations(ctx.db().await?, &uid).await?;
            if collabs
                .iter()
                .any(|(p, c)| *p == pkg.id && (c == "editor" || c == "admin"))
            {
                return Ok(true);
            }
        }
    }
    match &pkg.owner_org {
        Some(org) => authz::has_permission(ctx, org, "update_dataset").await,
        None => may_create_dataset(ctx).await,
    }
}

async fn package_update_check(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    let id = id_of(data, "id");
    if !can_update_package(ctx, &id).await? {
        return Err(deny(ctx, &format!("edit package {id}")));
    }
    let current = q::package_group_ids(ctx.db().await?, &id).await?;
    check_groups(ctx, data, &current).await
}

async fn resource_write(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    let id = id_of(data, "package_id");
    if can_update_package(ctx, &id).await? {
        Ok(())
    } else {
        Err(deny(ctx, &format!("edit package {id}")))
    }
}

async fn manage_collaborators(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    let id = id_of(data, "id");
    let pkg = ctx
        .package_row(&id)
        .await?
        .ok_or_else(|| not_found("Package not found"))?;
    let uid = ctx.user_id().unwrap_or_default().to_string();
    let a = ctx.config().catalog.auth.clone();
    let allowed = match &pkg.owner_org {
        Some(org) => authz::has_permission(ctx, org, "membership").await?,
        None => {
            a.create_unowned_dataset
                && a.create_dataset_if_not_in_organization
                && pkg.creator_user_id.as_deref() == Some(uid.as_str())
        }
    };
    let admin_collab = a.allow_admin_collaborators
        && q::user_collaborations(ctx.db().await?, &uid)
            .await?
            .iter()
            .any(|(p, c)| *p == pkg.id && c == "admin");
    if allowed || admin_collab {
        Ok(())
    } else {
        Err(deny(
            ctx,
            &format!("manage collaborators of dataset {}", pkg.id),
        ))
    }
}

async fn self_only_collab(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    if ctx.user_id() == Some(id_of(data, "id").as_str()) {
        Ok(())
    } else {
        Err(not_authorized("Not allowed to retrieve collaborators"))
    }
}

async fn group_create_check(ctx: &mut ActionContext, _: &Params) -> CkanResult<()> {
    if ctx.config().catalog.auth.user_create_groups {
        Ok(())
    } else {
        Err(deny(ctx, "create groups"))
    }
}

async fn organization_create_check(ctx: &mut ActionContext, _: &Params) -> CkanResult<()> {
    if ctx.config().catalog.auth.user_create_organizations {
        Ok(())
    } else {
        Err(deny(ctx, "create organizations"))
    }
}

async fn group_admin(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    let id = id_of(data, "id");
    if authz::has_permission(ctx, &id, "update").await? {
        Ok(())
    } else {
        Err(deny(ctx, &format!("edit group {id}")))
    }
}

async fn group_delete_check(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    if !ctx.config().catalog.auth.user_delete_groups {
        return Err(deny(ctx, "delete groups"));
    }
    let id = id_of(data, "id");
    if authz::has_permission(ctx, &id, "delete").await? {
        Ok(())
    } else {
        Err(deny(ctx, &format!("delete group {id}")))
    }
}

async fn organization_delete_check(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    if !ctx.config().catalog.auth.user_delete_organizations {
        return Err(deny(ctx, "delete organizations"));
    }
    let id = id_of(data, "id");
    if authz::has_permission(ctx, &id, "delete").await? {
        Ok(())
    } else {
        Err(deny(ctx, &format!("delete organization {id}")))
    }
}

async fn member_write(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    let id = id_of(data, "id");
    let g = ctx
        .group_row(&id)
        .await?
        .ok_or_else(|| not_found("Group was not found."))?;
    let perm = if !g.is_organization
        && data.get("object_type").and_then(Value::as_str) == Some("package")
    {
        "manage_group"
    } else {
        "update"
    };
    if authz::has_permission(ctx, &g.id, perm).await? {
        Ok(())
    } else {
        Err(deny(ctx, &format!("edit group {}", g.id)))
    }
}

async fn group_membership(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    let id = id_of(data, "id");
    if authz::has_permission(ctx, &id, "membership").await? {
        Ok(())
    } else {
        Err(deny(ctx, &format!("edit group {id}")))
    }
}

/// CKAN's `user_invite` auth: `group_member_create`'s on `group_id`, with its message.
async fn invite_check(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    // `group_id` is an id or a name, as for every member action: permissions are by id.
    let given = id_of(data, "group_id");
    let id = match ctx.group_row(&given).await? {
        Some(g) => g.id,
        None => given,
    };
    if authz::has_permission(ctx, &id, "membership").await? {
        Ok(())
    } else {
        Err(deny(ctx, "add members"))
    }
}

async fn bulk_check(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    let id = id_of(data, "org_id");
    if authz::has_permission(ctx, &id, "update").await? {
        Ok(())
    } else {
        Err(deny(ctx, &format!("edit organization {id}")))
    }
}

async fn user_create_check(ctx: &mut ActionContext, _: &Params) -> CkanResult<()> {
    if ctx.config().catalog.auth.create_user_via_api {
        Ok(())
    } else {
        Err(deny(ctx, "create users"))
    }
}

async fn user_self(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    let id = id_of(data, "id");
    if ctx.user_id() == Some(id.as_str()) {
        Ok(())
    } else {
        Err(deny(ctx, &format!("edit user {id}")))
    }
}

async fn token_owner_user(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    if ctx.user_id() == Some(id_of(data, "user").as_str()) {
        Ok(())
    } else {
        Err(deny(ctx, "create tokens for other users"))
    }
}

async fn token_list_check(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    let r = id_of(data, "user_id");
    let me = ctx.user.clone();
    match me {
        Some(u) if u.id == r || u.name == r => Ok(()),
        _ => Err(deny(ctx, "list tokens of other users")),
    }
}

async fn token_revoke_check(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    let jti = id_of(data, "jti");
    match q::api_token_owner(ctx.db().await?, &jti).await? {
        Some(uid) if ctx.user_id() == Some(uid.as_str()) => Ok(()),
        _ => Err(deny(ctx, "revoke this token")),
    }
}
