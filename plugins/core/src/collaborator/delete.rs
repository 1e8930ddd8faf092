use catalog_framework::prelude::*;

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
    let done = sqlx::query("DELETE FROM collaborator WHERE package_id = $1 AND user_id = $2")
        .bind(&pkg.id)
        .bind(&user.id)
        .execute(ctx.db().await?)
        .await?;
    if done.rows_affected() == 0 {
        return Err(not_found(format!(
            "User {user_id} is not a collaborator on this package"
        )));
    }
    Ok(Value::Null)
}
