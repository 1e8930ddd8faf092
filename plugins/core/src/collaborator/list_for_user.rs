use catalog_framework::prelude::*;

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
    let rows = sqlx::query("SELECT package_id, capacity, modified FROM collaborator WHERE user_id = $1 ORDER BY modified")
        .bind(&user.id)
        .fetch_all(ctx.db().await?)
        .await?;
    Ok(Value::Array(
        rows.iter()
            .filter(|r| capacity.as_ref().is_none_or(|c| *c == r.s("capacity")))
            .map(|r| json!({"package_id": r.s("package_id"), "capacity": r.s("capacity"), "modified": r.s("modified")}))
            .collect(),
    ))
}
