//! The pages: their routes, the actions each calls, and the values its template gets.

use std::sync::Arc;

use axum::extract::{OriginalUri, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use catalog_framework::prelude::*;
use catalog_framework::web::{identify, page_alternates, SharedPage};

use sha2::{Digest, Sha256};

use crate::i18n::{self, Locale};
use crate::render::{page, respond, respond_tagged, Visit};

/// The built-in template set (layer 0).
pub(crate) const BUILT_IN: &[(&str, &str)] = &[
    ("base.html", include_str!("../templates/base.html")),
    (
        "dataset/activity.html",
        include_str!("../templates/dataset/activity.html"),
    ),
    (
        "user/login.html",
        include_str!("../templates/user/login.html"),
    ),
    (
        "user/read.html",
        include_str!("../templates/user/read.html"),
    ),
    (
        "user/api_tokens.html",
        include_str!("../templates/user/api_tokens.html"),
    ),
    (
        "macros/form.html",
        include_str!("../templates/macros/form.html"),
    ),
    (
        "dataset/new.html",
        include_str!("../templates/dataset/new.html"),
    ),
    (
        "dataset/resource_form.html",
        include_str!("../templates/dataset/resource_form.html"),
    ),
    (
        "confirm_delete.html",
        include_str!("../templates/confirm_delete.html"),
    ),
    (
        "user/register.html",
        include_str!("../templates/user/register.html"),
    ),
    (
        "user/dashboard.html",
        include_str!("../templates/user/dashboard.html"),
    ),
    (
        "admin/config.html",
        include_str!("../templates/admin/config.html"),
    ),
    (
        "admin/trash.html",
        include_str!("../templates/admin/trash.html"),
    ),
    ("home.html", include_str!("../templates/home.html")),
    ("error.html", include_str!("../templates/error.html")),
    (
        "dataset/search.html",
        include_str!("../templates/dataset/search.html"),
    ),
    (
        "dataset/read.html",
        include_str!("../templates/dataset/read.html"),
    ),
    (
        "dataset/resource_read.html",
        include_str!("../templates/dataset/resource_read.html"),
    ),
    (
        "organization/index.html",
        include_str!("../templates/organization/index.html"),
    ),
    (
        "organization/read.html",
        include_str!("../templates/organization/read.html"),
    ),
    (
        "group/index.html",
        include_str!("../templates/group/index.html"),
    ),
    (
        "group/read.html",
        include_str!("../templates/group/read.html"),
    ),
    (
        "snippets/search.html",
        include_str!("../templates/snippets/search.html"),
    ),
    (
        "snippets/package_item.html",
        include_str!("../templates/snippets/package_item.html"),
    ),
    (
        "snippets/pagination.html",
        include_str!("../templates/snippets/pagination.html"),
    ),
    (
        "harvest/index.html",
        include_str!("../templates/harvest/index.html"),
    ),
    (
        "harvest/read.html",
        include_str!("../templates/harvest/read.html"),
    ),
    (
        "harvest/stats.html",
        include_str!("../templates/harvest/stats.html"),
    ),
    (
        "harvest/status.html",
        include_str!("../templates/harvest/status.html"),
    ),
    (
        "harvest/job.html",
        include_str!("../templates/harvest/job.html"),
    ),
];

/// The templates the pages render (each is loaded at start-up, so a broken theme is found
/// then).
pub(crate) const TEMPLATES: &[&str] = &[
    "dataset/new.html",
    "dataset/resource_form.html",
    "confirm_delete.html",
    "user/register.html",
    "user/dashboard.html",
    "admin/config.html",
    "admin/trash.html",
    "home.html",
    "user/login.html",
    "user/read.html",
    "user/api_tokens.html",
    "error.html",
    "dataset/search.html",
    "dataset/read.html",
    "dataset/resource_read.html",
    "dataset/activity.html",
    "organization/index.html",
    "organization/read.html",
    "group/index.html",
    "group/read.html",
    "harvest/index.html",
    "harvest/read.html",
    "harvest/job.html",
];

/// Messages the code passes to templates (facet titles, sort names, errors, activity types):
/// what the catalogs must translate besides the templates' own.
#[cfg(test)]
pub(crate) const MESSAGES: &[&str] = &[
    "Organizations",
    "Groups",
    "Tags",
    "Formats",
    "Licenses",
    "Relevance",
    "Name Ascending",
    "Name Descending",
    "Last Modified",
    "Dataset not found",
    "Resource not found",
    "Organization not found",
    "Group not found",
    "Not authorized to see this page",
    "The search query could not be understood.",
    "The page could not be shown.",
    "User not found",
    "Login failed. Bad username or password.",
    "Too many failed logins: try again in 15 minutes.",
    "The form has expired: please send it again.",
    "Unauthorized to register as a user.",
    "The passwords you entered do not match.",
    "You must add at least one data resource",
    "The data could not be saved.",
    "Missing value",
    "new package",
    "changed package",
    "deleted package",
    "new resource view",
    "changed resource view",
    "deleted resource view",
    "new organization",
    "changed organization",
    "deleted organization",
    "new group",
    "changed group",
    "deleted group",
    "Harvest source not found",
    "Harvest job not found",
];

/// The facets of the search pages, with their titles.
const FACETS: &[(&str, &str)] = &[
    ("organization", "Organizations"),
    ("groups", "Groups"),
    ("tags", "Tags"),
    ("res_format", "Formats"),
    ("license_id", "Licenses"),
];

/// The sort orders offered (CKAN's), the first the default.
const SORTS: &[(&str, &str)] = &[
    ("score desc, metadata_modified desc", "Relevance"),
    ("title_string asc", "Name Ascending"),
    ("title_string desc", "Name Descending"),
    ("metadata_modified desc", "Last Modified"),
];

/// Results per page of the search pages, and the deepest page offered.
const ROWS: usize = 20;
const MAX_PAGE: usize = 500;

/// URLs per sitemap file: the protocol allows 50,000; 10,000 keeps one anonymous request to
/// ten 1,000-row searches.
const SITEMAP_URLS: usize = 10_000;

pub(crate) fn routes() -> Router<AppState> {
    let mut r = crate::harvest::routes(crate::admin::routes(crate::publish::routes(
        crate::user::routes(Router::new()),
    )))
    .route("/robots.txt", get(robots))
    .route("/sitemap.xml", get(sitemap_index))
    .route("/sitemap/{file}", get(sitemap_file))
    .route("/static/web/catalog.css", get(stylesheet));
    for p in i18n::prefixes() {
        r = r
            .route(&format!("{p}/dataset/"), get(search))
            .route(&format!("{p}/dataset"), get(search))
            .route(
                &format!("{p}/dataset/{{id}}/resource/{{resource_id}}"),
                get(resource),
            )
            .route(
                &format!("{p}/dataset/activity/{{id}}"),
                get(dataset_activity),
            )
            .route(&format!("{p}/organization/"), get(organizations))
            .route(&format!("{p}/organization"), get(organizations))
            .route(&format!("{p}/organization/{{id}}"), get(organization))
            .route(&format!("{p}/group/"), get(groups))
            .route(&format!("{p}/group"), get(groups))
            .route(&format!("{p}/group/{{id}}"), get(group));
        if !p.is_empty() {
            r = r
                .route(&format!("{p}/"), get(home_prefixed))
                .route(&p, get(home_prefixed))
                .route(&format!("{p}/dataset/{{id}}"), get(dataset_prefixed));
        }
    }
    r
}

/// The web plugin's part of `/` and `/dataset/{file}`: the HTML page, after the DCAT plugin
/// had its turn (order 100).
pub(crate) struct SharedHtml {
    pub(crate) path: &'static str,
}

#[async_trait]
impl SharedPage for SharedHtml {
    fn path(&self) -> &'static str {
        self.path
    }
    fn order(&self) -> i32 {
        100
    }
    async fn answer(&self, app: &AppState, req: &Parts) -> Option<Response> {
        let visit = visit(app, &req.uri, &req.headers).await;
        if self.path == "/" {
            return Some(home(app, &visit, &req.headers).await);
        }
        let id = last_segment(&req.uri);
        let query = req.uri.query().unwrap_or_default();
        Some(dataset(app, &visit, &req.headers, &id, query).await)
    }
}

