use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::Later;

use super::{capacity_filter, enabled};
use crate::shapes::Scalar;

action_params! {
    /// Return the datasets a user collaborates on.
    pub struct PackageCollaboratorListForUserParams {
        /// the id or name of the user (required; checked once the feature is known enabled)
        id: Later<String>,
        /// only the datasets where the user has this capacity
        capacity: Later<Scalar>,
    }
}

pub(crate) async fn package_collaborator_list_for_user(
    ctx: &mut ActionContext,
    p: PackageCollaboratorListForUserParams,
) -> CkanResult<Value> {
    enabled(ctx)?;
    let id = p.id.require()?;
    let user = ctx.user_row(&id).await?;
    let Some(user) = user else {
        return Err(not_authorized("Not allowed to retrieve collaborators"));
    };
    let mut auth = p.to_params();
    auth.insert("id".into(), json!(user.id));
    ctx.check_access("package_collaborator_list_for_user", &auth)
        .await?;
    let capacity = capacity_filter(ctx, &p.capacity)?;
    let rows = q::user_collaboration_rows(ctx.db().await?, &user.id).await?;
    Ok(Value::Array(
        rows.iter()
            .filter(|r| capacity.as_ref().is_none_or(|c| *c == r.capacity))
            .map(|r| json!({"package_id": r.package_id, "capacity": r.capacity, "modified": r.modified}))
            .collect(),
    ))
}
