//! Turning a page's data into a response: the template environment's functions and filters,
//! the values every page has (site, locale, user, alternates), and caching headers.

use std::sync::{Arc, OnceLock};

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use catalog_framework::prelude::*;
use minijinja::value::{Kwargs, ViaDeserialize};
use minijinja::{Environment, State};
use sha2::{Digest, Sha256};

use crate::i18n::{self, Catalogs, Locale};
use crate::state::Web;
use crate::templates::{environment as layered, Layers};

fn catalogs() -> &'static Catalogs {
    static CATALOGS: OnceLock<Catalogs> = OnceLock::new();
    CATALOGS.get_or_init(Catalogs::load)
}

/// The layered environment with the pages' functions and filters:
/// - `_("text", name=value…)`: `text` in the page's locale, `{name}` replaced by `value`;
/// - `ngettext("{n} thing", "{n} things", n, name=value…)`: the form for the count `n` by the
///   locale's plural rule, `{n}` and each `{name}` replaced;
/// - `url_with(query, key, value)`: the page's query with one parameter set (or removed when
///   the value is none), for facet, sort and page links;
/// - `|filesize`, `|date`: a byte count and an ISO date for people.
pub(crate) fn environment(layers: Arc<Layers>) -> Environment<'static> {
    let mut env = layered(layers);
    env.add_function("_", gettext);
    env.add_function("ngettext", ngettext);
    env.add_function("url_with", url_with);
    env.add_function("url_add", url_add);
    env.add_function("url_remove", url_remove);
    env.add_filter("truncate", truncate);
    env.add_filter("filesize", filesize);
    env.add_filter("date", date);
    env.add_filter("datetime", datetime);
    env.add_filter("safe_url", safe_url);
    env
}

/// A link target safe to put in `href`/`src`: an http(s), ftp or mailto URL, or a path; any
/// other scheme (`javascript:`, `data:`, `vbscript:` …) becomes `#`. Stored URLs are whatever a
/// publisher typed: CKAN keeps them as given, the page must not make them run.
fn safe_url(v: minijinja::Value) -> String {
    let s = v.as_str().unwrap_or_default().trim();
    let scheme_end = s.find(':');
    let first_delim = s.find(['/', '?', '#']);
    let has_scheme = matches!((scheme_end, first_delim), (Some(c), Some(d)) if c < d)
        || (scheme_end.is_some() && first_delim.is_none());
    if !has_scheme {
        return s.to_string();
    }
    let scheme = s[..scheme_end.unwrap_or_default()].to_ascii_lowercase();
    if ["http", "https", "ftp", "ftps", "mailto"].contains(&scheme.as_str()) {
        s.to_string()
    } else {
        "#".to_string()
    }
}

/// `msgid` in the language `lang` (the msgid itself when untranslated).
pub(crate) fn translate(lang: &str, msgid: &str) -> String {
    catalogs().get(lang, msgid).to_string()
}

fn gettext(state: &State, msgid: &str, kwargs: Kwargs) -> Result<String, minijinja::Error> {
    fill(
        catalogs().get(&page_lang(state), msgid).to_string(),
        &kwargs,
    )
}

/// The page's locale (`lang`), English if none.
fn page_lang(state: &State) -> String {
    state
        .lookup("lang")
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "en".into())
}

/// `{key}` of `text` replaced by each keyword argument's value.
fn fill(mut text: String, kwargs: &Kwargs) -> Result<String, minijinja::Error> {
    for key in kwargs.args() {
        let value: minijinja::Value = kwargs.get(key)?;
        text = text.replace(&format!("{{{key}}}"), &value.to_string());
    }
    Ok(text)
}

fn ngettext(
    state: &State,
    singular: &str,
    plural: &str,
    n: minijinja::Value,
    kwargs: Kwargs,
) -> Result<String, minijinja::Error> {
    let count = u64::try_from(n.clone()).unwrap_or(0);
    let text = catalogs().nget(&page_lang(state), singular, plural, count);
    fill(text.replace("{n}", &n.to_string()), &kwargs)
}

