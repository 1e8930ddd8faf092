//! What every form page shares: reading a posted form (URL-encoded, or multipart with a file),
//! the CSRF check, form pages that are never cached, redirects, and a validation error's
//! messages by field.

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use catalog_framework::context::Upload;
use catalog_framework::prelude::*;
use catalog_framework::web::{read_body, read_multipart};

use crate::render::{page, Visit};
use crate::session::{Sessions, CSRF_FIELD};
use crate::state::Web;

pub(crate) fn sessions(app: &AppState) -> Option<&Sessions> {
    app.extension::<Web>().map(|w| w.sessions(app))
}

/// The largest form body read: these forms hold a few short fields (a form that takes a file,
/// only from a logged-in visitor, is bounded by `catalog.max_request_bytes`, as the API's
/// uploads are).
const FORM_BYTES: usize = 64 * 1024;
/// Fields read of a form, at most.
const FORM_FIELDS: usize = 100;

/// A posted form: its fields in the order sent, and its files.
#[derive(Default)]
pub(crate) struct Form {
    pub(crate) fields: Vec<(String, String)>,
    pub(crate) uploads: Vec<Upload>,
}

impl Form {
    /// The first value of a field.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        field(&self.fields, name)
    }

    /// A field's value, trimmed, or empty.
    pub(crate) fn text(&self, name: &str) -> String {
        self.get(name).unwrap_or_default().trim().to_string()
    }
}

/// A form body's fields (at most [`FORM_FIELDS`]) and, when `files`, its files; `None` for a
/// body too large, stalled or broken.
pub(crate) async fn read_form(
    app: &AppState,
    headers: &HeaderMap,
    body: axum::body::Body,
    files: bool,
) -> Option<Form> {
    let pause =
        std::time::Duration::from_secs(app.config.catalog.server.body_read_timeout_secs.max(1));
    let multipart = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("multipart/form-data"));
    if multipart {
        let mut req = axum::extract::Request::new(body);
        *req.headers_mut() = headers.clone();
        let limit = if files {
            app.config.catalog.max_request_bytes
        } else {
            FORM_BYTES
        };
        let (mut fields, uploads) = read_multipart(app, req, limit, pause).await.ok()?;
        fields.truncate(FORM_FIELDS);
        return Some(Form { fields, uploads });
    }
    let bytes = read_body(body, FORM_BYTES, pause).await.ok()?;
    Some(Form {
        fields: form_urlencoded::parse(&bytes)
            .take(FORM_FIELDS)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect(),
        uploads: Vec::new(),
    })
}

pub(crate) fn field<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// Adds a `Set-Cookie`.
pub(crate) fn with_cookie(mut r: Response, cookie: Option<String>) -> Response {
    if let Some(v) = cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
    r
}