/// The locale named by the path's first segment, if it names one of ours (not English, which
/// has no prefix).
fn prefix_locale(path: &str) -> Option<&'static Locale> {
    let first = path.trim_start_matches('/').split('/').next()?;
    i18n::LOCALES
        .iter()
        .find(|l| l.code != "en" && l.code == first)
}

pub(crate) async fn visit(app: &AppState, uri: &Uri, headers: &HeaderMap) -> Visit {
    let path = uri.path();
    let locale = prefix_locale(path);
    let bare = match locale {
        Some(l) => path[l.code.len() + 1..].to_string(),
        None => path.to_string(),
    };
    let bare = if bare.is_empty() { "/".into() } else { bare };
    let user = match identify(app, headers).await {
        Some(u) => Some(u),
        None => session_user(app, headers).await,
    };
    Visit::new(app, locale, &bare, uri.query(), headers, user)
}

/// The user of a valid session cookie, while that user is active.
async fn session_user(app: &AppState, headers: &HeaderMap) -> Option<Principal> {
    let web = app.extension::<crate::Web>()?;
    let session = web.sessions(app).session_user(headers)?;
    let mut ctx = ActionContext::new(app.clone(), None);
    let row = ctx.user_row(&session.user_id).await.ok()??;
    if row.state != "active" || !session.live(&mut ctx, &row).await {
        return None;
    }
    Some(Principal {
        id: row.id,
        name: row.name,
        sysadmin: row.sysadmin,
        state: row.state,
    })
}

