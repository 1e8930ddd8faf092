use catalog_framework::prelude::*;

action_params! {
    /// Return a user's API tokens, oldest first.
    pub struct ApiTokenListParams {}
}

pub async fn api_token_list(ctx: &mut ActionContext, p: ApiTokenListParams) -> CkanResult<Value> {
    let p = p.__extras;
    let r = opt_str(&p, "user_id")
        .or_else(|| opt_str(&p, "user"))
        .filter(|s| !s.is_empty())
        .ok_or_else(|| missing("user_id"))?;
    let mut auth = p.clone();
    auth.insert("user_id".into(), json!(r));
    ctx.check_access("api_token_list", &auth).await?;
    let u = ctx
        .user_row(&r)
        .await?
        .ok_or_else(|| not_found("User not found"))?;
    let rows = sqlx::query("SELECT id, name, user_id, created_at, last_access FROM api_token WHERE user_id = $1 ORDER BY created_at, id")
        .bind(&u.id)
        .fetch_all(ctx.db().await?)
        .await?;
    Ok(Value::Array(
        rows.iter()
            .map(|r| json!({"created_at": r.s("created_at"), "id": r.s("id"), "last_access": r.os("last_access"), "name": r.s("name"), "user_id": r.s("user_id")}))
            .collect(),
    ))
}