/// A 303 to a local path.
pub(crate) fn redirect(to: &str) -> Response {
    let mut r = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(to) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

/// The login page, coming back to `back` afterwards.
pub(crate) fn to_login(visit: &Visit, back: &str) -> Response {
    let q = crate::render::query_string(&[("came_from".to_string(), back.to_string())]);
    redirect(&format!("{}/user/login{q}", visit.prefix))
}

/// A form page: the template with a CSRF token (and its cookie, for a first visit), never
/// stored by a cache.
pub(crate) fn form_page(
    app: &AppState,
    visit: &Visit,
    headers: &HeaderMap,
    template: &str,
    status: StatusCode,
    mut values: Value,
) -> Response {
    let Some(sessions) = sessions(app) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let (token, cookie) = sessions.csrf(headers);
    // Messages from actions arrive in English: shown in the page's language.
    if let Some(errors) = values.get_mut("errors").and_then(Value::as_object_mut) {
        for msg in errors.values_mut() {
            if let Some(text) = msg.as_str() {
                *msg = json!(crate::render::translate(visit.locale.code, text));
            }
        }
    }
    values["csrf_field"] = json!(CSRF_FIELD);
    values["csrf_token"] = json!(token);
    let mut r = with_cookie(
        page(app, visit, headers, template, status, values, None),
        cookie,
    );
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// A local path to go back to (`came_from`), nothing else: one `/`, then printable ASCII
/// only. Browsers drop tabs and newlines inside a URL and strip control characters and spaces
/// around it, and read `\\` as `/`, so `/\t/evil.example` or `/\\evil.example` would leave
/// the site; any control character, whitespace or backslash, and a `//` start, is refused.
pub(crate) fn came_from(raw: Option<&str>) -> Option<String> {
    raw.filter(|p| {
        p.starts_with('/')
            && !p.starts_with("//")
            && p.bytes().all(|b| b.is_ascii_graphic() && b != b'\\')
    })
    .map(str::to_string)
}

/// The 403 page of a form sent without its CSRF token (or with another session's).
fn expired(app: &AppState, visit: &Visit, headers: &HeaderMap) -> Response {
    page(
        app,
        visit,
        headers,
        "error.html",
        StatusCode::FORBIDDEN,
        json!({"status": 403, "message": "The form has expired: please send it again."}),
        None,
    )
}

/// The form's CSRF token checked, then its fields; `Err` is the answer to give instead (403
/// for a missing or wrong token, or a body too large or broken).
pub(crate) async fn checked_form(
    app: &AppState,
    visit: &Visit,
    headers: &HeaderMap,
    body: axum::body::Body,
) -> Result<Form, Response> {
    read_checked(app, visit, headers, body, false).await
}

async fn read_checked(
    app: &AppState,
    visit: &Visit,
    headers: &HeaderMap,
    body: axum::body::Body,
    files: bool,
) -> Result<Form, Response> {
    let sessions = sessions(app).ok_or_else(|| StatusCode::NOT_FOUND.into_response())?;
    let Some(form) = read_form(app, headers, body, files).await else {
        // The token cannot be read from a body that was not read: refused as a stale form is.
        return Err(expired(app, visit, headers));
    };
    if !sessions.csrf_ok(headers, form.get(CSRF_FIELD)) {
        return Err(expired(app, visit, headers));
    }
    Ok(form)
}

/// A posted form's request head, its visit and its checked form (see [`checked_form`]); `Err`
/// is the answer to give instead.
pub(crate) async fn posted(
    app: &AppState,
    req: axum::extract::Request,
) -> Result<(axum::http::request::Parts, Visit, Form), Response> {
    let (parts, body) = req.into_parts();
    let visit = crate::visit::visit(app, &parts.uri, &parts.headers).await;
    let form = checked_form(app, &visit, &parts.headers, body).await?;
    Ok((parts, visit, form))
}

/// [`posted`] for a form that takes a file: only a logged-in visitor's body is read (anyone
/// else goes to the login page first, the body unread).
pub(crate) async fn posted_with_files(
    app: &AppState,
    req: axum::extract::Request,
) -> Result<(axum::http::request::Parts, Visit, Form), Response> {
    let (parts, body) = req.into_parts();
    let visit = crate::visit::visit(app, &parts.uri, &parts.headers).await;
    if visit.user.is_none() {
        return Err(to_login(&visit, parts.uri.path()));
    }
    let form = read_checked(app, &visit, &parts.headers, body, true).await?;
    Ok((parts, visit, form))
}

/// A validation error's messages by field (`{"name": ["That URL is already in use."]}`),
/// nested errors (a resource's, a tag's) flattened to their first message.
pub(crate) fn field_errors(e: &CkanError) -> Value {
    let mut out = serde_json::Map::new();
    if let Value::Object(m) = e.to_error_object() {
        for (k, v) in m {
            if k == "__type" || k == "message" {
                continue;
            }
            if let Some(msg) = first_message(&v) {
                out.insert(k, json!(msg));
            }
        }
    }
    if out.is_empty() {
        let msg = e
            .message()
            .map(str::to_string)
            .unwrap_or_else(|| "The data could not be saved.".into());
        out.insert("__form".into(), json!(msg));
    }
    Value::Object(out)
}

fn first_message(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(a) => a.iter().find_map(first_message),
        Value::Object(m) => m.values().find_map(first_message),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::came_from;

    #[test]
    fn came_from_is_a_local_path_or_nothing() {
        assert_eq!(
            came_from(Some("/dataset?q=a%20b")).as_deref(),
            Some("/dataset?q=a%20b")
        );
        for bad in [
            "//evil.example",
            "/\\evil.example",
            "/\t/evil.example",
            "/\n/evil.example",
            "/\r/evil.example",
            "/\u{b}/evil.example",
            "/\u{7f}/evil.example",
            "/ /evil.example",
            "/\u{a0}/x",
            "https://evil.example",
            "evil.example",
            "",
        ] {
            assert_eq!(came_from(Some(bad)), None, "{bad:?}");
        }
    }
}
