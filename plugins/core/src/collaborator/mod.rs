//! Dataset collaborators (`package_collaborator_*`), behind
//! `catalog.auth.allow_dataset_collaborators`.

use catalog_framework::prelude::*;
use catalog_framework::store::{PackageRow, UserRow};
use catalog_framework::typed::Later;

use crate::shapes::{LaterExt, Scalar};

pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod list;
pub(crate) mod list_for_user;

fn enabled(ctx: &ActionContext) -> CkanResult<()> {
    if ctx.config().catalog.auth.allow_dataset_collaborators {
        Ok(())
    } else {
        Err(validation_message("Dataset collaborators not enabled"))
    }
}

fn capacities(ctx: &ActionContext) -> Vec<&'static str> {
    if ctx.config().catalog.auth.allow_admin_collaborators {
        vec!["admin", "editor", "member"]
    } else {
        vec!["editor", "member"]
    }
}

/// A `capacity` filter of the collaborator lists: none, or one of [`capacities`] (CKAN's
/// message otherwise; an empty one filters nothing, as in CKAN).
fn capacity_filter(ctx: &ActionContext, capacity: &Later<Scalar>) -> CkanResult<Option<String>> {
    let Some(c) = capacity.value().map(|c| c.0).filter(|c| !c.is_empty()) else {
        return Ok(None);
    };
    let caps = capacities(ctx);
    if !caps.contains(&c.as_str()) {
        return Err(validation_message(format!(
            "Capacity must be one of \"{}\"",
            caps.join(", ")
        )));
    }
    Ok(Some(c))
}

/// The dataset (`id`) and the user (`user_id`) a `package_collaborator_create` / `_delete`
/// names, then the caller's access and the feature switch, in CKAN's order. `auth` holds the
/// parameters (the auth function sees them with `id` set to the dataset's id).
async fn collaborator_target(
    ctx: &mut ActionContext,
    (id, user_id): (&str, &Later<String>),
    mut auth: Params,
    action: &str,
    dataset_not_found: &str,
) -> CkanResult<(PackageRow, UserRow)> {
    let user_id = user_id.require()?;
    let pkg = ctx
        .package_row(id)
        .await?
        .ok_or_else(|| not_found(dataset_not_found))?;
    let user = ctx
        .user_row(&user_id)
        .await?
        .ok_or_else(|| not_found("User not found"))?;
    auth.insert("id".into(), json!(pkg.id));
    ctx.check_access(action, &auth).await?;
    enabled(ctx)?;
    Ok((pkg, user))
}
