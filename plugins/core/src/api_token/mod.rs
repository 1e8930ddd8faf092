//! API tokens (`api_token_*`). Only a token's hash is stored.

use catalog_framework::authz;
use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::store::time::now_iso;

pub(crate) mod create;
pub(crate) mod list;
pub(crate) mod revoke;

/// Creates a token row; returns `(id, token)`. Only the token's hash is stored.
pub(crate) async fn insert_token(
    ctx: &mut ActionContext,
    user_id: &str,
    name: &str,
    expires_at: Option<&str>,
) -> CkanResult<(String, String)> {
    let (id, token) = authz::new_token();
    let hash = authz::hash_token(&token);
    q::insert_api_token(
        ctx.db().await?,
        &id,
        user_id,
        name,
        &hash,
        &now_iso(),
        expires_at,
    )
    .await?;
    Ok((id, token))
}
