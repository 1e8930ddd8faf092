//! The Search API (spec §10.3): `/api[/1|/2|/3]/search/<dataset|package|resource|revision>`
//! and `/api[/1|/2]/tag_counts`.

use axum::Router;
use catalog_framework::prelude::*;

pub fn routes() -> Router<AppState> {
    Router::new()
}
