//! The HTTP side: `/dataset/{id}.{ext}`, the catalog endpoint, and content negotiation on
//! `/dataset/{id}` and `/` (spec/dcat.md §1–2).

use crate::rdf::serialize::EXTENSIONS;
use crate::rdf::RdfFormat;
use crate::rdf::{Dcat, DcatSettings};
use axum::extract::{OriginalUri, RawQuery, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Router;
use catalog_framework::escape;
use catalog_framework::prelude::*;
use catalog_framework::web::path_after;
use catalog_framework::web::{bare_error, envelope, identify, json_response, SharedPage};

use crate::negotiation::negotiate;
use crate::render::{self, CatalogQuery};

pub(crate) fn routes() -> Router<AppState> {
    // The catalog path is configurable (`catalogext.dcat.catalog_endpoint`), so it is matched
    // here rather than as a fixed route.
    Router::new().route("/{*path}", any(other))
}

/// `/`, `/dataset/{file}` and `/dataset_series/{file}`, shared with the web plugin's HTML
/// pages: this plugin answers first (order 0) when RDF is asked for, by extension or by
/// `Accept`, and last (order 1000) with a bare HTML page when no other plugin answered.
pub(crate) struct DcatPage {
    pub(crate) path: &'static str,
    pub(crate) html: bool,
}

#[async_trait]
impl SharedPage for DcatPage {
    fn path(&self) -> &'static str {
        self.path
    }
    fn order(&self) -> i32 {
        if self.html {
            1000
        } else {
            0
        }
    }
    fn alternates(&self, app: &AppState, path: &str, query: &str) -> Vec<(String, String)> {
        let Some(settings) = app.extension::<Dcat>().map(|d| &d.settings) else {
            return Vec::new();
        };
        if self.html || !settings.enable_rdf_endpoints {
            return Vec::new();
        }
        let site = app.config.site_url();
        let qs = if query.is_empty() {
            String::new()
        } else {
            format!("?{query}")
        };
        let href = |ext: &str| {
            if self.path == "/" {
                format!(
                    "{site}{}{qs}",
                    settings.catalog_endpoint.replace("{_format}", ext)
                )
            } else {
                format!("{site}{path}.{ext}")
            }
        };
        alternate_formats()
            .map(|(ext, format)| (format.media_type().to_string(), href(ext)))
            .collect()
    }
    async fn answer(&self, app: &AppState, req: &Parts) -> Option<Response> {
        let raw = req.uri.query().map(str::to_string);
        let headers = &req.headers;
        if self.path == "/" {
            home(app, raw, headers, self.html).await
        } else {
            dataset(app, &req.uri, raw, headers, self.html).await
        }
    }
}

async fn context(app: &AppState, headers: &HeaderMap) -> ActionContext {
    let user = identify(app, headers).await;
    ActionContext::new(app.clone(), user)
}

fn rdf_response(format: RdfFormat, body: Vec<u8>) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, format.media_type())],
        body,
    )
        .into_response()
}

fn error_response(app: &AppState, action: &str, e: CkanError) -> Response {
    let (status, body) = envelope(app, action, Err(e));
    json_response(status, &body)
}

fn not_found_response(app: &AppState) -> Response {
    error_response(app, "dcat_dataset_show", not_found(""))
}

/// What any other unknown path answers (as before this plugin's catch-all route).
fn no_route() -> Response {
    bare_error(StatusCode::NOT_FOUND, "Not found")
}

fn accept(headers: &HeaderMap) -> Option<RdfFormat> {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .and_then(negotiate)
}

fn profiles_param(raw: Option<&str>) -> Option<String> {
    form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
        .find(|(k, _)| k == "profiles")
        .map(|(_, v)| v.into_owned())
}

/// `/dataset/{id}.{ext}` (RDF) or `/dataset/{id}` (negotiated RDF, else, when `html`, the
/// bare HTML page).
async fn dataset(
    app: &AppState,
    uri: &Uri,
    raw: Option<String>,
    headers: &HeaderMap,
    html: bool,
) -> Option<Response> {
    // `/dataset/{file}` or `/dataset_series/{file}`, decoded leniently.
    let path = path_after(uri, "/");
    let file = path.split_once('/').map_or("", |(_, f)| f).to_string();
    let Some(settings) = app.extension::<Dcat>().map(|d| &d.settings) else {
        return html.then(|| not_found_response(app));
    };
    let (id, format) = match file.rsplit_once('.') {
        Some(_) if html => return None,
        Some(_) if !settings.enable_rdf_endpoints => return Some(not_found_response(app)),
        Some((id, ext)) => (id, Some(render::format_of(ext))),
        None => (
            file.as_str(),
            accept(headers)
                .filter(|_| settings.enable_content_negotiation)
                .map(Ok),
        ),
    };
    let Some(format) = format else {
        if !html {
            return None;
        }
        let mut ctx = context(app, headers).await;
        let mut p = Params::new();
        p.insert("id".into(), json!(id));
        return Some(match ctx.call("package_show", p).await {
            Ok(d) => html_dataset(app, settings, &d),
            Err(e) => error_response(app, "package_show", e),
        });
    };
    if html {
        return None;
    }
    let mut ctx = context(app, headers).await;
    let profiles = profiles_param(raw.as_deref());
    Some(
        match render::dataset_document(&mut ctx, id, format, profiles.as_deref()).await {
            Ok((format, body)) => rdf_response(format, body),
            Err(e) => error_response(app, "dcat_dataset_show", e),
        },
    )
}

