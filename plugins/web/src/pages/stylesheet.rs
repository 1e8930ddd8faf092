//! `/static/web/catalog.css`: the one stylesheet, cached for an hour.

use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;

use crate::render::respond;

/// The one stylesheet.
pub(crate) async fn stylesheet(headers: HeaderMap) -> Response {
    let mut r = respond(
        &headers,
        StatusCode::OK,
        "text/css; charset=utf-8",
        include_str!("../../static/catalog.css").to_string(),
        None,
    );
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("public, max-age=3600"),
    );
    r
}
