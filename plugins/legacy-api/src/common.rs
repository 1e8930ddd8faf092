//! What every legacy endpoint shares (spec §10.1): the API version a path names, the caller,
//! the request's parameters and body, and CKAN 2.7's bare-JSON answers — JSON strings for
//! errors, the raw dict with 409 for validation errors, JSONP on GET with `callback=`.

use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use catalog_framework::prelude::*;
use catalog_framework::store::json::to_ckan_json_string;
use catalog_framework::web::{
    bare_error, identify, is_js_callback, json_response, parse_json, query_to_params, read_after,
    read_request_body,
};

const JSONP_TYPE: &str = "application/javascript;charset=utf-8";

/// The API version a path names: `/api/…` and `/api/1/…` are version 1 (datasets and groups
/// referred to by name), `/api/2/…` version 2 (by id); the search API also answers under `/api/3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    V1,
    V2,
    V3,
}

impl Version {
    /// The version in a request path (`/api/2/rest/dataset` → V2; no number → V1).
    pub(crate) fn of_path(path: &str) -> Version {
        match path.trim_start_matches('/').split('/').nth(1) {
            Some("2") => Version::V2,
            Some("3") => Version::V3,
            _ => Version::V1,
        }
    }

    /// The number, as the answers and `Location` headers spell it.
    pub(crate) fn number(self) -> u8 {
        match self {
            Version::V1 => 1,
            Version::V2 => 2,
            Version::V3 => 3,
        }
    }

    /// Whether references to datasets and groups are names (version 1) rather than ids.
    pub(crate) fn refs_by_name(self) -> bool {
        self == Version::V1
    }
}

/// One legacy request, read: who asks, in which version, with what query and body.
pub(crate) struct LegacyRequest {
    pub app: AppState,
    pub version: Version,
    pub method: Method,
    /// The request path, as received (for `Location` headers).
    pub path: String,
    /// The raw query string.
    pub raw_query: String,
    /// The content type, lower-cased.
    pub content_type: String,
    pub body: axum::body::Bytes,
    pub user: Option<Principal>,
    callback: Option<String>,
    /// A GET's read-your-writes position ([`ActionContext::read_after`]).
    read_after: Option<(i64, std::time::Instant)>,
}

impl LegacyRequest {
    /// Reads a request: identifies the caller by the API token headers (as the Action API
    /// does) and reads the body within the Action API's bounds. A body too large or too slow
    /// is answered at once.
    pub(crate) async fn read(app: AppState, req: Request) -> Result<LegacyRequest, Response> {
        let arrived = std::time::Instant::now();
        let (parts, body) = req.into_parts();
        let user = identify(&app, &parts.headers).await;
        let read_after = if parts.method == Method::GET {
            read_after(&parts.headers, arrived)
        } else {
            None
        };
        let body = read_request_body(&app, body)
            .await
            .map_err(|(status, msg)| bare_error(status, &msg))?;
        let raw_query = parts.uri.query().unwrap_or("").to_string();
        let query = query_to_params(&raw_query);
        let callback = match query.get("callback") {
            None => None,
            Some(Value::String(cb)) if is_js_callback(cb) => Some(cb.clone()),
            Some(_) => return Err(bad_request("Invalid callback")),
        };
        let content_type = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        Ok(LegacyRequest {
            version: Version::of_path(parts.uri.path()),
            path: parts.uri.path().to_string(),
            method: parts.method,
            raw_query,
            content_type,
            body,
            user,
            callback,
            app,
            read_after,
        })
    }

    /// A fresh action context for this caller: each call runs in its own transaction and
    /// commits when it succeeds, as an Action API request does.
    pub(crate) fn context(&self) -> ActionContext {
        let mut ctx = ActionContext::new(self.app.clone(), self.user.clone());
        ctx.read_after = self.read_after;
        ctx
    }

    /// Runs one action as this caller (authorization included) and commits it.
    pub(crate) async fn run(&self, action: &str, params: Params) -> CkanResult<Value> {
        self.context().run_top(action, params).await
    }

    /// Runs one action without its authorization check (what CKAN's legacy controller did
    /// with `ignore_auth` for the REST form's extra reads), and commits it.
    pub(crate) async fn run_ignoring_auth(
        &self,
        action: &str,
        params: Params,
    ) -> CkanResult<Value> {
        let mut ctx = self.context();
        ctx.ignore_auth = true;
        ctx.run_top(action, params).await
    }

