use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::Later;

use super::collaborator_target;

action_params! {
    /// Remove a collaborator from a dataset.
    pub struct PackageCollaboratorDeleteParams {
        /// the id or name of the dataset
        id: String,
        /// the id or name of the user
        user_id: Later<String>,
    }
}

pub(crate) async fn package_collaborator_delete(
    ctx: &mut ActionContext,
    p: PackageCollaboratorDeleteParams,
) -> CkanResult<Value> {
    let (pkg, user) = collaborator_target(
        ctx,
        (&p.id, &p.user_id),
        p.to_params(),
        "package_collaborator_delete",
        "Package not found",
    )
    .await?;
    let user_id = p.user_id.require()?;
    if !q::delete_collaborator(ctx.db().await?, &pkg.id, &user.id).await? {
        return Err(not_found(format!(
            "User {user_id} is not a collaborator on this package"
        )));
    }
    Ok(Value::Null)
}
