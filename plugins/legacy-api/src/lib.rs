//! CKAN's legacy API, versions 1 and 2 (seed `legacy-api-v1-v2`, spec §10): the Model API under
//! `/api[/1|/2]/rest`, the Search API under `/api[/1|/2|/3]/search` and `/api[/1|/2]/tag_counts`,
//! and the Util API under `/api[/1|/2]/util`. Answers are bare JSON, as CKAN 2.7/2.8 gave them
//! (no envelope; errors as JSON strings, validation errors as the raw dict with 409). Every read
//! and write goes through the Action API's actions and authorization, so activity, search and
//! DCAT see what the legacy API changes.
//!
//! # Where things live
//!
//! - `common.rs`: what every endpoint shares: the API version, the request, the bare-JSON
//!   answers and errors.
//! - `rest/`: the Model API. `rest/mod.rs` parses the path and dispatches by register;
//!   `rest/shared.rs` holds what the registers share; one file per register (`dataset.rs`,
//!   `group.rs`, `rating.rs`, `relationship.rs`, the smaller ones in `misc.rs`); `refs.rs`
//!   the version's references to datasets and groups.
//! - `search/`: the Search API. `search/mod.rs` holds the routes; `params.rs` reads the
//!   parameters, `solr.rs` translates v1/v2 ones into Solr's, `answer.rs` shapes answers and
//!   failures; one file per search (`dataset.rs`, `resource.rs`, `revision.rs`,
//!   `tag_counts.rs`).
//! - `util.rs`: the Util API.
#![forbid(unsafe_code)]

use axum::Router;
use catalog_framework::migration;
use catalog_framework::prelude::*;

mod common;
mod rest;
mod search;
mod util;

pub use catalog_framework::markdown::render as render_markdown;

/// The plugin: its table (ratings) and its routes.
pub struct LegacyApiPlugin;

const MIGRATIONS: &[Migration] = &[migration!("../migrations", "0001_rating", portable)];

impl Plugin for LegacyApiPlugin {
    fn name(&self) -> &'static str {
        "legacy_api"
    }

    fn migrations(&self) -> &'static [Migration] {
        MIGRATIONS
    }
}

register_plugin!(LegacyApiPlugin);

fn routes() -> Router<AppState> {
    Router::new()
        .merge(rest::routes())
        .merge(search::routes())
        .merge(util::routes())
}

register_routes!("legacy_api", routes);
