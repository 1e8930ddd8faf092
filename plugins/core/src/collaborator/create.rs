use catalog_framework::prelude::*;
use catalog_framework::store as q;

use super::{capacities, collaborator_target};

action_params! {
    /// Make a user a collaborator of a dataset.
    pub struct PackageCollaboratorCreateParams {
        /// the id or name of the dataset
        id: String,
    }
}

pub async fn package_collaborator_create(
    ctx: &mut ActionContext,
    p: PackageCollaboratorCreateParams,
) -> CkanResult<Value> {
    let (id, p) = (p.id, p.__extras);
    req_str(&p, "user_id")?;
    let capacity = req_str(&p, "capacity")?;
    let caps = capacities(ctx);
    if !caps.contains(&capacity.as_str()) {
        return Err(validation_message(format!(
            "Role must be one of \"{}\"",
            caps.join(", ")
        )));
    }
    let (pkg, user) = collaborator_target(
        ctx,
        &id,
        &p,
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