/// The path's last segment, percent-decoded.
pub(crate) fn last_segment(uri: &Uri) -> String {
    let raw = uri.path().rsplit('/').next().unwrap_or_default();
    percent_encoding::percent_decode_str(raw)
        .decode_utf8_lossy()
        .into_owned()
}

pub(crate) fn params(pairs: Value) -> Params {
    match pairs {
        Value::Object(m) => m.into_iter().collect(),
        _ => Params::new(),
    }
}

/// The error page for a failed action: 404 for what is missing or hidden (as CKAN: a private
/// dataset is "not found" to whoever may not see it), else the action's status.
pub(crate) fn error_page(
    app: &AppState,
    visit: &Visit,
    headers: &HeaderMap,
    e: &CkanError,
    not_found: &str,
) -> Response {
    let (status, message) = match e.kind {
        ErrorKind::NotFound | ErrorKind::Authorization => (StatusCode::NOT_FOUND, not_found),
        ErrorKind::Validation | ErrorKind::SearchQuery => (
            StatusCode::BAD_REQUEST,
            "The search query could not be understood.",
        ),
        _ => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "The page could not be shown.",
        ),
    };
    page(
        app,
        visit,
        headers,
        "error.html",
        status,
        json!({"status": status.as_u16(), "message": message}),
        None,
    )
}

async fn home_prefixed(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    home(&app, &visit, &headers).await
}

async fn dataset_prefixed(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    let id = last_segment(&uri);
    dataset(&app, &visit, &headers, &id, uri.query().unwrap_or_default()).await
}

/// `/`: the site's title, intro and logo, a search box, counts, recent datasets, the largest
/// organizations and groups.
async fn home(app: &AppState, visit: &Visit, headers: &HeaderMap) -> Response {
    let mut ctx = visit.context(app);
    let recent = ctx
        .call(
            "package_search",
            params(json!({"rows": 5, "sort": "metadata_modified desc", "include_private": true})),
        )
        .await
        .unwrap_or_else(|_| json!({"count": 0, "results": []}));
    let orgs = ctx
        .call(
            "organization_list",
            params(json!({"all_fields": true, "sort": "package_count", "limit": 3})),
        )
        .await
        .unwrap_or_else(|_| json!([]));
    let groups = ctx
        .call(
            "group_list",
            params(json!({"all_fields": true, "sort": "package_count", "limit": 3})),
        )
        .await
        .unwrap_or_else(|_| json!([]));
    let org_count = ctx
        .call("organization_list", Params::new())
        .await
        .ok()
        .and_then(|v| v.as_array().map(Vec::len))
        .unwrap_or_default();
    let group_count = ctx
        .call("group_list", Params::new())
        .await
        .ok()
        .and_then(|v| v.as_array().map(Vec::len))
        .unwrap_or_default();
    page(
        app,
        visit,
        headers,
        "home.html",
        StatusCode::OK,
        json!({
            "recent": recent["results"],
            "dataset_count": recent["count"],
            "organizations": orgs,
            "groups": groups,
            "organization_count": org_count,
            "group_count": group_count,
            "alternates": alternates(app, "/", "/", ""),
        }),
        None,
    )
}

/// The page's other representations (the DCAT plugin's RDF), as the templates list them.
fn alternates(app: &AppState, route: &str, path: &str, query: &str) -> Value {
    page_alternates(app, route, path, query)
        .into_iter()
        .map(|(media, href)| json!({"type": media, "href": href, "label": format_label(&media)}))
        .collect()
}

/// What people call an RDF serialization (the media type when we have no name for it).
fn format_label(media: &str) -> String {
    match media {
        "application/rdf+xml" => "RDF/XML",
        "text/turtle" => "Turtle",
        "text/n3" => "N3",
        "application/ld+json" => "JSON-LD",
        "application/n-triples" => "N-Triples",
        other => other,
    }
    .to_string()
}

/// A search filter term: `key:"value"` with the value's quotes and backslashes escaped.
fn filter_term(key: &str, value: &str) -> String {
    let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
    format!("{key}:\"{escaped}\"")
}

