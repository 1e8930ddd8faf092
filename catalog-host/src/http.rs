//! The Action API's HTTP layer: decode the request, find the action, call it, wrap the result
//! in CKAN's envelope; the `/api` version probes, readiness, the OpenAPI description, and every
//! plugin's routes merged in. Handlers stay thin; the error table is the store's `error`.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Router;
use catalog_framework::context::Upload;
use catalog_framework::prelude::*;
use catalog_framework::store::json::to_ckan_json;
use catalog_framework::web::{
    bare_error, body_limit, envelope, help_url, identify, json_response, mark_sequence, parse_json,
    query_to_params, read_after, read_body, read_request_body, BadRequest, PageRegistration,
    RoutesRegistration, SharedPage, JSON_TYPE,
};
use catalog_framework::web::{is_js_callback, path_after, read_multipart};
use serde_json::json;

/// The full router: the Action API, `/api` version probes, and every plugin's routes.
///
/// Under `/api` every answer is JSON: unknown paths and methods included. Request bodies are
/// bounded by `catalog.max_request_bytes` in `decode_request`, uploads included (axum's own
/// default limit is off), and a panicking handler answers a JSON 500 instead of dropping the
/// connection.
pub fn router(app: AppState) -> Router {
    let mut r: Router<AppState> = Router::new()
        .route("/api/3/action/{*name}", any(action_handler))
        .route("/api/action/{*name}", any(action_handler))
        .route(
            "/api",
            get(|| async { json_response(StatusCode::OK, &json!({"version": 1})) }),
        )
        .route(
            "/api/",
            get(|| async { json_response(StatusCode::OK, &json!({"version": 1})) }),
        )
        .route("/api/3/openapi.json", get(openapi))
        .route("/health/ready", get(ready))
        .route("/api/{*rest}", any(api_version));
    for extra in app.registry.extensions::<RoutesRegistration>().values() {
        r = r.merge(extra.as_ref().clone());
    }
    r = shared_pages(&app, r);
    r.method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::disable())
        .layer(axum::middleware::map_response(security_headers))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            |_: Box<dyn std::any::Any + Send>| {
                tracing::error!("a request handler panicked");
                json_response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &json!({"success": false, "error": {"__type": "Internal Server Error", "message": "Internal Server Error"}}),
                )
            },
        ))
        .with_state(app)
}

/// Anti-framing and anti-sniffing headers on every answer (pages, API, files), unless the
/// handler set its own: `X-Frame-Options: SAMEORIGIN` (with CSP `frame-ancestors 'self'` on
/// answers that carry no CSP of their own) and `X-Content-Type-Options: nosniff`.
async fn security_headers(mut resp: Response) -> Response {
    let h = resp.headers_mut();
    h.entry(header::X_FRAME_OPTIONS)
        .or_insert(header::HeaderValue::from_static("SAMEORIGIN"));
    h.entry(header::X_CONTENT_TYPE_OPTIONS)
        .or_insert(header::HeaderValue::from_static("nosniff"));
    h.entry(header::CONTENT_SECURITY_POLICY)
        .or_insert(header::HeaderValue::from_static("frame-ancestors 'self'"));
    resp
}

/// Every distinct path of the registered shared pages served once, asking its pages in order.
fn shared_pages(app: &AppState, mut r: Router<AppState>) -> Router<AppState> {
    let mut by_path: std::collections::BTreeMap<&'static str, Vec<Arc<Box<dyn SharedPage>>>> =
        Default::default();
    for page in app.registry.extensions::<PageRegistration>().values() {
        by_path.entry(page.path()).or_default().push(page.clone());
    }
    for (path, mut pages) in by_path {
        pages.sort_by_key(|p| p.order());
        let pages = Arc::new(pages);
        r = r.route(
            path,
            any(move |State(app): State<AppState>, req: Request| {
                let pages = pages.clone();
                async move { answer_shared_page(&app, &pages, req).await }
            }),
        );
    }
    r
}

async fn answer_shared_page(
    app: &AppState,
    pages: &[Arc<Box<dyn SharedPage>>],
    req: Request,
) -> Response {
    let (parts, body) = req.into_parts();
    if parts.method != Method::GET && parts.method != Method::HEAD {
        if let Err((status, msg)) = read_request_body(app, body).await {
            return bare_error(status, &msg);
        }
        return method_not_allowed_response(&parts.uri);
    }
    for page in pages {
        if let Some(answer) = page.answer(app, &parts).await {
            return answer;
        }
    }
    bare_error(StatusCode::NOT_FOUND, "Not found")
}

