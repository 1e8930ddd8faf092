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

/// Runs an action as the CLI does (CKAN's `{"ignore_auth": True}`), keeping its error for the
/// caller to tell apart (a `Not Found Error` …).
pub async fn run_action(app: &AppState, action: &str, params: Value) -> CkanResult<Value> {
    let mut ctx = ActionContext::new(app.clone(), None);
    ctx.ignore_auth = true;
    ctx.run_top(action, params.as_object().cloned().unwrap_or_default())
        .await
}

/// Enqueues CKAN's test job (`A test job`) on a queue, pausing `sleep_secs` when it runs;
/// returns the job's id.
pub async fn enqueue_test_job(app: &AppState, queue: &str, sleep_secs: u64) -> CkanResult<String> {
    crate::job::test_job::enqueue(app, queue, sleep_secs).await
}