/// Runs the search of a search page (`/dataset/`, an organization's or group's page): the
/// query, the facet filters as sent, the sort (one of [`SORTS`]) and the page; `scope` is a
/// filter the page adds (`owner_org:…`). The values for `snippets/search.html`, and the same
/// search as the catalog endpoint's query string (`q`, `fq`).
pub(crate) async fn run_search(
    ctx: &mut ActionContext,
    visit: &Visit,
    scope: Option<String>,
) -> (StatusCode, Value, String) {
    let q = visit.param("q").unwrap_or_default().to_string();
    let sort = visit
        .param("sort")
        .and_then(|s| SORTS.iter().find(|(k, _)| *k == s))
        .unwrap_or(&SORTS[0])
        .0;
    let page_no = page_number(visit);
    let mut fq: Vec<String> = scope.into_iter().collect();
    let mut active = Vec::new();
    for (key, value) in &visit.query {
        if let Some((_, title)) = FACETS.iter().find(|(k, _)| *k == key.as_str()) {
            if !value.is_empty() && active.len() < 20 {
                fq.push(filter_term(key, value));
                active.push(json!({"field": key, "title": title, "value": value}));
            }
        }
    }
    let mut catalog_query = Vec::new();
    if !q.is_empty() {
        catalog_query.push(("q".to_string(), q.clone()));
    }
    if !fq.is_empty() {
        catalog_query.push(("fq".to_string(), fq.join(" ")));
    }
    let catalog_query = crate::render::query_string(&catalog_query)
        .trim_start_matches('?')
        .to_string();
    let facet_fields: Vec<&str> = FACETS.iter().map(|(k, _)| *k).collect();
    let result = ctx
        .call(
            "package_search",
            params(json!({
                "q": q,
                "fq": fq.join(" "),
                "sort": sort,
                "rows": ROWS,
                "start": (page_no - 1) * ROWS,
                "facet.field": facet_fields,
                "facet.limit": 10,
                "include_private": true,
            })),
        )
        .await;
    let (status, result, error) = match result {
        Ok(r) => (StatusCode::OK, r, None),
        Err(e)
            if matches!(
                e.kind,
                ErrorKind::Validation | ErrorKind::SearchQuery | ErrorKind::Search
            ) =>
        {
            (
                StatusCode::BAD_REQUEST,
                json!({"count": 0, "results": [], "search_facets": {}}),
                Some("The search query could not be understood."),
            )
        }
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"count": 0, "results": [], "search_facets": {}}),
            Some("The page could not be shown."),
        ),
    };
    let count = result["count"].as_u64().unwrap_or_default() as usize;
    let pages = count.div_ceil(ROWS).clamp(1, MAX_PAGE);
    let facets: Vec<Value> = FACETS
        .iter()
        .map(|(key, title)| {
            let items = result["search_facets"][key]["items"].clone();
            let mut items: Vec<Value> = items.as_array().cloned().unwrap_or_default();
            items.sort_by(|a, b| {
                b["count"]
                    .as_i64()
                    .cmp(&a["count"].as_i64())
                    .then(a["display_name"].as_str().cmp(&b["display_name"].as_str()))
            });
            for item in &mut items {
                let name = item["name"].as_str().unwrap_or_default();
                item["active"] = json!(visit
                    .query
                    .iter()
                    .any(|(k, v)| k.as_str() == *key && v.as_str() == name));
            }
            json!({"field": key, "title": title, "items": items})
        })
        .collect();
    let sorts: Vec<Value> = SORTS
        .iter()
        .map(|(value, title)| json!({"value": value, "title": title, "selected": *value == sort}))
        .collect();
    (
        status,
        json!({
            "q": q,
            "count": count,
            "results": result["results"],
            "facets": facets,
            "active": active,
            "sorts": sorts,
            "page_no": page_no,
            "pages": pages,
            "page_numbers": page_numbers(page_no, pages),
            "error": error,
        }),
        catalog_query,
    )
}

/// The `page` parameter: 1 when missing or not a positive number, at most [`MAX_PAGE`].
fn page_number(visit: &Visit) -> usize {
    visit
        .param("page")
        .and_then(|p| p.parse::<usize>().ok())
        .filter(|p| *p >= 1)
        .unwrap_or(1)
        .min(MAX_PAGE)
}

/// The page numbers a pagination shows: the first, the last, and two either side of the
/// current page, with `null` for a gap.
fn page_numbers(current: usize, pages: usize) -> Vec<Option<usize>> {
    let mut out = Vec::new();
    let mut last = 0;
    for n in 1..=pages {
        if n == 1 || n == pages || n.abs_diff(current) <= 2 {
            if last != 0 && n > last + 1 {
                out.push(None);
            }
            out.push(Some(n));
            last = n;
        }
    }
    out
}

/// `/dataset/`: search with facets, active filters, sort and pages.
async fn search(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    let mut ctx = visit.context(&app);
    let (status, mut values, catalog_query) = run_search(&mut ctx, &visit, None).await;
    values["alternates"] = alternates(&app, "/", "/", &catalog_query);
    page(
        &app,
        &visit,
        &headers,
        "dataset/search.html",
        status,
        values,
        None,
    )
}

/// Text safe inside `<script>`: JSON with `<`, `>` and `&` written as escapes.
fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// What a dataset page derives from the dataset's dict alone: its notes as HTML and its
/// schema.org JSON-LD (the heavy part of the page). Kept per dict: the key is a hash of the
/// dict as the visitor got it, so any change to what the visitor sees (an edit, an
/// organization's new title, a relationship the visitor may read) is a new key, never a stale
/// entry.
pub(crate) struct Derived {
    notes_html: String,
    jsonld: Option<String>,
}

/// Dicts whose derived parts are kept, at most; past that the table starts again empty.
pub(crate) const DERIVED_ENTRIES: usize = 1_000;

