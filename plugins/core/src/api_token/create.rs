use catalog_framework::prelude::*;

use super::insert_token;

action_params! {
    /// Create an API token for a user. The token is shown only once.
    pub struct ApiTokenCreateParams {}
}

pub async fn api_token_create(
    ctx: &mut ActionContext,
    p: ApiTokenCreateParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    let mut errs = ValidationBuilder::default();
    for k in ["user", "name"] {
        if opt_str(&p, k).is_none_or(|s| s.is_empty()) {
            errs.push(k, "Missing value");
        }
    }
    errs.finish()?;
    let (user, name) = (req_str(&p, "user")?, req_str(&p, "name")?);
    let u = ctx
        .user_row(&user)
        .await?
        .ok_or_else(|| not_found("User not found"))?;
    let mut auth = p.clone();
    auth.insert("user".into(), json!(u.id));
    ctx.check_access("api_token_create", &auth).await?;
    let (id, token) = insert_token(ctx, &u.id, &name).await?;
    Ok(json!({"token": token, "id": id}))
}
