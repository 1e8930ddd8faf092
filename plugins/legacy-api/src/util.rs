//! The Util API (spec §10.4): autocompletes, markdown, slugs, munging, status.

use axum::Router;
use catalog_framework::prelude::*;

pub fn routes() -> Router<AppState> {
    Router::new()
}
