//! The Model API (spec §10.2) under `/api/rest`, `/api/1/rest` and `/api/2/rest`.

use axum::Router;
use catalog_framework::prelude::*;

pub fn routes() -> Router<AppState> {
    Router::new()
}