/// `/`: the catalog when negotiation is on and `Accept` names an RDF type, else (when `html`)
/// the bare home page.
async fn home(
    app: &AppState,
    raw: Option<String>,
    headers: &HeaderMap,
    html: bool,
) -> Option<Response> {
    let Some(settings) = app.extension::<Dcat>().map(|d| &d.settings) else {
        return html.then(|| not_found_response(app));
    };
    if html {
        return Some(html_home(app, settings));
    }
    if settings.enable_content_negotiation {
        if let Some(format) = accept(headers) {
            return Some(catalog(app, headers, raw.as_deref(), "/", format).await);
        }
    }
    None
}

/// Everything else: the catalog endpoint when the path matches it, else 404.
async fn other(
    State(app): State<AppState>,
    method: Method,
    OriginalUri(uri): OriginalUri,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    let path = format!("/{}", path_after(&uri, "/"));
    let Some(settings) = app.extension::<Dcat>().map(|d| &d.settings) else {
        return no_route();
    };
    if !(method == Method::GET || method == Method::HEAD) || !settings.enable_rdf_endpoints {
        return no_route();
    }
    let Some((prefix, suffix)) = settings.catalog_endpoint.split_once("{_format}") else {
        return no_route();
    };
    let ext = path
        .strip_prefix(prefix)
        .and_then(|rest| rest.strip_suffix(suffix))
        .filter(|e| !e.is_empty() && !e.contains('/'));
    let Some(ext) = ext else {
        return no_route();
    };
    match render::format_of(ext) {
        Ok(format) => catalog(&app, &headers, raw.as_deref(), &path, format).await,
        Err(e) => error_response(&app, "dcat_catalog_show", e),
    }
}

async fn catalog(
    app: &AppState,
    headers: &HeaderMap,
    raw: Option<&str>,
    path: &str,
    format: RdfFormat,
) -> Response {
    let mut ctx = context(app, headers).await;
    let query = CatalogQuery::from_query(raw.unwrap_or_default());
    match render::catalog_document(&mut ctx, &query, path, format).await {
        Ok(body) => rdf_response(format, body),
        Err(e) => error_response(app, "dcat_catalog_show", e),
    }
}

/// The formats a page advertises, one extension each (`xml` is `rdf`'s alias).
fn alternate_formats() -> impl Iterator<Item = (&'static str, RdfFormat)> {
    EXTENSIONS
        .iter()
        .filter(|e| **e != "xml")
        .filter_map(|e| RdfFormat::from_extension(e).map(|f| (*e, f)))
}

/// `<link rel="alternate">` tags, one per format, with `href(ext)` (spec: pages advertise
/// their RDF representations).
fn alternates(href: impl Fn(&str) -> String) -> String {
    alternate_formats()
        .map(|(e, f)| {
            format!(
                "<link rel=\"alternate\" type=\"{}\" href=\"{}\">\n",
                f.media_type(),
                escape::html(&href(e))
            )
        })
        .collect()
}

fn html(title: &str, head: &str, body: &str) -> Response {
    let page = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title>\n{head}</head>\n<body>{body}</body></html>\n",
        escape::html(title)
    );
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        page,
    )
        .into_response()
}

fn html_dataset(app: &AppState, settings: &DcatSettings, d: &Value) -> Response {
    let name = d["name"].as_str().unwrap_or_default();
    let title = d["title"]
        .as_str()
        .filter(|t| !t.is_empty())
        .unwrap_or(name);
    let head = if settings.enable_rdf_endpoints {
        let base = format!("{}/dataset/{name}", app.config.site_url());
        alternates(|ext| format!("{base}.{ext}"))
    } else {
        String::new()
    };
    let body = format!(
        "<h1>{}</h1>\n<p>{}</p>\n",
        escape::html(title),
        escape::html(d["notes"].as_str().unwrap_or_default())
    );
    html(title, &head, &body)
}

fn html_home(app: &AppState, settings: &DcatSettings) -> Response {
    let head = if settings.enable_rdf_endpoints {
        let site = app.config.site_url();
        alternates(|ext| {
            format!(
                "{site}{}",
                settings.catalog_endpoint.replace("{_format}", ext)
            )
        })
    } else {
        String::new()
    };
    let title = &app.site_title();
    html(title, &head, &format!("<h1>{}</h1>\n", escape::html(title)))
}
