use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::store::time::now_iso;
use catalog_framework::typed::Later;

use super::{capacities, collaborator_target};

action_params! {
    /// Make a user a collaborator of a dataset.
    pub struct PackageCollaboratorCreateParams {
        /// the id or name of the dataset
        id: String,
        /// the id or name of the user (required, as is `capacity`: checked one at a time)
        user_id: Later<String>,
        /// `editor` or `member` (or `admin`, when `catalog.auth.allow_admin_collaborators`)
        capacity: Later<String>,
    }
}

pub(crate) async fn package_collaborator_create(
    ctx: &mut ActionContext,
    p: PackageCollaboratorCreateParams,
) -> CkanResult<Value> {
    p.user_id.require()?;
    let capacity = p.capacity.require()?;
    let caps = capacities(ctx);
    if !caps.contains(&capacity.as_str()) {
        return Err(validation_message(format!(
            "Role must be one of \"{}\"",
            caps.join(", ")
        )));
    }
    let (pkg, user) = collaborator_target(
        ctx,
        (&p.id, &p.user_id),
        p.to_params(),
        "package_collaborator_create",
        "Dataset not found",
    )
    .await?;
    let now = now_iso();
    q::upsert_collaborator(ctx.db().await?, &pkg.id, &user.id, &capacity, &now).await?;
    Ok(
        json!({"package_id": pkg.id, "user_id": user.id, "capacity": capacity, "modified": now.replacen('T', " ", 1)}),
    )
}
