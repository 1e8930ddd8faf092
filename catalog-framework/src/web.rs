//! What a plugin's own routes need to answer as the Action API does (`register_routes!`): the
//! envelope and bare errors, the caller's identity, bounded body reading and JSON decoding,
//! lenient path decoding, JSONP callbacks, read-your-writes across nodes. The Action API's
//! own handlers are the host's; they use the same helpers.

use std::time::Duration;

use axum::body::Body;
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Map, Value};

use crate::context::{AppState, Principal, Upload};
use crate::error::CkanError;
use crate::store::Params;

crate::extension_point!(
    /// Routes submitted with [`register_routes!`](crate::register_routes).
    pub RoutesRegistration, axum::Router<AppState>,
    collected("routes", "route")
);

/// Registers extra routes: `register_routes!("download", routes);` where `fn routes() -> Router<AppState>`.
#[macro_export]
macro_rules! register_routes {
    ($name:expr, $f:path) => {
        $crate::register_routes!($name, $f, priority = 0);
    };
    ($name:expr, $f:path, priority = $p:expr) => {
        $crate::__private::inventory::submit! {
            $crate::web::RoutesRegistration {
                name: $name, priority: $p, crate_name: env!("CARGO_PKG_NAME"), build: $f
            }
        }
    };
}

crate::extension_point!(
    /// Answers on a page several plugins share (`register_page!`): the dataset page is RDF
    /// when the DCAT plugin is asked for RDF, else the web plugin's HTML.
    pub PageRegistration, Box<dyn SharedPage>,
    collected("pages", "page")
);

