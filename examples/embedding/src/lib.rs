#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use catalog_framework::prelude::{ActionContext, AppState};
use serde_json::{json, Map, Value};

/// Where the catalog's routes live in this application. `catalog.site_url` must end with it,
/// so that the URLs the catalog writes (`help`, resource downloads) point here.
pub const CATALOG_PREFIX: &str = "/catalog";

/// This application's router: its own routes, and the whole catalog (the Action API, the
/// `/api` probes and every plugin's routes) nested under [`CATALOG_PREFIX`].
pub fn router(app: AppState) -> Router {
    let catalog = catalog_host::router(app.clone());
    Router::new()
        .route("/hello", get(hello))
        .with_state(app)
        .nest(CATALOG_PREFIX, catalog)
}

/// A route of our own that uses the catalog in-process: it runs `package_list` as an
/// anonymous caller, as the Action API would, without going through HTTP.
async fn hello(State(app): State<AppState>) -> Json<Value> {
    let public = ActionContext::new(app.clone(), None)
        .run_top("package_list", Map::new())
        .await
        .ok()
        .and_then(|names| names.as_array().map(Vec::len))
        .unwrap_or(0);
    Json(json!({
        "message": format!("Hello from {}", app.config.catalog.site_title),
        "public_datasets": public,
        "api": format!("{}/api/3/action", app.config.site_url()),
    }))
}

/// Serves [`router`] on a bound listener until the process ends, with what
/// `catalog_host::serve` adds around its own router: the background task that
/// brings the search index up to changes made by other processes, and the catalog's server
/// with its connection limits and timeouts (`catalog.server.*`, docs/SECURITY.md).
pub async fn serve(app: AppState, listener: tokio::net::TcpListener) -> std::io::Result<()> {
    let sync = catalog_host::spawn_background_sync(app.clone());
    let limits = catalog_host::ServerLimits::from_config(&app.config.catalog.server);
    let result = catalog_host::serve_router(listener, router(app), limits).await;
    sync.abort();
    result
}
