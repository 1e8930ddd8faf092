use catalog_framework::prelude::*;
use catalog_framework::store as q;

action_params! {
    /// Delete a user. Sysadmins only.
    pub struct UserDeleteParams {
        /// the id or name of the user
        id: String,
    }
}

pub(crate) async fn user_delete(ctx: &mut ActionContext, p: UserDeleteParams) -> CkanResult<Value> {
    ctx.check_access("user_delete", &p.to_params()).await?;
    let r = p.id;
    let u = ctx
        .user_for_update(&r)
        .await?
        .ok_or_else(|| not_found(format!("User \"{r}\" was not found.")))?;
    q::mark_user_deleted(ctx.db().await?, &u.id).await?;
    if ctx.wants_events() {
        let before = serde_json::to_value(&u)?;
        let mut after = before.clone();
        after["state"] = json!("deleted");
        ctx.emit(
            Entity::User,
            Change::Deleted,
            &u.id,
            Some(before),
            Some(after),
        );
    }
    Ok(Value::Null)
}