/// One plugin's part of a shared page: the host serves each distinct [`SharedPage::path`] once
/// and asks the pages registered on it in [`SharedPage::order`] (lowest first); the first that
/// answers wins, and a GET nobody answers is a 404.
#[async_trait::async_trait]
pub trait SharedPage: Send + Sync {
    /// The route, in axum's syntax (`"/dataset/{file}"`).
    fn path(&self) -> &'static str;
    /// Lower asks first (the DCAT plugin's negotiation is 0, the web plugin's HTML 100).
    fn order(&self) -> i32;
    /// The answer, or `None` to hand the request to the next page.
    async fn answer(&self, app: &AppState, req: &axum::http::request::Parts) -> Option<Response>;
    /// The other representations this page serves of `path` (with `query`, a query string
    /// without `?`), as `(media type, absolute address)`: what an HTML page lists as
    /// `<link rel="alternate">`. None by default.
    fn alternates(&self, _app: &AppState, _path: &str, _query: &str) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// Every representation the pages registered on `route` serve of `path`
/// ([`SharedPage::alternates`]), in page order.
pub fn page_alternates(
    app: &AppState,
    route: &str,
    path: &str,
    query: &str,
) -> Vec<(String, String)> {
    let mut pages: Vec<_> = app
        .registry
        .extensions::<PageRegistration>()
        .values()
        .filter(|p| p.path() == route)
        .collect();
    pages.sort_by_key(|p| p.order());
    pages
        .into_iter()
        .flat_map(|p| p.alternates(app, path, query))
        .collect()
}

/// Registers a [`SharedPage`]: `register_page!("dcat-dataset", DatasetPage);`.
#[macro_export]
macro_rules! register_page {
    ($name:expr, $value:expr) => {
        $crate::register_at!($crate::web::PageRegistration, $name, $value, 0);
    };
}

/// The content type of every JSON answer.
pub const JSON_TYPE: &str = "application/json;charset=utf-8";

pub fn json_response(status: StatusCode, v: &Value) -> Response {
    let body = crate::json::to_ckan_json(v);
    (status, [(header::CONTENT_TYPE, JSON_TYPE)], body).into_response()
}

/// CKAN's answer to a request it cannot even decode: a bare JSON string, no envelope.
pub fn bare_error(status: StatusCode, msg: &str) -> Response {
    json_response(status, &Value::String(msg.to_string()))
}

/// The `help` link of an action's envelope.
pub fn help_url(app: &AppState, name: &str) -> String {
    format!(
        "{}/api/3/action/help_show?name={name}",
        app.config.site_url()
    )
}

/// The envelope `{help, success, result}` or `{help, error, success}` with CKAN's status.
pub fn envelope(
    app: &AppState,
    name: &str,
    result: Result<Value, CkanError>,
) -> (StatusCode, Value) {
    let mut m = Map::new();
    m.insert("help".into(), Value::String(help_url(app, name)));
    match result {
        Ok(v) => {
            m.insert("success".into(), Value::Bool(true));
            m.insert("result".into(), v);
            (StatusCode::OK, Value::Object(m))
        }
        Err(e) => {
            m.insert("error".into(), e.to_error_object());
            m.insert("success".into(), Value::Bool(false));
            (e.status(), Value::Object(m))
        }
    }
}

/// Query string → params: a key seen once maps to its string, a repeated key to a list.
pub fn query_to_params(q: &str) -> Params {
    let mut m = Params::new();
    for (k, v) in form_urlencoded::parse(q.as_bytes()) {
        let v = Value::String(v.into_owned());
        match m.get_mut(k.as_ref()) {
            Some(Value::Array(a)) => a.push(v),
            Some(existing) => {
                let first = existing.take();
                *existing = Value::Array(vec![first, v]);
            }
            None => {
                m.insert(k.into_owned(), v);
            }
        }
    }
    m
}

/// Request-decoding failures, answered as CKAN does: 400 with a bare string.
#[derive(Debug)]
pub struct BadRequest(pub StatusCode, pub String);

/// The next chunk of a multipart field, waiting at most `pause`; `total` counts the body's bytes
/// so far, which must stay within `limit`.
async fn next_chunk(
    field: &mut axum::extract::multipart::Field<'_>,
    pause: Duration,
    total: &mut usize,
    limit: usize,
) -> Result<Option<bytes::Bytes>, BadRequest> {
    let chunk = tokio::time::timeout(pause, field.chunk())
        .await
        .map_err(|_| BadRequest::timeout())?
        .map_err(BadRequest::multipart)?;
    if let Some(c) = &chunk {
        *total += c.len();
        if *total > limit {
            return Err(BadRequest::too_large());
        }
    }
    Ok(chunk)
}

/// A multipart body: fields in memory (bounded), files streamed to temporary files under the
/// data directory (`<data>/tmp`), never whole in memory; the whole body at most `limit` bytes,
/// each part waited for at most `pause`. The fields in the order sent (a file field's value is
/// its file name), and the files.
pub async fn read_multipart(
    app: &AppState,
    req: axum::extract::Request,
    limit: usize,
    pause: Duration,
) -> Result<(Vec<(String, String)>, Vec<Upload>), BadRequest> {
    let mut mp =
        <axum::extract::Multipart as axum::extract::FromRequest<AppState>>::from_request(req, app)
            .await
            .map_err(BadRequest::multipart)?;
    let mut fields = Vec::new();
    let mut uploads = Vec::new();
    let mut total = 0usize;
    let tmp_dir = app.data_dir.join("tmp");
    loop {
        let next = tokio::time::timeout(pause, mp.next_field())
            .await
            .map_err(|_| BadRequest::timeout())?
            .map_err(BadRequest::multipart)?;
        let Some(mut field) = next else { break };
        let name = field.name().unwrap_or("").to_string();
        let filename = field.file_name().map(str::to_string);
        let ctype = field.content_type().map(str::to_string);
        match filename {
            Some(filename) => {
                tokio::fs::create_dir_all(&tmp_dir)
                    .await
                    .map_err(BadRequest::server)?;
                let temp = tempfile::NamedTempFile::new_in(&tmp_dir)
                    .map_err(BadRequest::server)?
                    .into_temp_path();
                let mut file = tokio::fs::File::create(&temp)
                    .await
                    .map_err(BadRequest::server)?;
                let mut size = 0u64;
                while let Some(chunk) = next_chunk(&mut field, pause, &mut total, limit).await? {
                    size += chunk.len() as u64;
                    tokio::io::AsyncWriteExt::write_all(&mut file, &chunk)
                        .await
                        .map_err(BadRequest::server)?;
                }
                tokio::io::AsyncWriteExt::flush(&mut file)
                    .await
                    .map_err(BadRequest::server)?;
                fields.push((name.clone(), filename.clone()));
                uploads.push(Upload {
                    field: name,
                    filename,
                    content_type: ctype,
                    size,
                    path: std::sync::Arc::new(temp),
                });
            }
            None => {
                let mut value = Vec::new();
                while let Some(chunk) = next_chunk(&mut field, pause, &mut total, limit).await? {
                    value.extend_from_slice(&chunk);
                }
                fields.push((name, String::from_utf8_lossy(&value).into_owned()));
            }
        }
    }
    Ok((fields, uploads))
}

impl BadRequest {
    pub fn json(msg: impl std::fmt::Display) -> BadRequest {
        BadRequest(
            StatusCode::BAD_REQUEST,
            format!("Bad request: JSON Error: {msg}"),
        )
    }
}

/// The most values (objects, lists, strings, numbers …) one JSON body may hold. A decoded value
/// takes far more memory than its text (`[1,1,1,…]`: 32 bytes for every 2 bytes sent), so the
/// text is counted before it is decoded. A dataset with 1,000 resources holds some 30,000.
pub const MAX_JSON_VALUES: usize = 250_000;

/// True when `text` holds more than `max` JSON values: one more than its `[`, `{` and `,`
/// outside strings. A linear scan, without decoding.
fn too_many_json_values(text: &[u8], max: usize) -> bool {
    let (mut in_string, mut escaped, mut values) = (false, false, 1usize);
    for &b in text {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if matches!(b, b'[' | b'{' | b',') {
            values += 1;
            if values > max {
                return true;
            }
        }
    }
    false
}

/// Decodes a JSON text of a request, refusing one of more than [`MAX_JSON_VALUES`] values
/// before any is decoded. The error is serde_json's message, or the bound's.
pub fn parse_json(text: &[u8]) -> Result<Value, String> {
    if too_many_json_values(text, MAX_JSON_VALUES) {
        return Err(format!("more than {MAX_JSON_VALUES} values"));
    }
    serde_json::from_slice(text).map_err(|e| e.to_string())
}

/// A plugin route's request body, bounded as the Action API's are (`catalog.max_request_bytes`,
/// `catalog.server.body_read_timeout_secs`). On failure: the status and CKAN's bare message
/// (413 too large, 408 stalled, 400 broken).
pub async fn read_request_body(
    app: &AppState,
    body: Body,
) -> Result<bytes::Bytes, (StatusCode, String)> {
    let limit = body_limit(app);
    let pause = Duration::from_secs(app.config.catalog.server.body_read_timeout_secs.max(1));
    read_body(body, limit, pause)
        .await
        .map_err(|BadRequest(status, msg)| (status, msg))
}

/// The bound of a body read whole into memory (one that is not a multipart upload).
pub fn body_limit(app: &AppState) -> usize {
    let c = &app.config.catalog;
    c.max_request_bytes.min(c.limits.max_json_bytes)
}

/// Reads a whole request body, at most `limit` bytes, waiting at most `pause` for each chunk.
pub async fn read_body(
    body: Body,
    limit: usize,
    pause: Duration,
) -> Result<bytes::Bytes, BadRequest> {
    let mut stream = body.into_data_stream();
    let mut out = bytes::BytesMut::new();
    loop {
        let chunk = tokio::time::timeout(pause, stream.next())
            .await
            .map_err(|_| BadRequest::timeout())?;
        match chunk {
            None => return Ok(out.freeze()),
            Some(Ok(c)) => {
                if out.len() + c.len() > limit {
                    return Err(BadRequest::too_large());
                }
                out.extend_from_slice(&c);
            }
            Some(Err(e)) => {
                return Err(BadRequest(
                    StatusCode::BAD_REQUEST,
                    format!("Bad request: {e}"),
                ))
            }
        }
    }
}

impl BadRequest {
    pub fn too_large() -> BadRequest {
        BadRequest(
            StatusCode::PAYLOAD_TOO_LARGE,
            "Bad request: request body too large".into(),
        )
    }

