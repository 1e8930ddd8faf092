use axum::extract::{OriginalUri, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use catalog_framework::prelude::*;
use catalog_framework::store as q;

use catalog_framework::files::OpenError;

/// `GET /dataset/{id}/resource/{resource_id}/download/{filename}`: the uploaded file, with the
/// dataset's read permission (private datasets stay private).
pub(crate) async fn download(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    // `/dataset/{id}/resource/{resource_id}/download/{filename}`, decoded leniently.
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    let segments: Vec<&str> = uri.path().split('/').collect();
    let (id, resource_id) = match segments.as_slice() {
        ["", "dataset", id, "resource", rid, "download", _] => (decode(id), decode(rid)),
        _ => return (StatusCode::NOT_FOUND, "Resource data not found").into_response(),
    };
    let user = catalog_framework::web::identify(&app, &headers).await;
    let mut ctx = ActionContext::new(app.clone(), user);
    let mut p = Params::new();
    p.insert("id".into(), json!(resource_id));
    let res = match ctx.call("resource_show", p).await {
        Ok(r) => r,
        Err(e) => {
            return (e.status(), e.message().unwrap_or("Not found").to_string()).into_response()
        }
    };
    let belongs = match q::package_by_ref(
        &mut *match ctx.db().await {
            Ok(c) => c,
            Err(_) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        },
        &id,
    )
    .await
    {
        Ok(Some(pkg)) => res["package_id"] == json!(pkg.id),
        _ => false,
    };
    if !belongs || res["url_type"] != json!("upload") {
        return (StatusCode::NOT_FOUND, "Resource data not found").into_response();
    }
    let ct = res["mimetype"]
        .as_str()
        .unwrap_or("application/octet-stream")
        .to_string();
    let range = headers
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    match app.files.open(&resource_id, range.as_deref()).await {
        Ok(Some(file)) => {
            let len = file.range.end - file.range.start;
            let partial = len != file.total;
            let mut resp = Response::builder()
                .status(if partial {
                    StatusCode::PARTIAL_CONTENT
                } else {
                    StatusCode::OK
                })
                .header(header::CONTENT_TYPE, ct)
                .header(header::CONTENT_LENGTH, len)
                .header(header::ACCEPT_RANGES, "bytes");
            if partial {
                resp = resp.header(
                    header::CONTENT_RANGE,
                    format!(
                        "bytes {}-{}/{}",
                        file.range.start,
                        file.range.end - 1,
                        file.total
                    ),
                );
            }
            resp.body(axum::body::Body::from_stream(file.stream))
                .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
        }
        Ok(None) => (StatusCode::NOT_FOUND, "Resource data not found").into_response(),
        Err(OpenError::Unsatisfiable { total }) => (
            StatusCode::RANGE_NOT_SATISFIABLE,
            [(header::CONTENT_RANGE, format!("bytes */{total}"))],
            "Requested range not satisfiable",
        )
            .into_response(),
        Err(OpenError::Store(e)) => {
            tracing::error!(resource_id, error = %e, "reading an uploaded file");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "The file store could not be reached",
            )
                .into_response()
        }
    }
}
