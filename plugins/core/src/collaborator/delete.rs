use catalog_framework::prelude::*;
use catalog_framework::store as q;

use super::collaborator_target;

action_params! {
    /// Remove a collaborator from a dataset.
    pub struct PackageCollaboratorDeleteParams {
        /// the id or name of the dataset
        id: String,
    }
}

pub async fn package_collaborator_delete(
    ctx: &mut ActionContext,
    p: PackageCollaboratorDeleteParams,
) -> CkanResult<Value> {
    let (id, p) = (p.id, p.__extras);
    let (pkg, user) = collaborator_target(
        ctx,
        &id,
        &p,
        "package_collaborator_delete",
        "Package not found",
    )
    .await?;
    let user_id = req_str(&p, "user_id")?;
    if !q::delete_collaborator(ctx.db().await?, &pkg.id, &user.id).await? {
        return Err(not_found(format!(
            "User {user_id} is not a collaborator on this package"
        )));
    }
    Ok(Value::Null)
}
