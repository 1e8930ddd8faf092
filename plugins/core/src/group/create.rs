use catalog_framework::prelude::*;
use catalog_framework::store;
use catalog_framework::store::time::now_iso;
use catalog_framework::validators::optional_text;

use super::{
    apply_users_and_parents, emit_group, extras_map, group_dict, group_dict_params, group_write,
    kind, load_group, ShowOpts,
};
use crate::ids::new_id;
use crate::membership::add_member;

async fn create(ctx: &mut ActionContext, p: Params, is_org: bool) -> CkanResult<Value> {
    let action = format!("{}_create", kind(is_org));
    ctx.check_access(&action, &p).await?;
    let max = ctx.config().catalog.max_field_chars;
    let mut errs = ValidationBuilder::default();
    let name = catalog_framework::validators::required_name(&p, &mut errs);
    if !name.is_empty() && ctx.group_row(&name).await?.is_some_and(|g| g.name == name) {
        errs.push("name", "Group name already exists in database");
    }
    catalog_framework::validators::check_type(p.get("type"), &mut errs);
    // A group is created active (group_delete deletes it), or deleted by a sysadmin (CKAN's
    // `ignore_not_group_admin` keeps a sysadmin's state); any other state is refused rather
    // than silently dropped.
    let states: &[&str] = if ctx.is_sysadmin() {
        &["active", "deleted"]
    } else {
        &["active"]
    };
    catalog_framework::validators::check_state(p.get("state"), states, &mut errs);
    let state = p
        .get("state")
        .and_then(Value::as_str)
        .filter(|s| states.contains(s))
        .unwrap_or("active")
        .to_string();
    let group_type = match p.get("type").and_then(Value::as_str) {
        Some(t) if !t.is_empty() => t.to_string(),
        _ => kind(is_org).to_string(),
    };
    if !is_org && group_type == "organization" {
        errs.push("type", "Use organization_create to create organizations");
    }
    let id = match p.get("id").and_then(Value::as_str) {
        Some(given) if ctx.is_sysadmin() => {
            let norm = catalog_framework::validators::uuid_parse(given);
            match norm {
                None => {
                    errs.push("id", "Invalid id provided");
                    new_id()
                }
                Some(n) => {
                    if ctx.group_row(&n).await?.is_some() {
                        errs.push("id", "Id already exists");
                    }
                    n
                }
            }
        }
        Some(_) => {
            errs.push("id", "The input field id was not expected.");
            new_id()
        }
        None => new_id(),
    };
    // CKAN's Group model defaults these three to an empty string, so a group created without
    // them shows `""` (and `image_display_url` `""`), not a missing key.
    let mut text = |key: &str| optional_text(&p, key, &mut errs, max).or(Some(String::new()));
    let title = text("title");
    let description = text("description");
    let image_url = text("image_url");
    let extras = extras_map(&p, &mut errs, ctx.is_sysadmin());
    errs.finish()?;
    let row = group_write(&name, &title, &description, &image_url, &extras);
    store::insert_group(
        ctx.db().await?,
        &id,
        &group_type,
        is_org,
        &state,
        &now_iso(),
        &row,
    )
    .await?;
    let g = load_group(ctx, &id, is_org).await?;
    // The group first, then its memberships, in the order of the events.
    emit_group(ctx, Change::Created, None, Some(&g));
    apply_users_and_parents(ctx, &g, &p).await?;
    if let Some(uid) = ctx.user_id().map(str::to_string) {
        add_member(ctx, &id, "user", &uid, "admin").await?;
    }
    group_dict(ctx, &g, &ShowOpts::AFTER_WRITE).await
}

group_dict_params! {
    /// Create a group. The creator becomes its admin.
    ///
    /// The parameters are the group dict (`name`, `title`, `description`, `image_url`, `extras`,
    /// `users`, `groups` …).
    GroupCreateParams {
        /// the new group's or organization's id (a UUID; sysadmins only)
        id: crate::InDict<String>,
    }
}

pub(crate) async fn group_create(
    ctx: &mut ActionContext,
    p: GroupCreateParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    create(ctx, p, false).await
}

group_dict_params! {
    /// Create an organization. The creator becomes its admin.
    ///
    /// The parameters are the organization dict (`name`, `title`, `description`, `image_url`,
    /// `extras`, `users` …).
    OrganizationCreateParams {
        /// the new group's or organization's id (a UUID; sysadmins only)
        id: crate::InDict<String>,
    }
}

pub(crate) async fn organization_create(
    ctx: &mut ActionContext,
    p: OrganizationCreateParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    create(ctx, p, true).await
}
