//! `/dataset/`: the dataset search, and the search that every search page runs (an
//! organization's or group's page, the dashboard): facets, filters, sort and pages.

use axum::extract::{OriginalUri, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use catalog_framework::prelude::*;

use super::{alternates, page_number, page_numbers, MAX_PAGE, ROWS};
use crate::render::{page, Visit};
use crate::visit::{params, visit};

/// The facets of the search pages, with their titles.
const FACETS: &[(&str, &str)] = &[
    ("organization", "Organizations"),
    ("groups", "Groups"),
    ("tags", "Tags"),
    ("res_format", "Formats"),
    ("license_id", "Licenses"),
];

/// The sort orders offered (CKAN's), the first the default.
const SORTS: &[(&str, &str)] = &[
    ("score desc, metadata_modified desc", "Relevance"),
    ("title_string asc", "Name Ascending"),
    ("title_string desc", "Name Descending"),
    ("metadata_modified desc", "Last Modified"),
];

/// A search filter term: `key:"value"` with the value's quotes and backslashes escaped.
pub(crate) fn filter_term(key: &str, value: &str) -> String {
    let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
    format!("{key}:\"{escaped}\"")
}

/// Runs the search of a search page (`/dataset/`, an organization's or group's page): the
/// query, the facet filters as sent, the sort (one of [`SORTS`]) and the page; `scope` is a
/// filter the page adds (`owner_org:…`). The values for `snippets/search.html`, and the same
/// search as the catalog endpoint's query string (`q`, `fq`).
pub(crate) async fn run_search(
    ctx: &mut ActionContext,
    visit: &Visit,
    scope: Option<String>,
) -> (StatusCode, Value, String) {
    let q = visit.param("q").unwrap_or_default().to_string();
    let sort = visit
        .param("sort")
        .and_then(|s| SORTS.iter().find(|(k, _)| *k == s))
        .unwrap_or(&SORTS[0])
        .0;
    let page_no = page_number(visit);
    let mut fq: Vec<String> = scope.into_iter().collect();
    let mut active = Vec::new();
    for (key, value) in &visit.query {
        if let Some((_, title)) = FACETS.iter().find(|(k, _)| *k == key.as_str()) {
            if !value.is_empty() && active.len() < 20 {
                fq.push(filter_term(key, value));
                active.push(json!({"field": key, "title": title, "value": value}));
            }
        }
    }
    let mut catalog_query = Vec::new();
    if !q.is_empty() {
        catalog_query.push(("q".to_string(), q.clone()));
    }
    if !fq.is_empty() {
        catalog_query.push(("fq".to_string(), fq.join(" ")));
    }
    let catalog_query = crate::render::query_string(&catalog_query)
        .trim_start_matches('?')
        .to_string();
    let facet_fields: Vec<&str> = FACETS.iter().map(|(k, _)| *k).collect();
    let result = ctx
        .call(
            "package_search",
            params(json!({
                "q": q,
                "fq": fq.join(" "),
                "sort": sort,
                "rows": ROWS,
                "start": (page_no - 1) * ROWS,
                "facet.field": facet_fields,
                "facet.limit": 10,
                "include_private": true,
            })),
        )
        .await;
    let (status, result, error) = match result {
        Ok(r) => (StatusCode::OK, r, None),
        Err(e)
            if matches!(
                e.kind,
                ErrorKind::Validation | ErrorKind::SearchQuery | ErrorKind::Search
            ) =>
        {
            (
                StatusCode::BAD_REQUEST,
                json!({"count": 0, "results": [], "search_facets": {}}),
                Some("The search query could not be understood."),
            )
        }
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"count": 0, "results": [], "search_facets": {}}),
            Some("The page could not be shown."),
        ),
    };
    let count = result["count"].as_u64().unwrap_or_default() as usize;
    let pages = count.div_ceil(ROWS).clamp(1, MAX_PAGE);
    let facets: Vec<Value> = FACETS
        .iter()
        .map(|(key, title)| {
            let items = result["search_facets"][key]["items"].clone();
            let mut items: Vec<Value> = items.as_array().cloned().unwrap_or_default();
            items.sort_by(|a, b| {
                b["count"]
                    .as_i64()
                    .cmp(&a["count"].as_i64())
                    .then(a["display_name"].as_str().cmp(&b["display_name"].as_str()))
            });
            for item in &mut items {
                let name = item["name"].as_str().unwrap_or_default();
                item["active"] = json!(visit
                    .query
                    .iter()
                    .any(|(k, v)| k.as_str() == *key && v.as_str() == name));
            }
            json!({"field": key, "title": title, "items": items})
        })
        .collect();
    let sorts: Vec<Value> = SORTS
        .iter()
        .map(|(value, title)| json!({"value": value, "title": title, "selected": *value == sort}))
        .collect();
    (
        status,
        json!({
            "q": q,
            "count": count,
            "results": result["results"],
            "facets": facets,
            "active": active,
            "sorts": sorts,
            "page_no": page_no,
            "pages": pages,
            "page_numbers": page_numbers(page_no, pages),
            "error": error,
        }),
        catalog_query,
    )
}

/// `/dataset/`: search with facets, active filters, sort and pages.
pub(crate) async fn search(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    let mut ctx = visit.context(&app);
    let (status, mut values, catalog_query) = run_search(&mut ctx, &visit, None).await;
    values["alternates"] = alternates(&app, "/", "/", &catalog_query);
    page(
        &app,
        &visit,
        &headers,
        "dataset/search.html",
        status,
        values,
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_escaped() {
        assert_eq!(
            filter_term("tags", "a \"b\" \\c"),
            "tags:\"a \\\"b\\\" \\\\c\""
        );
    }
}
