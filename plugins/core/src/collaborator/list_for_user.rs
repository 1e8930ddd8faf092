use catalog_framework::prelude::*;
use catalog_framework::store as q;

use super::enabled;

action_params! {
    /// Return the datasets a user collaborates on.
    pub struct PackageCollaboratorListForUserParams {}
}

pub async fn package_collaborator_list_for_user(
    ctx: &mut ActionContext,
    p: PackageCollaboratorListForUserParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    enabled(ctx)?;
    let id = req_str(&p, "id")?;
    let user = ctx.user_row(&id).await?;
    let Some(user) = user else {
        return Err(not_authorized("Not allowed to retrieve collaborators"));
    };
    let mut auth = p.clone();
    auth.insert("id".into(), json!(user.id));
    ctx.check_access("package_collaborator_list_for_user", &auth)
        .await?;
    let capacity = opt_str(&p, "capacity");
    let rows = q::user_collaboration_rows(ctx.db().await?, &user.id).await?;
    Ok(Value::Array(
        rows.iter()
            .filter(|r| capacity.as_ref().is_none_or(|c| *c == r.capacity))
            .map(|r| json!({"package_id": r.package_id, "capacity": r.capacity, "modified": r.modified}))
            .collect(),
    ))
}
