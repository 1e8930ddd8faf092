//! The Util API (spec §10.4): autocompletes, markdown, slugs, munging, status, under
//! `/api[/1|/2]/util/…`. Autocompletes run the Action API's autocomplete actions as the
//! caller; `is_slug_valid` and `create_slug` read names directly (datasets and groups in any
//! state hold their names, which no action lists).

use axum::extract::{Request, State};
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use catalog_framework::prelude::*;
use catalog_framework::store;
use catalog_framework::web::{bare_error, path_after};

use crate::common::{bad_request, from_ckan, not_found_error, LegacyRequest};
use crate::search::{pairs_to_params, request_pairs};
use catalog_framework::markdown::{render_off_thread, MAX_CHARS};
use catalog_framework::munge::{munge_name, munge_tag, munge_title_to_name};

pub(crate) fn routes() -> Router<AppState> {
    let mut r = Router::new();
    for prefix in ["/api", "/api/1", "/api/2"] {
        r = r.route(&format!("{prefix}/util/{{*path}}"), get(util).post(util));
    }
    r
}

/// The most an autocomplete answers, whatever `limit` asks (group autocomplete: CKAN 2.7's 50).
const AUTOCOMPLETE_MAX: usize = 1000;
const GROUP_AUTOCOMPLETE_MAX: usize = 50;

/// The names CKAN 2.7 refused as slugs whatever the database held.
const RESERVED_SLUGS: &[&str] = &["new", "edit", "search"];

/// A util request's parameters: the query string and a form body; a repeated key counts by its
/// last value (webob's `request.params.get`).
struct UtilParams(Params);

impl UtilParams {
    fn get(&self, key: &str) -> Option<String> {
        match self.0.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Array(a) => a.last().and_then(Value::as_str).map(str::to_string),
            _ => None,
        }
    }

    /// `get`, empty when absent.
    fn text(&self, key: &str) -> String {
        self.get(key).unwrap_or_default()
    }

    /// `limit`: an integer ≥ 0 capped at `max`; anything else is the default (as CKAN's group
    /// autocomplete read it).
    fn limit(&self, default: usize, max: usize) -> usize {
        self.get("limit")
            .and_then(|l| l.trim().parse::<usize>().ok())
            .unwrap_or(default)
            .min(max)
    }
}

/// `urllib.unquote` (CKAN's tag autocomplete decoded `incomplete` once more): `%XX` decoded,
/// `+` kept; invalid UTF-8 replaced.
fn unquote(s: &str) -> String {
    percent_decode(s.as_bytes())
}

