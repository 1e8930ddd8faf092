//! API tokens (`api_token_*`). Only a token's hash is stored.

use catalog_framework::authz;
use catalog_framework::prelude::*;

pub(crate) mod create;
pub(crate) mod list;
pub(crate) mod revoke;

/// Creates a token row; returns `(id, token)`. Only the token's hash is stored.
pub(crate) async fn insert_token(
    ctx: &mut ActionContext,
    user_id: &str,
    name: &str,
) -> CkanResult<(String, String)> {
    let (id, token) = authz::new_token();
    sqlx::query("INSERT INTO api_token (id, user_id, name, token_hash, created_at) VALUES ($1, $2, $3, $4, $5)")
        .bind(&id)
        .bind(user_id)
        .bind(name)
        .bind(authz::hash_token(&token))
        .bind(now_iso())
        .execute(ctx.db().await?)
        .await?;
    Ok((id, token))
}