/// `query` (a list of `[key, value]` pairs) with `key` set to `value` (every earlier value of
/// `key` dropped; a none value removes it) and `page` reset unless it is the key, as a query
/// string starting with `?` (or empty).
fn url_with(
    query: ViaDeserialize<Vec<(String, String)>>,
    key: &str,
    value: Option<minijinja::Value>,
) -> String {
    let mut pairs: Vec<(String, String)> = query
        .0
        .into_iter()
        .filter(|(k, _)| k != key && (key == "page" || k != "page"))
        .collect();
    if let Some(v) = value.filter(|v| !v.is_none() && !v.is_undefined()) {
        pairs.push((key.to_string(), v.to_string()));
    }
    query_string(&pairs)
}

/// `query` with the pair `key=value` added (a facet filter), the page reset.
fn url_add(query: ViaDeserialize<Vec<(String, String)>>, key: &str, value: &str) -> String {
    let mut pairs: Vec<(String, String)> = query
        .0
        .into_iter()
        .filter(|(k, v)| k != "page" && !(k == key && v == value))
        .collect();
    pairs.push((key.to_string(), value.to_string()));
    query_string(&pairs)
}

/// `query` without the pair `key=value`, the page reset.
fn url_remove(query: ViaDeserialize<Vec<(String, String)>>, key: &str, value: &str) -> String {
    let pairs: Vec<(String, String)> = query
        .0
        .into_iter()
        .filter(|(k, v)| k != "page" && !(k == key && v == value))
        .collect();
    match query_string(&pairs) {
        s if s.is_empty() => "?".into(),
        s => s,
    }
}

/// The first `n` characters, with `…` when cut.
fn truncate(s: &str, n: Option<usize>) -> String {
    let n = n.unwrap_or(255);
    match s.char_indices().nth(n) {
        Some((at, _)) => format!("{}…", s[..at].trim_end()),
        None => s.to_string(),
    }
}

/// `?k=v&…` (form-encoded), or empty for no pairs.
pub(crate) fn query_string(pairs: &[(String, String)]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let mut s = form_urlencoded::Serializer::new(String::from("?"));
    for (k, v) in pairs {
        s.append_pair(k, v);
    }
    s.finish().replacen("?&", "?", 1)
}

fn filesize(v: minijinja::Value) -> String {
    let Some(n) = v.as_i64().filter(|n| *n >= 0) else {
        return String::new();
    };
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut size = n as f64;
    let mut unit = 0;
    while size >= 1024.0 && unit < UNITS.len() - 1 {
        size /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} bytes")
    } else {
        format!("{size:.1} {}", UNITS[unit])
    }
}

/// `2026-11-26T10:11:12.123456` → `2026-11-26`.
fn date(v: minijinja::Value) -> String {
    v.as_str()
        .map(|s| s.chars().take(10).collect())
        .unwrap_or_default()
}

/// `2026-11-28T00:30:39.517067` (or with a space, as ckanext-harvest prints its times) as
/// `2026-11-28 00:30 UTC`: the minute is what a reader of a job list needs.
fn datetime(v: minijinja::Value) -> String {
    let Some(s) = v.as_str() else {
        return String::new();
    };
    if s.len() < 16 || !s.is_char_boundary(16) {
        return s.to_string();
    }
    format!("{} {} UTC", &s[..10], &s[11..16])
}

/// Who is asking and in which language: what every page's template gets.
pub(crate) struct Visit {
    pub(crate) locale: &'static Locale,
    /// `""` or `/<locale>`: what the page's own links start with.
    pub(crate) prefix: String,
    pub(crate) user: Option<Principal>,
    /// The path without the locale prefix (for the language links).
    pub(crate) path: String,
    /// The query's pairs as sent.
    pub(crate) query: Vec<(String, String)>,
}

