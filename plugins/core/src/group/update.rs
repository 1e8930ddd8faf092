use catalog_framework::params::req_str;
use catalog_framework::prelude::*;
use catalog_framework::store;
use catalog_framework::validators::optional_text;

use super::{
    apply_users_and_parents, emit_group, extras_map, group_dict, group_dict_params, group_write,
    kind, load_group, ShowOpts,
};

async fn update(
    ctx: &mut ActionContext,
    p: Params,
    is_org: bool,
    merge: bool,
) -> CkanResult<Value> {
    let id = req_str(&p, "id")?;
    let g = ctx
        .group_for_update(&id)
        .await?
        .filter(|g| g.is_organization == is_org)
        .ok_or_else(|| not_found("That group name or ID does not exist."))?;
    let mut auth = p.clone();
    auth.insert("id".into(), json!(g.id));
    ctx.check_access(&format!("{}_update", kind(is_org)), &auth)
        .await?;
    let max = ctx.config().catalog.max_field_chars;
    let mut errs = ValidationBuilder::default();
    // The state changes through group_delete only: an update may repeat the current state or
    // `active`, nothing else.
    let allowed: &[&str] = if g.state == "active" {
        &["active"]
    } else {
        &[g.state.as_str(), "active"]
    };
    catalog_framework::validators::check_state(p.get("state"), allowed, &mut errs);
    if let Some(t) = p.get("type").and_then(Value::as_str) {
        if t != g.group_type {
            errs.set("type", json!("Type cannot be updated"));
        }
    }
    let name = match p.get("name") {
        Some(v) if !v.is_null() => {
            catalog_framework::validators::check_name(v, &mut errs, "name");
            let n = v.as_str().unwrap_or_default().to_string();
            if n != g.name && ctx.group_row(&n).await?.is_some() {
                errs.push("name", "Group name already exists in database");
            }
            n
        }
        _ => g.name.clone(),
    };
    let pick = |k: &str, cur: &Option<String>, errs: &mut ValidationBuilder| -> Option<String> {
        // Absent group columns stay as they are on update and patch alike.
        if p.contains_key(k) {
            optional_text(&p, k, errs, max)
        } else {
            cur.clone()
        }
    };
    let title = pick("title", &g.title, &mut errs);
    let description = pick("description", &g.description, &mut errs);
    let image_url = pick("image_url", &g.image_url, &mut errs);
    let extras = if p.contains_key("extras") {
        extras_map(&p, &mut errs, ctx.is_sysadmin())
    } else if merge {
        g.extras.clone()
    } else {
        Map::new()
    };
    errs.finish()?;
    let row = group_write(&name, &title, &description, &image_url, &extras);
    store::update_group(ctx.db().await?, &g.id, &row).await?;
    let old = g;
    let g = load_group(ctx, &old.id, is_org).await?;
    apply_users_and_parents(ctx, &g, &p).await?;
    emit_group(ctx, Change::Updated, Some(&old), Some(&g));
    group_dict(ctx, &g, &ShowOpts::AFTER_WRITE).await
}

group_dict_params! {
    /// Update a group.
    ///
    /// The parameters are the group dict with its `id` or `name`; absent fields are cleared.
    GroupUpdateParams {
        /// the id or name of the group or organization (else `name` names it)
        id: crate::InDict<String>,
    }
}

pub(crate) async fn group_update(
    ctx: &mut ActionContext,
    p: GroupUpdateParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    update(ctx, p, false, false).await
}

group_dict_params! {
    /// Update an organization.
    ///
    /// The parameters are the organization dict with its `id` or `name`; absent fields are
    /// cleared.
    OrganizationUpdateParams {
        /// the id or name of the group or organization (else `name` names it)
        id: crate::InDict<String>,
    }
}

pub(crate) async fn organization_update(
    ctx: &mut ActionContext,
    p: OrganizationUpdateParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    update(ctx, p, true, false).await
}

group_dict_params! {
    /// Patch a group.
    ///
    /// The parameters are the group's `id` or `name` and the fields to change.
    GroupPatchParams {
        /// the id or name of the group or organization (else `name` names it)
        id: crate::InDict<String>,
    }
}

pub(crate) async fn group_patch(ctx: &mut ActionContext, p: GroupPatchParams) -> CkanResult<Value> {
    let p = p.__extras;
    update(ctx, p, false, true).await
}

group_dict_params! {
    /// Patch an organization.
    ///
    /// The parameters are the organization's `id` or `name` and the fields to change.
    OrganizationPatchParams {
        /// the id or name of the group or organization (else `name` names it)
        id: crate::InDict<String>,
    }
}

pub(crate) async fn organization_patch(
    ctx: &mut ActionContext,
    p: OrganizationPatchParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    update(ctx, p, true, true).await
}