    pub fn timeout() -> BadRequest {
        BadRequest(
            StatusCode::REQUEST_TIMEOUT,
            "Bad request: the request body stopped arriving".into(),
        )
    }

    pub fn multipart(e: impl std::fmt::Display) -> BadRequest {
        BadRequest(StatusCode::BAD_REQUEST, format!("Bad request: {e}"))
    }

    /// Our failure, not the request's (a temporary file that cannot be written): logged, 500.
    pub fn server(e: impl std::fmt::Display) -> BadRequest {
        tracing::error!(error = %e, "storing an upload");
        BadRequest(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Internal Server Error".into(),
        )
    }
}

const TOKEN_HEADERS: [&str; 3] = ["authorization", "x-catalog-api-key", "x-ckan-api-key"];

/// The header `catalog.apitoken_header_name` names (CKAN's `apitoken_header_name`), read first.
fn configured_token_header(app: &AppState) -> Option<&str> {
    let other = &app.config.catalog.other;
    ["apitoken_header_name", "apikey_header_name"]
        .iter()
        .find_map(|k| other.get(*k).and_then(Value::as_str))
        .filter(|h| !h.trim().is_empty())
}

/// The caller named by an API token header; an unknown, revoked or expired token means
/// anonymous, as in CKAN.
pub async fn identify(app: &AppState, headers: &HeaderMap) -> Option<Principal> {
    let raw = configured_token_header(app)
        .into_iter()
        .chain(TOKEN_HEADERS)
        .find_map(|h| headers.get(h.trim()).and_then(|v| v.to_str().ok()))?;
    let token = raw.trim();
    let token = token.strip_prefix("Bearer ").unwrap_or(token).trim();
    if token.is_empty() {
        return None;
    }
    crate::store::principal_for_token(&app.store, token)
        .await
        .ok()
        .flatten()
}

/// The request path after the first `marker` (`"/util/"`), percent-decoded leniently: bytes
/// that are not UTF-8 become U+FFFD, so a name nobody can have is an unknown name (a 404 in the
/// route's own format), never axum's plain-text 400 for a path parameter that is not UTF-8.
/// Routes read their parameters with this instead of axum's `Path` extractor. Empty when
/// the path has no `marker`.
pub fn path_after(uri: &Uri, marker: &str) -> String {
    let raw = uri.path().split_once(marker).map_or("", |(_, rest)| rest);
    percent_encoding::percent_decode_str(raw)
        .decode_utf8_lossy()
        .into_owned()
}

/// The header and cookie that carry the change-feed sequence number of a client's last write.
pub const SEQUENCE_HEADER: &str = "x-catalog-seq";

const SEQUENCE_COOKIE: &str = "catalog_seq";

/// The sequence number a request says it has written up to: the `X-Catalog-Seq` header, else
/// the `catalog_seq` cookie.
pub fn seen_sequence(headers: &HeaderMap) -> Option<i64> {
    if let Some(v) = headers.get(SEQUENCE_HEADER).and_then(|v| v.to_str().ok()) {
        return v.trim().parse().ok();
    }
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == SEQUENCE_COOKIE)
        .and_then(|(_, v)| v.trim().parse().ok())
}

