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
    let (id, resource_id, filename) = match segments.as_slice() {
        ["", "dataset", id, "resource", rid, "download", name] => {
            (decode(id), decode(rid), decode(name))
        }
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
    let (ct, disposition) = served_as(res["mimetype"].as_str(), &filename);
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
                .header(header::CONTENT_DISPOSITION, disposition)
                .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
                .header(header::CONTENT_SECURITY_POLICY, "sandbox")
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

/// Types a browser may show inline from the catalog's origin: none of them runs script (SVG,
/// HTML and XHTML do, so they are downloads). Everything else is an attachment.
const INLINE_TYPES: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/avif",
    "application/pdf",
    "text/plain",
    "text/csv",
    "application/json",
];

/// The `Content-Type` and `Content-Disposition` an upload is served with: the stored mimetype
/// when it is a well-formed `type/subtype` (else `application/octet-stream`), inline only when
/// it is on [`INLINE_TYPES`], and the file name (quoted ASCII fallback plus RFC 5987 UTF-8).
fn served_as(mimetype: Option<&str>, filename: &str) -> (String, String) {
    let ct = mimetype
        .and_then(catalog_framework::validators::media_type_of)
        .map(str::to_ascii_lowercase)
        .unwrap_or_else(|| "application/octet-stream".to_string());
    let essence = ct.split(';').next().unwrap_or("").trim();
    let kind = if INLINE_TYPES.contains(&essence) {
        "inline"
    } else {
        "attachment"
    };
    let ascii: String = filename
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let encoded =
        percent_encoding::utf8_percent_encode(filename, percent_encoding::NON_ALPHANUMERIC);
    (
        ct,
        format!("{kind}; filename=\"{ascii}\"; filename*=UTF-8''{encoded}"),
    )
}

#[cfg(test)]
mod tests {
    use super::served_as;

    #[test]
    fn script_capable_types_are_attachments_and_safe_ones_inline() {
        for t in [
            "text/html",
            "application/xhtml+xml",
            "image/svg+xml",
            "text/xml",
        ] {
            let (ct, d) = served_as(Some(t), "a.html");
            assert_eq!(ct, t);
            assert!(d.starts_with("attachment;"), "{t}: {d}");
        }
        for t in [
            "image/png",
            "application/pdf",
            "text/csv",
            "TEXT/PLAIN; charset=utf-8",
        ] {
            let (_, d) = served_as(Some(t), "a");
            assert!(d.starts_with("inline;"), "{t}: {d}");
        }
    }

    #[test]
    fn a_malformed_stored_type_becomes_octet_stream() {
        for t in [
            "text/html\r\nX-Evil: 1",
            "html",
            "",
            "text/ html",
            "a/b\u{7f}",
        ] {
            let (ct, d) = served_as(Some(t), "x");
            assert_eq!(ct, "application/octet-stream", "{t:?}");
            assert!(d.starts_with("attachment;"));
        }
        assert_eq!(served_as(None, "x").0, "application/octet-stream");
    }

    #[test]
    fn the_file_name_cannot_break_the_header() {
        let (_, d) = served_as(Some("text/csv"), "a\"b\r\nc\u{e9}.csv");
        assert_eq!(
            d,
            "inline; filename=\"a_b__c_.csv\"; filename*=UTF-8''a%22b%0D%0Ac%C3%A9%2Ecsv"
        );
    }
}
