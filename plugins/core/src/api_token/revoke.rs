use catalog_framework::authz;
use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::Later;

use crate::shapes::{LaterExt, Scalar};

action_params! {
    /// Revoke an API token (by `token` or `jti`).
    pub struct ApiTokenRevokeParams {
        /// the token to revoke
        token: Later<Scalar>,
        /// the token's id (`jti`), instead of the token
        jti: Later<Scalar>,
    }
}

pub(crate) async fn api_token_revoke(
    ctx: &mut ActionContext,
    p: ApiTokenRevokeParams,
) -> CkanResult<Value> {
    let jti = match (p.jti.value(), p.token.value()) {
        (Some(Scalar(j)), _) if !j.is_empty() => j,
        (_, Some(Scalar(t))) if !t.is_empty() => match authz::token_id(&t) {
            Some(id) => id.to_string(),
            None => return Err(not_authorized("")),
        },
        _ => return Err(missing("token")),
    };
    let mut auth = p.to_params();
    auth.insert("jti".into(), json!(jti));
    ctx.check_access("api_token_revoke", &auth).await?;
    q::delete_api_token(ctx.db().await?, &jti).await?;
    Ok(Value::Null)
}
