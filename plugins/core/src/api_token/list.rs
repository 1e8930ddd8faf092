use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::Later;

use crate::shapes::{LaterExt, Scalar};

action_params! {
    /// Return a user's API tokens, oldest first.
    pub struct ApiTokenListParams {
        /// the user's id or name
        user_id: Later<Scalar>,
        /// the user's id or name, when `user_id` is not given (CKAN before 2.10)
        user: Later<Scalar>,
    }
}

pub(crate) async fn api_token_list(
    ctx: &mut ActionContext,
    p: ApiTokenListParams,
) -> CkanResult<Value> {
    let r = p
        .user_id
        .value()
        .or_else(|| p.user.value())
        .map(|s| s.0)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| missing("user_id"))?;
    let mut auth = p.to_params();
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