async fn derived(app: &AppState, ctx: &mut ActionContext, d: &Value) -> Arc<Derived> {
    let key: [u8; 32] = Sha256::digest(d.to_string().as_bytes()).into();
    let web = app.extension::<crate::Web>();
    if let Some(hit) = web.and_then(|w| w.derived_get(&key)) {
        return hit;
    }
    let notes = d["notes"].as_str().unwrap_or_default().to_string();
    let notes_html =
        catalog_framework::markdown::render_off_thread(notes, app.config.site_url().to_string())
            .await
            .unwrap_or_default();
    let jsonld = if ctx.has_action("dcat_dataset_show") {
        ctx.call(
            "dcat_dataset_show",
            params(json!({"id": d["id"], "_format": "jsonld", "profiles": "schemaorg"})),
        )
        .await
        .ok()
        .and_then(|v| v.as_str().map(script_safe))
    } else {
        None
    };
    let out = Arc::new(Derived { notes_html, jsonld });
    if let Some(w) = web {
        w.derived_put(key, out.clone());
    }
    out
}

/// A dataset page as rendered for anonymous visitors: the body, its ETag and modification
/// time.
pub(crate) struct Rendered {
    body: bytes::Bytes,
    etag: String,
    modified: Option<String>,
}

/// The rendered pages kept, bounded in bytes and entries: past either bound the table starts
/// again empty.
#[derive(Default)]
pub(crate) struct RenderedPages {
    pages: std::collections::HashMap<[u8; 32], Arc<Rendered>>,
    bytes: usize,
}

const RENDERED_BYTES: usize = 64 * 1024 * 1024;
const RENDERED_ENTRIES: usize = 4_096;

impl RenderedPages {
    pub(crate) fn get(&self, key: &[u8; 32]) -> Option<Arc<Rendered>> {
        self.pages.get(key).cloned()
    }

    pub(crate) fn put(&mut self, key: [u8; 32], page: Arc<Rendered>) {
        if self.pages.len() >= RENDERED_ENTRIES || self.bytes + page.body.len() > RENDERED_BYTES {
            self.pages.clear();
            self.bytes = 0;
        }
        self.bytes += page.body.len();
        if let Some(old) = self.pages.insert(key, page) {
            self.bytes -= old.body.len();
        }
    }
}

