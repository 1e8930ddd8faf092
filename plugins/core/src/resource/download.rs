use axum::extract::{OriginalUri, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use catalog_framework::prelude::*;
use catalog_framework::store as q;

use super::upload_path;

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
    match tokio::fs::read(upload_path(&app.data_dir, &resource_id)).await {
        Ok(bytes) => {
            let ct = res["mimetype"]
                .as_str()
                .unwrap_or("application/octet-stream")
                .to_string();
            (StatusCode::OK, [(header::CONTENT_TYPE, ct)], bytes).into_response()
        }
        Err(_) => (StatusCode::NOT_FOUND, "Resource data not found").into_response(),
    }
}
