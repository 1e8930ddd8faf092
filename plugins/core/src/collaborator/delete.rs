use catalog_framework::prelude::*;

use super::collaborator_target;

pub async fn package_collaborator_delete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let (pkg, user) =
        collaborator_target(ctx, &p, "package_collaborator_delete", "Package not found").await?;
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