fn percent_decode(b: &[u8]) -> String {
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn util(State(app): State<AppState>, req: Request) -> Response {
    let path = path_after(req.uri(), "/util/");
    let req = match LegacyRequest::read(app, req).await {
        Ok(r) => r,
        Err(resp) => return resp,
    };
    let p = UtilParams(pairs_to_params(&request_pairs(&req)));
    match path.trim_end_matches('/') {
        "dataset/autocomplete" => dataset_autocomplete(&req, &p).await,
        "tag/autocomplete" => tag_autocomplete(&req, &p).await,
        "resource/format_autocomplete" => format_autocomplete(&req, &p).await,
        "user/autocomplete" => user_autocomplete(&req, &p).await,
        "group/autocomplete" => group_autocomplete(&req, &p, false).await,
        "organization/autocomplete" => group_autocomplete(&req, &p, true).await,
        "markdown" => markdown(&req, p.text("q")).await,
        "is_slug_valid" => is_slug_valid(&req, &p).await,
        "dataset/create_slug" => create_slug(&req, &p).await,
        "dataset/munge_name" => req.ok(&json!(munge_name(&p.text("name")))),
        "dataset/munge_title_to_name" => {
            let title = p.get("title").filter(|t| !t.is_empty());
            let title = title.unwrap_or_else(|| p.text("name"));
            req.ok(&json!(munge_title_to_name(&title)))
        }
        "tag/munge" => {
            let tag = p.get("tag").filter(|t| !t.is_empty());
            let tag = tag.unwrap_or_else(|| p.text("name"));
            req.ok(&json!(munge_tag(&tag)))
        }
        "status" => status(&req).await,
        _ => not_found_error(""),
    }
}

/// `/util/markdown?q=…`: the text rendered as sanitized HTML; a text longer than CKAN would
/// ever hold in a field is refused rather than rendered in part.
async fn markdown(req: &LegacyRequest, text: String) -> Response {
    if text.chars().nth(MAX_CHARS).is_some() {
        return bad_request(&format!(
            "Markdown text too long (at most {MAX_CHARS} characters)"
        ));
    }
    let site = req.app.config.site_url().to_string();
    match render_off_thread(text, site).await {
        Ok(html) => req.ok(&json!(html)),
        Err(e) => from_ckan(&e),
    }
}

/// Runs an autocomplete action as the caller; a failure in its legacy form.
async fn run(req: &LegacyRequest, action: &str, params: Params) -> Result<Value, Response> {
    req.run(action, params).await.map_err(|e| from_ckan(&e))
}

fn q_limit(q: String, limit: usize) -> Params {
    let mut m = Params::new();
    m.insert("q".into(), json!(q));
    m.insert("limit".into(), json!(limit));
    m
}

/// `{"ResultSet": {"Result": [...]}}`, the shape of CKAN's YUI-era autocompletes.
fn result_set(items: Vec<Value>) -> Value {
    json!({"ResultSet": {"Result": items}})
}

/// `dataset/autocomplete?incomplete=&limit=10` → `package_autocomplete`'s dicts.
async fn dataset_autocomplete(req: &LegacyRequest, p: &UtilParams) -> Response {
    let q = p.text("incomplete");
    let limit = p.limit(10, AUTOCOMPLETE_MAX);
    if q.is_empty() {
        return req.ok(&result_set(Vec::new()));
    }
    match run(req, "package_autocomplete", q_limit(q, limit)).await {
        Ok(v) => req.ok(&result_set(v.as_array().cloned().unwrap_or_default())),
        Err(r) => r,
    }
}

/// `tag/autocomplete?incomplete=&limit=10&vocabulary_id=` → `[{"Name": tag}]`.
async fn tag_autocomplete(req: &LegacyRequest, p: &UtilParams) -> Response {
    let q = unquote(&p.text("incomplete"));
    let limit = p.limit(10, AUTOCOMPLETE_MAX);
    if q.is_empty() {
        return req.ok(&result_set(Vec::new()));
    }
    let mut params = q_limit(q, limit);
    if let Some(v) = p.get("vocabulary_id").filter(|v| !v.is_empty()) {
        params.insert("vocabulary_id".into(), json!(v));
    }
    match run(req, "tag_autocomplete", params).await {
        Ok(v) => {
            let items = v
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| json!({"Name": t}))
                .collect();
            req.ok(&result_set(items))
        }
        Err(r) => r,
    }
}

/// `resource/format_autocomplete?incomplete=&limit=5` → `[{"Format": format}]`.
async fn format_autocomplete(req: &LegacyRequest, p: &UtilParams) -> Response {
    let q = p.text("incomplete");
    let limit = p.limit(5, AUTOCOMPLETE_MAX);
    if q.is_empty() {
        return req.ok(&result_set(Vec::new()));
    }
    match run(req, "format_autocomplete", q_limit(q, limit)).await {
        Ok(v) => {
            let items = v
                .as_array()
                .into_iter()
                .flatten()
                .map(|f| json!({"Format": f}))
                .collect();
            req.ok(&result_set(items))
        }
        Err(r) => r,
    }
}