/// Readiness for a load balancer: 200 when this server answers everything, 503 while it
/// builds its search index from the store (a node that joined with an empty index).
async fn ready(State(app): State<AppState>) -> Response {
    if app.search.ready() {
        json_response(StatusCode::OK, &json!({"ready": true}))
    } else {
        json_response(
            StatusCode::SERVICE_UNAVAILABLE,
            &json!({"ready": false, "reason": "building the search index"}),
        )
    }
}

/// The OpenAPI 3.1 description of the Action API, from the registry.
async fn openapi(State(app): State<AppState>) -> Response {
    json_response(
        StatusCode::OK,
        &crate::openapi::document(&app.registry, &app.config),
    )
}

/// 405 with `Allow`; under `/api` in CKAN's bare JSON string. The body is read and dropped
/// first (see [`api_version`]).
async fn method_not_allowed(State(app): State<AppState>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    if let Err((status, msg)) = read_request_body(&app, body).await {
        return bare_error(status, &msg);
    }
    method_not_allowed_response(&parts.uri)
}

fn method_not_allowed_response(uri: &Uri) -> Response {
    if uri.path().starts_with("/api") {
        let mut r = bare_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "Bad request: Method not allowed. Please use GET or POST",
        );
        r.headers_mut()
            .insert(header::ALLOW, header::HeaderValue::from_static("GET, POST"));
        r
    } else {
        (StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed").into_response()
    }
}

/// `/api/1`, `/api/2`, `/api/3` (with or without a trailing slash) name the API version; every
/// other path under `/api` that no route serves is a JSON 404.
///
/// The request body is read (within the usual bounds) and dropped before answering: a body
/// left unread makes the server close the connection, which a client's pool reports as a
/// failure of its next request.
async fn api_version(State(app): State<AppState>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let (method, uri) = (parts.method, parts.uri);
    if let Err((status, msg)) = read_request_body(&app, body).await {
        return bare_error(status, &msg);
    }
    let version = uri.path().trim_start_matches("/api/").trim_end_matches('/');
    match version {
        "1" | "2" | "3" if method == Method::GET || method == Method::HEAD => json_response(
            StatusCode::OK,
            &json!({"version": version.parse::<u8>().unwrap_or(3)}),
        ),
        "1" | "2" | "3" => method_not_allowed_response(&uri),
        _ => bare_error(StatusCode::NOT_FOUND, "Not found"),
    }
}

/// The success envelope around an answer already serialized: the bytes [`envelope`] and
/// [`json_response`] would write for the same answer.
fn success_envelope_bytes(app: &AppState, name: &str, result_json: &str) -> Vec<u8> {
    let help = Value::String(help_url(app, name)).to_string();
    let mut out = Vec::with_capacity(result_json.len() + help.len() + 40);
    out.extend_from_slice(b"{\"help\": ");
    out.extend_from_slice(help.as_bytes());
    out.extend_from_slice(b", \"success\": true, \"result\": ");
    out.extend_from_slice(result_json.as_bytes());
    out.push(b'}');
    out
}

fn json_body_to_params(body: &[u8]) -> Result<Params, BadRequest> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Params::new());
    }
    let v: Value = parse_json(body)
        .map_err(|e| BadRequest::json(format!("Error decoding JSON data. Error: {e}")))?;
    match v {
        Value::Object(m) => Ok(m),
        other => Err(BadRequest::json(format!(
            "Request data JSON decoded to {other} but it needs to be a dictionary."
        ))),
    }
}

/// Form fields: the legacy `curl -d '{"a":1}'` shape (one field whose value is "" or "1" and
/// whose name is JSON) or ordinary fields.
fn form_to_params(fields: Vec<(String, String)>) -> Result<Params, BadRequest> {
    if let [(name, value)] = fields.as_slice() {
        if value.is_empty() || value == "1" {
            return json_body_to_params(name.as_bytes());
        }
    }
    let mut m = Params::new();
    for (k, v) in fields {
        let v = Value::String(v);
        match m.get_mut(&k) {
            Some(Value::Array(a)) => a.push(v),
            Some(existing) => {
                let first = existing.take();
                *existing = Value::Array(vec![first, v]);
            }
            None => {
                m.insert(k, v);
            }
        }
    }
    Ok(m)
}

fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

async fn decode_request(
    app: &AppState,
    side_effect_free: bool,
    req: Request,
) -> Result<(Params, Vec<Upload>), BadRequest> {
    let method = req.method().clone();
    let query = req.uri().query().unwrap_or("").to_string();
    let ctype = content_type(req.headers());
    let limit = app.config.catalog.max_request_bytes;
    let pause = Duration::from_secs(app.config.catalog.server.body_read_timeout_secs.max(1));

    if ctype.starts_with("multipart/form-data") {
        let (fields, uploads) = read_multipart(app, req, limit, pause).await?;
        return Ok((form_to_params(fields)?, uploads));
    }

    let body = read_body(req.into_body(), body_limit(app), pause).await?;
    if ctype.starts_with("application/x-www-form-urlencoded") && method == Method::POST {
        let fields = form_urlencoded::parse(&body)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        return Ok((form_to_params(fields)?, Vec::new()));
    }
    if side_effect_free && !query.is_empty() {
        return Ok((query_to_params(&query), Vec::new()));
    }
    Ok((json_body_to_params(&body)?, Vec::new()))
}

/// The action name of `/api/3/action/<name>`, decoded leniently: a name that is not valid
/// UTF-8 (or holds a slash) is simply not a known action.
fn action_name(uri: &Uri) -> String {
    path_after(uri, "/action/")
}

async fn action_handler(State(app): State<AppState>, req: Request) -> Response {
    let arrived = std::time::Instant::now();
    let name = action_name(req.uri());
    if req.method() != Method::GET && req.method() != Method::POST && req.method() != Method::HEAD {
        let mut r = method_not_allowed(State(app.clone()), req).await;
        // A write action answers POST only (GET is refused with 400).
        if app
            .registry
            .action(&name)
            .is_some_and(|a| !a.side_effect_free())
        {
            r.headers_mut()
                .insert(header::ALLOW, header::HeaderValue::from_static("POST"));
        }
        return r;
    }
    let Some(action) = app.registry.action(&name).cloned() else {
        return bare_error(
            StatusCode::BAD_REQUEST,
            &format!("Bad request: Action name not known: {name}"),
        );
    };
    let is_get = req.method() != Method::POST;
    if is_get && !action.side_effect_free() {
        return bare_error(
            StatusCode::BAD_REQUEST,
            "Bad request: JSON Error: Invalid request. Please use POST method for your request",
        );
    }
    let callback = if is_get {
        req.uri().query().and_then(|q| {
            query_to_params(q)
                .get("callback")
                .and_then(Value::as_str)
                .filter(|cb| is_js_callback(cb))
                .map(str::to_string)
        })
    } else {
        None
    };
    let headers = req.headers().clone();
    let (mut params, uploads) = match decode_request(&app, action.side_effect_free(), req).await {
        Ok(x) => x,
        Err(BadRequest(status, msg)) => {
            let mut r = bare_error(status, &msg);
            if matches!(
                status,
                StatusCode::PAYLOAD_TOO_LARGE | StatusCode::REQUEST_TIMEOUT
            ) {
                // The rest of the body is not read: the connection cannot carry another request.
                r.headers_mut().insert(
                    header::CONNECTION,
                    header::HeaderValue::from_static("close"),
                );
            }
            return r;
        }
    };
    // JSONP (and any `callback` in the data) runs as anonymous, as CKAN does.
    let anonymous = params.remove("callback").is_some();
    let user = if anonymous {
        None
    } else {
        identify(&app, &headers).await
    };
    let writes = !action.side_effect_free();
    let mut ctx = ActionContext::new(app.clone(), user);
    if !writes {
        ctx.read_after = read_after(&headers, arrived);
    }
    ctx.uploads = uploads;
    let (status, body) = match ctx.run_top_answer(&name, params).await {
        Ok(Answer::Serialized(s)) => (
            StatusCode::OK,
            success_envelope_bytes(&app, &name, s.json()),
        ),
        result => {
            let (status, body) = envelope(&app, &name, result.map(Answer::into_value));
            (status, to_ckan_json(&body))
        }
    };
    let mut response = match callback {
        Some(cb) if status == StatusCode::OK => {
            let mut wrapped = catalog_framework::escape::python_html(&cb).into_bytes();
            wrapped.push(b'(');
            wrapped.extend_from_slice(&body);
            wrapped.extend_from_slice(b");");
            (
                status,
                [(header::CONTENT_TYPE, "application/javascript;charset=utf-8")],
                wrapped,
            )
                .into_response()
        }
        _ => (status, [(header::CONTENT_TYPE, JSON_TYPE)], body).into_response(),
    };
    if writes && status == StatusCode::OK {
        mark_sequence(&app, &mut response);
    }
    response
}

