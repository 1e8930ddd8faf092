//! What crawlers read: `/robots.txt`, and `/sitemap.xml` with its files of public datasets.

use axum::extract::{OriginalUri, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use catalog_framework::escape;
use catalog_framework::prelude::*;

use crate::render::respond;
use crate::visit::{last_segment, params};

/// URLs per sitemap file: the protocol allows 50,000; 10,000 keeps one anonymous request to
/// ten 1,000-row searches.
const SITEMAP_URLS: usize = 10_000;

/// `/robots.txt`: everything may be crawled but the API and the search page's endless
/// query combinations; the sitemap named.
pub(crate) async fn robots(State(app): State<AppState>) -> Response {
    let body = format!(
        "User-agent: *\nDisallow: /api/\nDisallow: /dataset/?\nDisallow: /*/dataset/?\n\nSitemap: {}/sitemap.xml\n",
        app.config.site_url()
    );
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

/// The number of public datasets, as an anonymous visitor's search counts them.
async fn public_count(app: &AppState) -> CkanResult<usize> {
    let mut ctx = ActionContext::new(app.clone(), None);
    let r = ctx
        .call("package_search", params(json!({"rows": 0})))
        .await?;
    Ok(r["count"].as_u64().unwrap_or_default() as usize)
}

/// `/sitemap.xml`: a sitemap index, one file per [`SITEMAP_URLS`] public datasets.
pub(crate) async fn sitemap_index(State(app): State<AppState>, headers: HeaderMap) -> Response {
    let count = match public_count(&app).await {
        Ok(c) => c,
        Err(_) => return (StatusCode::SERVICE_UNAVAILABLE, "Try again later").into_response(),
    };
    let site = escape::html(app.config.site_url());
    let mut body = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for n in 1..=count.div_ceil(SITEMAP_URLS).max(1) {
        body.push_str(&format!(
            "<sitemap><loc>{site}/sitemap/datasets-{n}.xml</loc></sitemap>\n"
        ));
    }
    body.push_str("</sitemapindex>\n");
    respond(
        &headers,
        StatusCode::OK,
        "application/xml; charset=utf-8",
        body,
        None,
    )
}

/// `/sitemap/datasets-<n>.xml`: the n-th [`SITEMAP_URLS`] public datasets by name, with their
/// modification dates.
pub(crate) async fn sitemap_file(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let n = last_segment(&uri)
        .strip_prefix("datasets-")
        .and_then(|r| r.strip_suffix(".xml"))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| *n >= 1 && *n <= 10_000);
    let Some(n) = n else {
        return (StatusCode::NOT_FOUND, "Not found").into_response();
    };
    let site = escape::html(app.config.site_url());
    let mut ctx = ActionContext::new(app.clone(), None);
    let mut body = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    let first = (n - 1) * SITEMAP_URLS;
    let mut start = first;
    while start < first + SITEMAP_URLS {
        let r = ctx
            .call(
                "package_search",
                params(json!({
                    "rows": 1000, "start": start, "sort": "name asc",
                    "fl": "name,metadata_modified",
                })),
            )
            .await;
        let Ok(r) = r else {
            return (StatusCode::SERVICE_UNAVAILABLE, "Try again later").into_response();
        };
        let rows = r["results"].as_array().cloned().unwrap_or_default();
        for d in &rows {
            let name = d["name"].as_str().unwrap_or_default();
            let modified: String = d["metadata_modified"]
                .as_str()
                .unwrap_or_default()
                .chars()
                .take(10)
                .collect();
            body.push_str(&format!(
                "<url><loc>{site}/dataset/{}</loc><lastmod>{}</lastmod></url>\n",
                escape::html(name),
                escape::html(&modified)
            ));
        }
        if rows.len() < 1000 {
            break;
        }
        start += 1000;
    }
    body.push_str("</urlset>\n");
    respond(
        &headers,
        StatusCode::OK,
        "application/xml; charset=utf-8",
        body,
        None,
    )
}
