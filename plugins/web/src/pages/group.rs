//! The organizations' and groups' pages: `/organization/` and `/group/` (the lists), and an
//! organization's or group's own page (its description and the dataset search scoped to it).

use axum::extract::{OriginalUri, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use catalog_framework::prelude::*;

use super::search::{filter_term, run_search};
use super::{page_number, ROWS};
use crate::render::page;
use crate::visit::{error_page, last_segment, params, visit};

/// The list pages of organizations and groups: `q`, `sort` (name or size) and pages of 20.
async fn group_list_page(
    app: &AppState,
    uri: &Uri,
    headers: &HeaderMap,
    organizations: bool,
) -> Response {
    let visit = visit(app, uri, headers).await;
    let mut ctx = visit.context(app);
    let q = visit.param("q").unwrap_or_default().to_string();
    let sort = match visit.param("sort") {
        Some("package_count") => "package_count",
        _ => "title asc",
    };
    let page_no = page_number(&visit);
    let action = if organizations {
        "organization_list"
    } else {
        "group_list"
    };
    let items = ctx
        .call(
            action,
            params(json!({
                "all_fields": true, "q": q, "sort": sort,
                "limit": ROWS + 1, "offset": (page_no - 1) * ROWS,
            })),
        )
        .await
        .unwrap_or_else(|_| json!([]));
    let mut items = items.as_array().cloned().unwrap_or_default();
    let more = items.len() > ROWS;
    items.truncate(ROWS);
    let template = if organizations {
        "organization/index.html"
    } else {
        "group/index.html"
    };
    page(
        app,
        &visit,
        headers,
        template,
        StatusCode::OK,
        json!({"items": items, "q": q, "sort": sort, "page_no": page_no, "more": more}),
        None,
    )
}

pub(crate) async fn organizations(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    group_list_page(&app, &uri, &headers, true).await
}

pub(crate) async fn groups(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    group_list_page(&app, &uri, &headers, false).await
}

/// An organization's or group's page: its description and the dataset search scoped to it.
async fn group_page(
    app: &AppState,
    uri: &Uri,
    headers: &HeaderMap,
    organization: bool,
) -> Response {
    let visit = visit(app, uri, headers).await;
    let mut ctx = visit.context(app);
    let id = last_segment(uri);
    let (action, missing) = if organization {
        ("organization_show", "Organization not found")
    } else {
        ("group_show", "Group not found")
    };
    let g = match ctx
        .call(action, params(json!({"id": id, "include_datasets": false})))
        .await
    {
        Ok(g) => g,
        Err(e) => return error_page(app, &visit, headers, &e, missing),
    };
    let scope = if organization {
        filter_term("owner_org", g["id"].as_str().unwrap_or_default())
    } else {
        filter_term("groups", g["name"].as_str().unwrap_or_default())
    };
    let (status, mut values, _) = run_search(&mut ctx, &visit, Some(scope)).await;
    let description = g["description"].as_str().unwrap_or_default().to_string();
    values["description_html"] = json!(catalog_framework::markdown::render_off_thread(
        description,
        app.config.site_url().to_string()
    )
    .await
    .unwrap_or_default());
    values["group"] = g;
    let template = if organization {
        "organization/read.html"
    } else {
        "group/read.html"
    };
    page(app, &visit, headers, template, status, values, None)
}

pub(crate) async fn organization(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    group_page(&app, &uri, &headers, true).await
}

pub(crate) async fn group(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    group_page(&app, &uri, &headers, false).await
}