/// `user/autocomplete?q=&limit=20` → `[{"id", "name", "fullname"}]`; no `q`, no users.
async fn user_autocomplete(req: &LegacyRequest, p: &UtilParams) -> Response {
    let q = p.text("q");
    let limit = p.limit(20, AUTOCOMPLETE_MAX);
    if q.is_empty() {
        return req.ok(&json!([]));
    }
    match run(req, "user_autocomplete", q_limit(q, limit)).await {
        Ok(v) => req.ok(&v),
        Err(r) => r,
    }
}

/// `group/autocomplete?q=&limit=20` (at most 50; an empty `q` lists groups, as CKAN 2.7's
/// did) and `organization/autocomplete?q=&limit=20` (no `q`, no organizations) →
/// `[{"id", "name", "title"}]`.
async fn group_autocomplete(req: &LegacyRequest, p: &UtilParams, is_org: bool) -> Response {
    let q = p.text("q");
    let (limit, action) = if is_org {
        (p.limit(20, AUTOCOMPLETE_MAX), "organization_autocomplete")
    } else {
        (p.limit(20, GROUP_AUTOCOMPLETE_MAX), "group_autocomplete")
    };
    if is_org && q.is_empty() {
        return req.ok(&json!([]));
    }
    match run(req, action, q_limit(q, limit)).await {
        Ok(v) => req.ok(&v),
        Err(r) => r,
    }
}

/// Whether a dataset (`package`) or a group or organization (`group`) of any state holds a name.
async fn name_taken(req: &LegacyRequest, table: &str, name: &str) -> Result<bool, Response> {
    let mut ctx = req.context();
    let taken = async {
        let conn = ctx.db().await?;
        let taken = if table == "package" {
            store::package_name_holder(conn, name).await?.is_some()
        } else {
            store::group_name_taken(conn, name).await?
        };
        CkanResult::Ok(taken)
    };
    taken.await.map_err(|_| {
        bare_error(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "Internal Server Error",
        )
    })
}

/// `is_slug_valid?type=package|group&slug=` → `{"valid": bool}`: false when the name is held
/// (any state) or reserved; the name's format is not checked (CKAN 2.7).
async fn is_slug_valid(req: &LegacyRequest, p: &UtilParams) -> Response {
    let slug = p.text("slug");
    let slug_type = p.text("type");
    let table = match slug_type.as_str() {
        "package" => "package",
        "group" => "catalog_group",
        other => return bad_request(&format!("Bad slug type: {other}")),
    };
    match name_taken(req, table, &slug).await {
        Ok(taken) => req.ok(&json!({"valid": !(taken || RESERVED_SLUGS.contains(&slug.as_str()))})),
        Err(r) => r,
    }
}

/// `dataset/create_slug?title=` → `{"valid", "name"}`: the title munged to a name (with `_` as
/// `-`) and whether no dataset holds it.
async fn create_slug(req: &LegacyRequest, p: &UtilParams) -> Response {
    let name = munge_title_to_name(&p.text("title")).replace('_', "-");
    match name_taken(req, "package", &name).await {
        Ok(taken) => req.ok(&json!({"valid": !taken, "name": name})),
        Err(r) => r,
    }
}

/// `status` → the site's description, as `status_show` gives it (`ckan_version` only where
/// status_show shows it).
async fn status(req: &LegacyRequest) -> Response {
    let s = match run(req, "status_show", Params::new()).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let mut out = Map::new();
    for key in [
        "ckan_version",
        "site_url",
        "site_title",
        "site_description",
        "locale_default",
        "extensions",
    ] {
        if let Some(v) = s.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    req.ok(&Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unquote_decodes_percent_only() {
        assert_eq!(unquote("a%20b+c"), "a b+c");
        assert_eq!(unquote("%"), "%");
        assert_eq!(unquote("%4"), "%4");
        assert_eq!(unquote("%zz%41"), "%zzA");
        assert_eq!(unquote("%ff"), "\u{fffd}");
    }
}
