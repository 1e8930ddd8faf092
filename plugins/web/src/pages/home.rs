//! `/` (and `/de/` …): the home page.

use axum::extract::{OriginalUri, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use catalog_framework::prelude::*;

use super::alternates;
use crate::render::{page, Visit};
use crate::visit::{params, visit};

pub(crate) async fn home_prefixed(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    home(&app, &visit, &headers).await
}

/// `/`: the site's title, intro and logo, a search box, counts, recent datasets, the largest
/// organizations and groups.
pub(crate) async fn home(app: &AppState, visit: &Visit, headers: &HeaderMap) -> Response {
    let mut ctx = visit.context(app);
    let recent = ctx
        .call(
            "package_search",
            params(json!({"rows": 5, "sort": "metadata_modified desc", "include_private": true})),
        )
        .await
        .unwrap_or_else(|_| json!({"count": 0, "results": []}));
    let orgs = ctx
        .call(
            "organization_list",
            params(json!({"all_fields": true, "sort": "package_count", "limit": 3})),
        )
        .await
        .unwrap_or_else(|_| json!([]));
    let groups = ctx
        .call(
            "group_list",
            params(json!({"all_fields": true, "sort": "package_count", "limit": 3})),
        )
        .await
        .unwrap_or_else(|_| json!([]));
    let org_count = ctx
        .call("organization_list", Params::new())
        .await
        .ok()
        .and_then(|v| v.as_array().map(Vec::len))
        .unwrap_or_default();
    let group_count = ctx
        .call("group_list", Params::new())
        .await
        .ok()
        .and_then(|v| v.as_array().map(Vec::len))
        .unwrap_or_default();
    page(
        app,
        visit,
        headers,
        "home.html",
        StatusCode::OK,
        json!({
            "recent": recent["results"],
            "dataset_count": recent["count"],
            "organizations": orgs,
            "groups": groups,
            "organization_count": org_count,
            "group_count": group_count,
            "alternates": alternates(app, "/", "/", ""),
        }),
        None,
    )
}