    /// The JSON object a write sends: the raw body, or a form post whose single key is the
    /// JSON (value empty or `1`). An empty body is CKAN's 400; a body that is not a JSON
    /// object too.
    // The refusal is the response itself, built once per request: boxing it buys nothing.
    #[allow(clippy::result_large_err)]
    pub(crate) fn body_object(&self) -> Result<Params, Response> {
        let text: std::borrow::Cow<'_, [u8]> = if self
            .content_type
            .starts_with("application/x-www-form-urlencoded")
        {
            let fields: Vec<(String, String)> = form_urlencoded::parse(&self.body)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            match fields.as_slice() {
                [(name, value)] if value.is_empty() || value == "1" => {
                    name.clone().into_bytes().into()
                }
                [] => Vec::new().into(),
                _ => {
                    return Err(bad_request(
                        "JSON Error: Could not extract request body data",
                    ))
                }
            }
        } else {
            self.body.as_ref().into()
        };
        if text.iter().all(u8::is_ascii_whitespace) {
            return Err(bad_request(
                "JSON Error: Invalid request. Please use POST method for your request",
            ));
        }
        match parse_json(&text) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(other) => Err(bad_request(&format!(
                "JSON Error: Request data JSON decoded to {other} but it needs to be a dictionary."
            ))),
            Err(e) => Err(bad_request(&format!(
                "JSON Error: Error decoding JSON data. Error: {e}"
            ))),
        }
    }

    /// A successful answer: the JSON, wrapped as `callback(…);` when a GET asked for JSONP.
    pub(crate) fn reply(&self, status: StatusCode, v: &Value) -> Response {
        match &self.callback {
            Some(cb) if status == StatusCode::OK && self.method == Method::GET => (
                status,
                [
                    (header::CONTENT_TYPE, JSONP_TYPE),
                    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                ],
                format!("{cb}({});", to_ckan_json_string(v)),
            )
                .into_response(),
            _ => json_response(status, v),
        }
    }

    /// 200 with the JSON (JSONP when asked).
    pub(crate) fn ok(&self, v: &Value) -> Response {
        self.reply(StatusCode::OK, v)
    }

    /// 201 with a `Location` header and the JSON.
    pub(crate) fn created(&self, location: &str, v: &Value) -> Response {
        let mut r = self.reply(StatusCode::CREATED, v);
        if let Ok(h) = HeaderValue::from_str(location) {
            r.headers_mut().insert(header::LOCATION, h);
        }
        r
    }

    /// The site's address for `Location` headers and `ckan_url`: `catalog.api_url` when set
    /// (an API served from another host), else `catalog.site_url`.
    pub(crate) fn api_base(&self) -> String {
        let other = &self.app.config.catalog.other;
        let api_url = other
            .get("api_url")
            .and_then(Value::as_str)
            .map(|s| s.trim().trim_end_matches('/'))
            .filter(|s| !s.is_empty());
        match api_url {
            // `catalog.api_url` names the API's own root (`https://api.example.org/api`).
            Some(u) => u.trim_end_matches("/api").to_string(),
            None => self.app.config.site_url().to_string(),
        }
    }
}

/// 400 `"Bad request - <msg>"`.
pub(crate) fn bad_request(msg: &str) -> Response {
    bare_error(StatusCode::BAD_REQUEST, &format!("Bad request - {msg}"))
}

/// 404 `"Not found"` or `"Not found - <msg>"`.
pub(crate) fn not_found_error(msg: &str) -> Response {
    if msg.is_empty() {
        bare_error(StatusCode::NOT_FOUND, "Not found")
    } else {
        bare_error(StatusCode::NOT_FOUND, &format!("Not found - {msg}"))
    }
}

/// 403 `"Access denied"` or `"Access denied - <msg>"`.
pub(crate) fn access_denied(msg: &str) -> Response {
    if msg.is_empty() {
        bare_error(StatusCode::FORBIDDEN, "Access denied")
    } else {
        bare_error(StatusCode::FORBIDDEN, &format!("Access denied - {msg}"))
    }
}

/// An action's failure in the legacy form: validation errors are the raw dict with 409 (no
/// `__type`), authorization 403 and not-found 404 as strings, integrity errors CKAN's
/// envelope-shaped 400, search errors 400 `Bad search option`, our own failures 500.
pub(crate) fn from_ckan(e: &CkanError) -> Response {
    let message = e.message().unwrap_or("");
    match e.kind {
        ErrorKind::Validation | ErrorKind::Conflict => {
            json_response(StatusCode::CONFLICT, &Value::Object(e.body.clone()))
        }
        ErrorKind::Authorization => {
            let detail = message
                .strip_prefix("Access denied")
                .unwrap_or(message)
                .trim_start_matches([':', ' ']);
            access_denied(detail)
        }
        ErrorKind::NotFound => {
            let detail = message
                .strip_prefix("Not found")
                .unwrap_or(message)
                .trim_start_matches([':', ' ']);
            not_found_error(detail)
        }
        ErrorKind::Integrity => json_response(
            StatusCode::BAD_REQUEST,
            &json!({"success": false, "error": e.to_error_object()}),
        ),
        ErrorKind::SearchQuery | ErrorKind::Search => {
            bad_request(&format!("Bad search option: {message}"))
        }
        ErrorKind::SearchIndex => bare_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Unable to add package to search index",
        ),
        ErrorKind::Internal => {
            bare_error(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_comes_from_the_path() {
        assert_eq!(Version::of_path("/api/rest/dataset"), Version::V1);
        assert_eq!(Version::of_path("/api/1/rest/dataset"), Version::V1);
        assert_eq!(Version::of_path("/api/2/rest/dataset"), Version::V2);
        assert_eq!(Version::of_path("/api/3/search/dataset"), Version::V3);
        assert_eq!(Version::of_path("/api/util/markdown"), Version::V1);
    }

    #[test]
    fn callbacks_are_identifiers_only() {
        assert!(is_js_callback("jQuery1234_5678"));
        assert!(is_js_callback("ns.fn"));
        assert!(is_js_callback("cbs[0]"));
        assert!(!is_js_callback(""));
        assert!(!is_js_callback("alert(1);x"));
        assert!(!is_js_callback("<script>"));
        assert!(!is_js_callback(&"a".repeat(129)));
    }
}
