use catalog_framework::params::decode;
use catalog_framework::prelude::*;
use catalog_framework::store as q;

use super::collaborator_target;

action_params! {
    /// Remove a collaborator from a dataset.
    pub struct PackageCollaboratorDeleteParams {
        /// the id or name of the dataset
        id: String,
        /// the id or name of the user
        user_id: Option<Value>,
    }
}

pub(crate) async fn package_collaborator_delete(
    ctx: &mut ActionContext,
    p: PackageCollaboratorDeleteParams,
) -> CkanResult<Value> {
    let (pkg, user) = collaborator_target(
        ctx,
        (&p.id, p.user_id.as_ref()),
        p.to_params(),
        "package_collaborator_delete",
        "Package not found",
    )
    .await?;
    let user_id: String = decode("user_id", p.user_id.as_ref())?;
    if !q::delete_collaborator(ctx.db().await?, &pkg.id, &user.id).await? {
        return Err(not_found(format!(
            "User {user_id} is not a collaborator on this package"
        )));
    }
    Ok(Value::Null)
}
