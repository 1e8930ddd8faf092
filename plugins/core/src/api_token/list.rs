use catalog_framework::prelude::*;
use catalog_framework::store as q;

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
    let rows = q::user_api_tokens(ctx.db().await?, &u.id).await?;
    Ok(Value::Array(
        rows.iter()
            .map(|r| json!({"created_at": r.created_at, "id": r.id, "last_access": r.last_access, "name": r.name, "user_id": r.user_id}))
            .collect(),
    ))
}