/// What a read request's context keeps for read-your-writes across nodes
/// ([`crate::context::ActionContext::read_after`]): the sequence number it carries and when it
/// arrived. Its searches wait for this node's index to apply it; nothing else waits.
pub fn read_after(
    headers: &HeaderMap,
    arrived: std::time::Instant,
) -> Option<(i64, std::time::Instant)> {
    seen_sequence(headers).map(|seq| (seq, arrived))
}

/// Tells the client the change-feed position of its write (header and cookie), so that its
/// next read on any node waits until that node's index has it (read-your-writes across
/// nodes). Only where each node follows the feed.
pub fn mark_sequence(app: &AppState, response: &mut Response) {
    if !app.search.follows_feed() {
        return;
    }
    let seq = app.search.high();
    if seq <= 0 {
        return;
    }
    if let Ok(v) = header::HeaderValue::from_str(&seq.to_string()) {
        response.headers_mut().insert(SEQUENCE_HEADER, v);
    }
    let cookie = format!("{SEQUENCE_COOKIE}={seq}; Path=/; Max-Age=300; HttpOnly; SameSite=Lax");
    if let Ok(v) = header::HeaderValue::from_str(&cookie) {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
}

/// A JSONP callback we wrap an answer in: a JavaScript name or member path
/// (`jQuery1234_5678`, `cb.done`, `a[0]`), at most 128 characters. Anything else could turn the
/// answer into script the caller did not mean (CKAN only HTML-escapes it); it gets plain JSON.
pub fn is_js_callback(cb: &str) -> bool {
    let mut chars = cb.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$')
        && cb.len() <= 128
        && chars.all(|c| c.is_ascii_alphanumeric() || "_$.[]".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_script_names_are_jsonp_callbacks() {
        for ok in ["cb", "jQuery1234_5678", "a.b", "$x", "w[0]"] {
            assert!(is_js_callback(ok), "{ok}");
        }
        for bad in ["", "<script>", "alert(1)//", "1a", "a b", &"a".repeat(129)] {
            assert!(!is_js_callback(bad), "{bad}");
        }
    }

    #[test]
    fn repeated_query_keys_become_lists() {
        let p = query_to_params("a=1&b=x&a=2&q=a%2Bb");
        assert_eq!(p["a"], json!(["1", "2"]));
        assert_eq!(p["b"], json!("x"));
        assert_eq!(p["q"], json!("a+b"));
    }

    #[test]
    fn json_values_are_counted_before_decoding() {
        assert!(!too_many_json_values(
            br#"{"a": [1, 2, {"b": "x,y[{"}]}"#,
            6
        ));
        assert!(too_many_json_values(br#"{"a": [1, 2, {"b": "x,y[{"}]}"#, 5));
        assert!(!too_many_json_values(br#"["a\"b,c", 1]"#, 3));
        let many = format!("[{}1]", "1,".repeat(MAX_JSON_VALUES));
        assert!(parse_json(many.as_bytes()).unwrap_err().contains("values"));
    }
}