impl Visit {
    /// The locale: the URL's prefix if it has one, else `Accept-Language`, else
    /// `catalog.locale_default`.
    pub(crate) fn new(
        app: &AppState,
        prefix_locale: Option<&'static Locale>,
        path: &str,
        raw_query: Option<&str>,
        headers: &HeaderMap,
        user: Option<Principal>,
    ) -> Visit {
        let locale = prefix_locale
            .or_else(|| {
                headers
                    .get(header::ACCEPT_LANGUAGE)
                    .and_then(|v| v.to_str().ok())
                    .and_then(i18n::from_accept_language)
            })
            .or_else(|| i18n::locale(&app.config.catalog.locale_default))
            .unwrap_or(&i18n::LOCALES[0]);
        let prefix = prefix_locale.map_or(String::new(), |l| format!("/{}", l.code));
        let query = form_urlencoded::parse(raw_query.unwrap_or_default().as_bytes())
            .take(100)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        Visit {
            locale,
            prefix,
            user,
            path: path.to_string(),
            query,
        }
    }

    /// The first value of a query parameter.
    pub(crate) fn param(&self, key: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// A context for actions as this visitor.
    pub(crate) fn context(&self, app: &AppState) -> ActionContext {
        ActionContext::new(app.clone(), self.user.clone())
    }

    /// What every template gets besides its page's own values.
    fn common(&self, app: &AppState) -> Value {
        let logo = app.site_setting("catalog.site_logo");
        // CKAN's default logo is a file we do not ship: the title stands in for it.
        let logo = (!logo.is_empty() && logo != "/base/images/ckan-logo.png").then_some(logo);
        let locales: Vec<Value> = i18n::LOCALES
            .iter()
            .map(|l| {
                let prefix = if l.code == "en" {
                    String::new()
                } else {
                    format!("/{}", l.code)
                };
                json!({
                    "code": l.code,
                    "name": l.name,
                    "href": format!("{prefix}{}{}", self.path, query_string(&self.query)),
                    "current": l.code == self.locale.code,
                })
            })
            .collect();
        json!({
            "lang": self.locale.code,
            "dir": if self.locale.rtl { "rtl" } else { "ltr" },
            "prefix": self.prefix,
            "site": {
                "title": app.site_title(),
                "description": app.site_description(),
                "intro": app.site_setting("catalog.site_intro_text"),
                "about": app.site_setting("catalog.site_about"),
                "logo": logo,
                "url": app.config.site_url(),
            },
            "user": self.user.as_ref().map(|u| json!({"name": u.name, "sysadmin": u.sysadmin})),
            "register_open": app.config.catalog.auth.create_user_via_web,
            "locales": locales,
            "query": self.query,
            "path": self.path,
        })
    }
}

/// Renders `template` with the visit's common values and the page's `values` (a JSON object);
/// `None` when the template failed (logged; answer with [`render_failed`]).
pub(crate) fn render(
    app: &AppState,
    visit: &Visit,
    template: &str,
    values: Value,
) -> Option<String> {
    let web = app.extension::<Web>()?;
    let mut ctx = visit.common(app);
    if let (Some(c), Value::Object(v)) = (ctx.as_object_mut(), values) {
        c.extend(v);
    }
    web.env
        .get_template(template)
        .and_then(|t| t.render(minijinja::Value::from_serialize(&ctx)))
        .map_err(|e| tracing::error!(template, "a page failed to render: {e:#}"))
        .ok()
}

/// The answer when a page could not be rendered.
pub(crate) fn render_failed() -> Response {
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        "The page could not be shown.",
    )
        .into_response()
}

/// Renders `template` (see [`render`]), answering with `status`, an ETag of the body (a
/// matching `If-None-Match` is a 304) and, when given, `Last-Modified`.
pub(crate) fn page(
    app: &AppState,
    visit: &Visit,
    headers: &HeaderMap,
    template: &str,
    status: StatusCode,
    values: Value,
    modified: Option<&str>,
) -> Response {
    match render(app, visit, template, values) {
        Some(body) => respond(headers, status, "text/html; charset=utf-8", body, modified),
        None => render_failed(),
    }
}