/// Serves the router on a bound listener until the process is asked to stop, with the
/// connection limits and timeouts of `catalog.server.*` (see the server module).
///
/// Beside the server run the background task that brings the search index up to changes made
/// by other processes and `catalog.jobs.workers` background job workers. SIGINT or SIGTERM
/// stops the server: the workers let their jobs finish for `catalog.jobs.shutdown_grace_secs`
/// and give back those that did not, then this returns.
pub async fn serve(app: AppState, listener: tokio::net::TcpListener) -> std::io::Result<()> {
    let sync = crate::indexer::spawn_background_sync(app.clone());
    let options = crate::workers::WorkerOptions::from_config(&app.config);
    let mut pools = Vec::new();
    if options.workers > 0 {
        // Plugins' own queues get workers of their own (the harvest's pages do not wait
        // behind the DataStore loads its datasets start, nor hold them up).
        for plugin in app.registry.plugin_set().iter() {
            for (queue, workers) in plugin.worker_queues() {
                pools.push(crate::workers::WorkerPool::spawn(
                    app.clone(),
                    crate::workers::WorkerOptions {
                        queues: vec![queue.to_string()],
                        workers,
                        burst: false,
                        max_idle: None,
                    },
                ));
            }
        }
    }
    let workers = crate::workers::WorkerPool::spawn(app.clone(), options);
    let services = spawn_services(&app);
    let node = crate::nodes::start(app.clone()).await;
    let limits = crate::server::ServerLimits::from_config(&app.config.catalog.server);
    let node_app = app.clone();
    let router = router(app);
    let result = tokio::select! {
        r = crate::server::serve(listener, router, limits) => r,
        _ = crate::workers::shutdown_signal() => {
            tracing::info!("stopping");
            Ok(())
        }
    };
    services.stop().await;
    if let Some((id, heartbeat)) = node {
        heartbeat.abort();
        crate::nodes::unregister(&node_app, &id).await;
    }
    for pool in pools {
        pool.shutdown().await;
    }
    workers.shutdown().await;
    sync.abort();
    result
}

/// The enabled plugins' services, running.
struct Services {
    stop: tokio::sync::watch::Sender<bool>,
    tasks: tokio::task::JoinSet<()>,
}

impl Services {
    /// Asks every service to stop and waits for them (at most a few seconds each).
    async fn stop(mut self) {
        let _ = self.stop.send(true);
        let _ = tokio::time::timeout(std::time::Duration::from_secs(10), async {
            while self.tasks.join_next().await.is_some() {}
        })
        .await;
        self.tasks.abort_all();
    }
}

/// Starts every registered [`Service`](catalog_framework::services::Service).
fn spawn_services(app: &AppState) -> Services {
    let (stop, _) = tokio::sync::watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    for (name, service) in app
        .registry
        .extensions::<catalog_framework::services::ServiceRegistration>()
    {
        tracing::info!(service = %name, "service started");
        let (service, app, rx) = (service.clone(), app.clone(), stop.subscribe());
        tasks.spawn(async move { service.run(app, rx).await });
    }
    Services { stop, tasks }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_names_decode_leniently() {
        let uri = |s: &str| s.parse::<Uri>().unwrap();
        assert_eq!(
            action_name(&uri("/api/3/action/package_show")),
            "package_show"
        );
        assert_eq!(action_name(&uri("/api/3/action/%FF")), "\u{FFFD}");
        assert_eq!(action_name(&uri("/api/action/a%2Fb")), "a/b");
        assert_eq!(action_name(&uri("/api/3/action/x/y")), "x/y");
    }

    #[test]
    fn bodies_decode_like_ckan() {
        assert!(json_body_to_params(b"").unwrap().is_empty());
        assert!(json_body_to_params(b"[1]").is_err());
        assert!(json_body_to_params(b"{bad").is_err());
        let legacy = form_to_params(vec![("{\"a\": 1}".into(), "1".into())]).unwrap();
        assert_eq!(legacy["a"], json!(1));
    }
}
