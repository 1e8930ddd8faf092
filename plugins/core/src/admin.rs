//! Administration entry points for the CLI and embedders, run through the actions themselves.

use catalog_framework::prelude::*;

async fn run(app: &AppState, action: &str, params: Value) -> anyhow::Result<Value> {
    let mut ctx = ActionContext::new(app.clone(), None);
    ctx.ignore_auth = true;
    let params = params.as_object().cloned().unwrap_or_default();
    ctx.run_top(action, params)
        .await
        .map_err(|e| anyhow::anyhow!("{action} failed: {}", e.to_error_object()))
}

/// Creates a user (a sysadmin when `sysadmin`), returning the user dict.
pub async fn create_user(
    app: &AppState,
    name: &str,
    email: &str,
    password: &str,
    sysadmin: bool,
) -> anyhow::Result<Value> {
    run(
        app,
        "user_create",
        json!({"name": name, "email": email, "password": password, "sysadmin": sysadmin}),
    )
    .await
}

/// Creates an API token for a user, returning the token string.
pub async fn create_token(app: &AppState, user: &str, token_name: &str) -> anyhow::Result<String> {
    let r = run(
        app,
        "api_token_create",
        json!({"user": user, "name": token_name}),
    )
    .await?;
    r["token"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| anyhow::anyhow!("no token returned"))
}
