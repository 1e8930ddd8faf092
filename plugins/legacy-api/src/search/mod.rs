//! The Search API (spec §10.3): `/api[/1|/2|/3]/search/<dataset|package|resource|revision>`
//! and `/api[/1|/2]/tag_counts`, as CKAN 2.8's `ApiController.search` answered them, over the
//! Action API's `package_search`, `resource_search` and `revision_list` (so authorization and
//! visibility are theirs; private datasets are never in these results).
//!
//! This file holds the routes and the dispatch by register; reading the parameters is in
//! `params.rs`, the v1/v2 → Solr translation in `solr.rs`, the shapes of answers and failures
//! in `answer.rs`, and each search in its own file (`dataset.rs`, `resource.rs`,
//! `revision.rs`, `tag_counts.rs`).

use axum::extract::{Request, State};
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use catalog_framework::prelude::*;
use catalog_framework::web::path_after;

use crate::common::{bad_request, not_found_error, LegacyRequest};

mod answer;
mod dataset;
mod params;
mod resource;
mod revision;
mod solr;
mod tag_counts;

pub(crate) use params::{pairs_to_params, request_pairs};

use dataset::dataset_search;
use params::search_params;
use resource::resource_search;
use revision::revision_search;
use tag_counts::tag_counts;

pub(crate) fn routes() -> Router<AppState> {
    let mut r = Router::new();
    for prefix in ["/api", "/api/1", "/api/2", "/api/3"] {
        r = r.route(
            &format!("{prefix}/search/{{register}}"),
            get(search).post(search),
        );
    }
    for prefix in ["/api", "/api/1", "/api/2"] {
        r = r.route(&format!("{prefix}/tag_counts"), get(tag_counts));
    }
    r
}

/// One search, by the register the path names (`dataset`, `package`, `resource`, `revision`).
async fn search(State(app): State<AppState>, req: Request) -> Response {
    let register = path_after(req.uri(), "/search/");
    let req = match LegacyRequest::read(app, req).await {
        Ok(r) => r,
        Err(resp) => return resp,
    };
    match register.as_str() {
        "revision" => revision_search(&req).await,
        "dataset" | "package" | "resource" => {
            let params = match search_params(&req) {
                Ok(p) => p,
                Err(msg) => return bad_request(&format!("Could not read parameters: {msg}")),
            };
            if register == "resource" {
                resource_search(&req, params).await
            } else {
                dataset_search(&req, params).await
            }
        }
        other => not_found_error(&format!("Unknown register: {other}")),
    }
}