/// The key of an anonymous visitor's dataset page: everything the page shows — the dataset's
/// JSON as `package_show` gave it, the language, the path and query (the language links), and
/// the site's settings that can change at run time.
fn rendered_key(app: &AppState, visit: &Visit, json: &str, raw_query: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    let (title, description) = (app.site_title(), app.site_description());
    let logo = app.site_setting("catalog.site_logo");
    let parts: [&str; 8] = [
        json,
        visit.locale.code,
        visit.prefix.as_str(),
        visit.path.as_str(),
        raw_query,
        title.as_ref(),
        description.as_ref(),
        logo.as_ref(),
    ];
    for part in parts {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    h.finalize().into()
}

/// `/dataset/<name or id>`. An anonymous visitor's page is kept rendered (see
/// [`rendered_key`]): a visit that finds it only hashes the dataset's JSON.
async fn dataset(
    app: &AppState,
    visit: &Visit,
    headers: &HeaderMap,
    id: &str,
    raw_query: &str,
) -> Response {
    let answer = match visit
        .context(app)
        .run_top_answer("package_show", params(json!({"id": id})))
        .await
    {
        Ok(a) => a,
        Err(e) => return error_page(app, visit, headers, &e, "Dataset not found"),
    };
    let key = match (&answer, &visit.user) {
        (catalog_framework::registry::Answer::Serialized(s), None) => {
            Some(rendered_key(app, visit, s.json(), raw_query))
        }
        _ => None,
    };
    let web = app.extension::<crate::Web>();
    if let (Some(key), Some(web)) = (&key, web) {
        if let Some(hit) = web.rendered_get(key) {
            return respond_tagged(
                headers,
                StatusCode::OK,
                "text/html; charset=utf-8",
                hit.body.clone(),
                &hit.etag,
                hit.modified.as_deref(),
            );
        }
    }
    let d = answer.into_value();
    let mut ctx = visit.context(app);
    let name = d["name"].as_str().unwrap_or_default().to_string();
    let site = app.config.site_url().to_string();
    let derived = derived(app, &mut ctx, &d).await;
    let has_activity = ctx.has_action("package_activity_list");
    // What a logged-in visitor may do here (anonymous pages skip both calls).
    let (can_edit, following) = match &visit.user {
        Some(_) => {
            let edit = ctx
                .check_access("package_update", &params(json!({"id": d["id"]})))
                .await
                .is_ok();
            let following = ctx
                .call("am_following_dataset", params(json!({"id": d["id"]})))
                .await
                .ok()
                .map(|v| v == json!(true));
            (edit, following)
        }
        None => (false, None),
    };
    let alternates = alternates(app, "/dataset/{file}", &format!("/dataset/{name}"), "");
    let modified = d["metadata_modified"].as_str().map(str::to_string);
    // The follow button is a form: a logged-in visitor's page carries a CSRF token.
    let (csrf_token, csrf_cookie) = match (&visit.user, crate::forms::sessions(app)) {
        (Some(_), Some(s)) => {
            let (t, c) = s.csrf(headers);
            (Some(t), c)
        }
        _ => (None, None),
    };
    let values = json!({
        "csrf_field": crate::session::CSRF_FIELD,
        "csrf_token": csrf_token,
        "pkg": d,
        "notes_html": derived.notes_html,
        "has_activity": has_activity,
        "can_edit": can_edit,
        "following": following,
        "alternates": alternates,
        "jsonld": derived.jsonld,
        "canonical": format!("{site}/dataset/{name}"),
    });
    let Some(body) = crate::render::render(app, visit, "dataset/read.html", values) else {
        return crate::render::render_failed();
    };
    let rendered = Arc::new(Rendered {
        etag: crate::render::etag_of(body.as_bytes()),
        body: bytes::Bytes::from(body),
        modified,
    });
    if let (Some(key), Some(web)) = (key, web) {
        web.rendered_put(key, rendered.clone());
    }
    let r = respond_tagged(
        headers,
        StatusCode::OK,
        "text/html; charset=utf-8",
        rendered.body.clone(),
        &rendered.etag,
        rendered.modified.as_deref(),
    );
    crate::forms::with_cookie(r, csrf_cookie)
}

/// `/dataset/activity/<name or id>`: the dataset's activity stream (CKAN 2.10's tab of its
/// own: the dataset page stays cheap).
async fn dataset_activity(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    let id = last_segment(&uri);
    let mut ctx = visit.context(&app);
    let d = match ctx.call("package_show", params(json!({"id": id}))).await {
        Ok(d) => d,
        Err(e) => return error_page(&app, &visit, &headers, &e, "Dataset not found"),
    };
    let activity = match ctx
        .call(
            "package_activity_list",
            params(json!({"id": d["id"], "limit": 31})),
        )
        .await
    {
        Ok(a) => a,
        Err(e) => return error_page(&app, &visit, &headers, &e, "Dataset not found"),
    };
    page(
        &app,
        &visit,
        &headers,
        "dataset/activity.html",
        StatusCode::OK,
        json!({"pkg": d, "activity": activity}),
        None,
    )
}

/// `/dataset/<id>/resource/<resource id>`: the resource's metadata, download link and views.
async fn resource(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    let segments: Vec<String> = uri
        .path()
        .split('/')
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect();
    let (id, rid) = match segments.as_slice() {
        [.., id, _, rid] => (id.clone(), rid.clone()),
        _ => (String::new(), String::new()),
    };
    let mut ctx = visit.context(&app);
    let d = match ctx.call("package_show", params(json!({"id": id}))).await {
        Ok(d) => d,
        Err(e) => return error_page(&app, &visit, &headers, &e, "Dataset not found"),
    };
    let Some(res) = d["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["id"] == rid.as_str()))
        .cloned()
    else {
        let e = not_found("Resource not found");
        return error_page(&app, &visit, &headers, &e, "Resource not found");
    };
    let mut views = if ctx.has_action("resource_view_list") {
        ctx.call("resource_view_list", params(json!({"id": rid})))
            .await
            .unwrap_or_else(|_| json!([]))
    } else {
        json!([])
    };
    // Table previews read the DataStore as the visitor, a page at a time: the page is then
    // not dated by the dataset (the rows change on their own).
    let mut has_table = false;
    if let Value::Array(list) = &mut views {
        for v in list.iter_mut() {
            if v["view_type"] == "datatables_view" && ctx.has_action("datastore_search") {
                v["table"] = table_preview(&mut ctx, &visit, &rid, v).await;
                has_table = true;
            }
        }
    }
    let description = res["description"].as_str().unwrap_or_default().to_string();
    let description_html = catalog_framework::markdown::render_off_thread(
        description,
        app.config.site_url().to_string(),
    )
    .await
    .unwrap_or_default();
    let modified = d["metadata_modified"]
        .as_str()
        .filter(|_| !has_table)
        .map(str::to_string);
    let can_edit = visit.user.is_some()
        && ctx
            .check_access("package_update", &params(json!({"id": d["id"]})))
            .await
            .is_ok();
    page(
        &app,
        &visit,
        &headers,
        "dataset/resource_read.html",
        StatusCode::OK,
        json!({
            "pkg": d, "res": res, "views": views, "description_html": description_html,
            "can_edit": can_edit,
        }),
        modified.as_deref(),
    )
}

/// Rows a table preview shows per page.
const PREVIEW_ROWS: usize = 20;

/// A cell as the table preview shows it: text, cut at `max` characters with an ellipsis.
fn preview_cell(v: &Value, max: usize) -> String {
    let s = match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.chars().count() > max {
        let cut: String = s.chars().take(max).collect();
        format!("{cut}…")
    } else {
        s
    }
}

/// One page of a `datatables_view`'s rows (`page`, and `q` when the view is filterable),
/// from `datastore_search` as the visitor may read it.
async fn table_preview(ctx: &mut ActionContext, visit: &Visit, rid: &str, view: &Value) -> Value {
    let page_no = page_number(visit);
    let filterable = view["filterable"] != json!(false);
    let q: String = if filterable {
        visit
            .param("q")
            .unwrap_or_default()
            .trim()
            .chars()
            .take(200)
            .collect()
    } else {
        String::new()
    };
    let max = view["ellipsis_length"]
        .as_u64()
        .filter(|n| *n > 0)
        .unwrap_or(100)
        .min(10_000) as usize;
    let mut p = json!({
        "resource_id": rid, "limit": PREVIEW_ROWS, "offset": (page_no - 1) * PREVIEW_ROWS,
        "records_format": "lists",
    });
    if !q.is_empty() {
        p["q"] = json!(q);
    }
    if let Some(fields) = view["show_fields"].as_array().filter(|f| !f.is_empty()) {
        let mut wanted = vec![json!("_id")];
        wanted.extend(fields.iter().cloned());
        p["fields"] = Value::Array(wanted);
    }
    let found = match ctx.call("datastore_search", params(p)).await {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!(resource = rid, error = ?e.body, "table preview");
            return json!({"error": true});
        }
    };
    let fields: Vec<Value> = found["fields"]
        .as_array()
        .map(|f| f.iter().map(|f| f["id"].clone()).collect())
        .unwrap_or_default();
    let rows: Vec<Vec<String>> = found["records"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    r.as_array()
                        .map(|cells| cells.iter().map(|c| preview_cell(c, max)).collect())
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default();
    let total = found["total"].as_u64().unwrap_or(0) as usize;
    let pages = total.div_ceil(PREVIEW_ROWS).clamp(1, MAX_PAGE);
    let first = (page_no - 1) * PREVIEW_ROWS + 1;
    json!({
        "fields": fields, "rows": rows, "total": total, "q": q, "filterable": filterable,
        "page": page_no, "pages": pages, "page_numbers": page_numbers(page_no, pages),
        "first": first, "last": first + rows.len().saturating_sub(1),
    })
}

/// The list pages of organizations and groups: `q`, `sort` (name or size) and pages of 20.
async fn group_list_page(
    app: &AppState,
    uri: &Uri,
    headers: &HeaderMap,
    organizations: bool,
) -> Response {
    let visit = visit(app, uri, headers).await;
    let mut ctx = visit.context(app);
    let q = visit.param("q").unwrap_or_default().to_string();
    let sort = match visit.param("sort") {
        Some("package_count") => "package_count",
        _ => "title asc",
    };
    let page_no = page_number(&visit);
    let action = if organizations {
        "organization_list"
    } else {
        "group_list"
    };
    let items = ctx
        .call(
            action,
            params(json!({
                "all_fields": true, "q": q, "sort": sort,
                "limit": ROWS + 1, "offset": (page_no - 1) * ROWS,
            })),
        )
        .await
        .unwrap_or_else(|_| json!([]));
    let mut items = items.as_array().cloned().unwrap_or_default();
    let more = items.len() > ROWS;
    items.truncate(ROWS);
    let template = if organizations {
        "organization/index.html"
    } else {
        "group/index.html"
    };
    page(
        app,
        &visit,
        headers,
        template,
        StatusCode::OK,
        json!({"items": items, "q": q, "sort": sort, "page_no": page_no, "more": more}),
        None,
    )
}

async fn organizations(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    group_list_page(&app, &uri, &headers, true).await
}

async fn groups(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    group_list_page(&app, &uri, &headers, false).await
}

/// An organization's or group's page: its description and the dataset search scoped to it.
async fn group_page(
    app: &AppState,
    uri: &Uri,
    headers: &HeaderMap,
    organization: bool,
) -> Response {
    let visit = visit(app, uri, headers).await;
    let mut ctx = visit.context(app);
    let id = last_segment(uri);
    let (action, missing) = if organization {
        ("organization_show", "Organization not found")
    } else {
        ("group_show", "Group not found")
    };
    let g = match ctx
        .call(action, params(json!({"id": id, "include_datasets": false})))
        .await
    {
        Ok(g) => g,
        Err(e) => return error_page(app, &visit, headers, &e, missing),
    };
    let scope = if organization {
        filter_term("owner_org", g["id"].as_str().unwrap_or_default())
    } else {
        filter_term("groups", g["name"].as_str().unwrap_or_default())
    };
    let (status, mut values, _) = run_search(&mut ctx, &visit, Some(scope)).await;
    let description = g["description"].as_str().unwrap_or_default().to_string();
    values["description_html"] = json!(catalog_framework::markdown::render_off_thread(
        description,
        app.config.site_url().to_string()
    )
    .await
    .unwrap_or_default());
    values["group"] = g;
    let template = if organization {
        "organization/read.html"
    } else {
        "group/read.html"
    };
    page(app, &visit, headers, template, status, values, None)
}

async fn organization(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    group_page(&app, &uri, &headers, true).await
}

async fn group(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    group_page(&app, &uri, &headers, false).await
}

/// `/robots.txt`: everything may be crawled but the API and the search page's endless
/// query combinations; the sitemap named.
async fn robots(State(app): State<AppState>) -> Response {
    let body = format!(
        "User-agent: *\nDisallow: /api/\nDisallow: /dataset/?\nDisallow: /*/dataset/?\n\nSitemap: {}/sitemap.xml\n",
        app.config.site_url()
    );
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

/// The number of public datasets, as an anonymous visitor's search counts them.
async fn public_count(app: &AppState) -> CkanResult<usize> {
    let mut ctx = ActionContext::new(app.clone(), None);
    let r = ctx
        .call("package_search", params(json!({"rows": 0})))
        .await?;
    Ok(r["count"].as_u64().unwrap_or_default() as usize)
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `/sitemap.xml`: a sitemap index, one file per [`SITEMAP_URLS`] public datasets.
async fn sitemap_index(State(app): State<AppState>, headers: HeaderMap) -> Response {
    let count = match public_count(&app).await {
        Ok(c) => c,
        Err(_) => return (StatusCode::SERVICE_UNAVAILABLE, "Try again later").into_response(),
    };
    let site = xml_escape(app.config.site_url());
    let mut body = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for n in 1..=count.div_ceil(SITEMAP_URLS).max(1) {
        body.push_str(&format!(
            "<sitemap><loc>{site}/sitemap/datasets-{n}.xml</loc></sitemap>\n"
        ));
    }
    body.push_str("</sitemapindex>\n");
    respond(
        &headers,
        StatusCode::OK,
        "application/xml; charset=utf-8",
        body,
        None,
    )
}

/// `/sitemap/datasets-<n>.xml`: the n-th [`SITEMAP_URLS`] public datasets by name, with their
/// modification dates.
async fn sitemap_file(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let n = last_segment(&uri)
        .strip_prefix("datasets-")
        .and_then(|r| r.strip_suffix(".xml"))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| *n >= 1 && *n <= 10_000);
    let Some(n) = n else {
        return (StatusCode::NOT_FOUND, "Not found").into_response();
    };
    let site = xml_escape(app.config.site_url());
    let mut ctx = ActionContext::new(app.clone(), None);
    let mut body = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    let first = (n - 1) * SITEMAP_URLS;
    let mut start = first;
    while start < first + SITEMAP_URLS {
        let r = ctx
            .call(
                "package_search",
                params(json!({
                    "rows": 1000, "start": start, "sort": "name asc",
                    "fl": "name,metadata_modified",
                })),
            )
            .await;
        let Ok(r) = r else {
            return (StatusCode::SERVICE_UNAVAILABLE, "Try again later").into_response();
        };
        let rows = r["results"].as_array().cloned().unwrap_or_default();
        for d in &rows {
            let name = d["name"].as_str().unwrap_or_default();
            let modified: String = d["metadata_modified"]
                .as_str()
                .unwrap_or_default()
                .chars()
                .take(10)
                .collect();
            body.push_str(&format!(
                "<url><loc>{site}/dataset/{}</loc><lastmod>{}</lastmod></url>\n",
                xml_escape(name),
                xml_escape(&modified)
            ));
        }
        if rows.len() < 1000 {
            break;
        }
        start += 1000;
    }
    body.push_str("</urlset>\n");
    respond(
        &headers,
        StatusCode::OK,
        "application/xml; charset=utf-8",
        body,
        None,
    )
}

/// The one stylesheet.
async fn stylesheet(headers: HeaderMap) -> Response {
    let mut r = respond(
        &headers,
        StatusCode::OK,
        "text/css; charset=utf-8",
        include_str!("../static/catalog.css").to_string(),
        None,
    );
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("public, max-age=3600"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pagination_shows_ends_and_neighbours() {
        let shown = |c, p| {
            page_numbers(c, p)
                .into_iter()
                .map(|n| n.map_or("…".to_string(), |n| n.to_string()))
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(shown(1, 1), "1");
        assert_eq!(shown(5, 10), "1 … 3 4 5 6 7 … 10");
        assert_eq!(shown(1, 4), "1 2 3 4");
    }

    #[test]
    fn filters_and_scripts_are_escaped() {
        assert_eq!(
            filter_term("tags", "a \"b\" \\c"),
            "tags:\"a \\\"b\\\" \\\\c\""
        );
        assert_eq!(
            script_safe("{\"x\":\"</script><!--&\"}"),
            "{\"x\":\"\\u003c/script\\u003e\\u003c!--\\u0026\"}"
        );
    }
}