/// A strong ETag of a body.
pub(crate) fn etag_of(body: &[u8]) -> String {
    format!("\"{}\"", hex::encode(&Sha256::digest(body)[..12]))
}

/// A text answer with an ETag (a strong hash of the body) and a 304 for a matching
/// `If-None-Match`; pages vary by the caller's identity and language.
pub(crate) fn respond(
    headers: &HeaderMap,
    status: StatusCode,
    content_type: &'static str,
    body: String,
    modified: Option<&str>,
) -> Response {
    let etag = etag_of(body.as_bytes());
    respond_tagged(
        headers,
        status,
        content_type,
        bytes::Bytes::from(body),
        &etag,
        modified,
    )
}

/// [`respond`] with the body's ETag known already (a page kept rendered).
pub(crate) fn respond_tagged(
    headers: &HeaderMap,
    status: StatusCode,
    content_type: &'static str,
    body: bytes::Bytes,
    etag: &str,
    modified: Option<&str>,
) -> Response {
    let matches = status == StatusCode::OK
        && headers
            .get(header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                v.split(',')
                    .any(|t| t.trim().trim_start_matches("W/") == etag)
            });
    let mut response = if matches {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (status, [(header::CONTENT_TYPE, content_type)], body).into_response()
    };
    let h = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    h.insert(
        header::VARY,
        HeaderValue::from_static(
            "Accept-Language, Authorization, X-CKAN-API-Key, X-CATALOG-API-Key, Cookie",
        ),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-cache"),
    );
    if let Some(v) = modified
        .and_then(http_date)
        .and_then(|w| HeaderValue::from_str(&w).ok())
    {
        h.insert(header::LAST_MODIFIED, v);
    }
    response
}

/// CKAN's `metadata_modified` (UTC, no zone) as an HTTP date.
fn http_date(iso: &str) -> Option<String> {
    let t = chrono::NaiveDateTime::parse_from_str(iso, "%Y-%m-%dT%H:%M:%S%.f").ok()?;
    Some(t.and_utc().format("%a, %d %b %Y %H:%M:%S GMT").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_safe_link_targets() {
        for ok in [
            "https://example.org/a.csv",
            "HTTP://x",
            "/dataset/x",
            "a.csv",
            "mailto:a@b",
            "x?y=a:b",
        ] {
            assert_eq!(safe_url(ok.into()), ok, "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            " JavaScript:alert(1)",
            "data:text/html,<b>",
            "vbscript:x",
        ] {
            assert_eq!(safe_url(bad.into()), "#", "{bad}");
        }
    }

    #[test]
    fn sizes_and_dates_for_people() {
        assert_eq!(filesize(1023.into()), "1023 bytes");
        assert_eq!(filesize(1536.into()), "1.5 KiB");
        assert_eq!(filesize((-1).into()), "");
        assert_eq!(date("2026-11-26T10:11:12.5".into()), "2026-11-26");
        assert_eq!(
            http_date("2026-11-26T10:11:12.123456").unwrap(),
            "Thu, 26 Nov 2026 10:11:12 GMT"
        );
    }

    #[test]
    fn query_links_replace_one_key_and_reset_the_page() {
        let q = vec![
            ("q".to_string(), "water & air".to_string()),
            ("page".to_string(), "3".to_string()),
            ("tags".to_string(), "a".to_string()),
        ];
        assert_eq!(
            url_with(ViaDeserialize(q.clone()), "sort", Some("name asc".into())),
            "?q=water+%26+air&tags=a&sort=name+asc"
        );
        assert_eq!(
            url_with(ViaDeserialize(q.clone()), "page", Some(4.into())),
            "?q=water+%26+air&tags=a&page=4"
        );
        assert_eq!(url_with(ViaDeserialize(q), "q", None), "?tags=a");
    }
}
