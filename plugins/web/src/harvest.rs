//! The harvest pages (ckanext-harvest's `/harvest/…`), when the `harvest` plugin is enabled:
//! the list of sources, a source's page (what it reads, its last job's statistics, its recent
//! jobs, its datasets, and "Harvest now" for those who may run it), and a job's report. Each
//! reads the harvest actions as the visitor; without the plugin they are 404s. Sources are made
//! and edited through the API or `catalog harvest` (docs/HARVEST.md).

use axum::extract::{OriginalUri, Request, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use catalog_framework::prelude::*;

use crate::forms::{posted, redirect, to_login};
use crate::i18n;
use crate::render::page;
use crate::visit::{error_page, params, visit};

pub(crate) fn routes(mut r: Router<AppState>) -> Router<AppState> {
    for p in i18n::prefixes() {
        r = r
            .route(&format!("{p}/harvest"), get(index))
            .route(&format!("{p}/harvest/"), get(index))
            .route(&format!("{p}/harvest/{{id}}"), get(source))
            .route(&format!("{p}/harvest/{{id}}/job/{{job}}"), get(job))
            .route(&format!("{p}/harvest/refresh/{{id}}"), post(refresh));
    }
    r
}

/// Whether the harvest plugin answers here.
fn enabled(app: &AppState) -> bool {
    app.registry.action("harvest_source_show").is_some()
}

fn segments(uri: &Uri) -> Vec<String> {
    uri.path()
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect()
}

/// The path segment after `harvest` (and `refresh`), and the one after `job`.
fn ids(uri: &Uri) -> (String, Option<String>) {
    let segs = segments(uri);
    let at = segs.iter().position(|s| s == "harvest").unwrap_or(0);
    let mut rest = segs[at + 1..].iter().filter(|s| *s != "refresh");
    let id = rest.next().cloned().unwrap_or_default();
    let job = segs
        .iter()
        .position(|s| s == "job")
        .and_then(|i| segs.get(i + 1).cloned());
    (id, job)
}

/// `/harvest`: the sources the visitor may read.
async fn index(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    if !enabled(&app) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let visit = visit(&app, &uri, &headers).await;
    let mut ctx = visit.context(&app);
    let sources = ctx
        .call(
            "harvest_source_list",
            params(json!({"return_last_job_status": true})),
        )
        .await
        .unwrap_or_else(|_| json!([]));
    let mut items = Vec::new();
    for s in sources.as_array().cloned().unwrap_or_default() {
        // The dataset's name and title (the table keeps only the id).
        let Ok(d) = ctx
            .call("package_show", params(json!({"id": s["id"]})))
            .await
        else {
            continue;
        };
        items.push(json!({"source": s, "dataset": d}));
    }
    page(
        &app,
        &visit,
        &headers,
        "harvest/index.html",
        StatusCode::OK,
        json!({"items": items}),
        None,
    )
}

/// `/harvest/<name>`: a source, its status and recent jobs.
async fn source(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    if !enabled(&app) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let visit = visit(&app, &uri, &headers).await;
    let mut ctx = visit.context(&app);
    let (id, _) = ids(&uri);
    let s = match ctx
        .call("harvest_source_show", params(json!({"id": id})))
        .await
    {
        Ok(s) => s,
        Err(e) => return error_page(&app, &visit, &headers, &e, "Harvest source not found"),
    };
    // The jobs are for those who may run the source (the organization's editors).
    let jobs = ctx
        .call(
            "harvest_job_list",
            params(json!({"source_id": s["id"], "limit": 10})),
        )
        .await
        .ok();
    let notes = s["notes"].as_str().unwrap_or_default().to_string();
    let notes_html =
        catalog_framework::markdown::render_off_thread(notes, app.config.site_url().to_string())
            .await
            .unwrap_or_default();
    let (csrf_token, csrf_cookie) = match (&visit.user, &jobs, crate::forms::sessions(&app)) {
        (Some(_), Some(_), Some(sessions)) => {
            let (t, c) = sessions.csrf(&headers);
            (Some(t), c)
        }
        _ => (None, None),
    };
    let values = json!({
        "source": s,
        "notes_html": notes_html,
        "jobs": jobs,
        "can_run": jobs.is_some(),
        "csrf_field": crate::session::CSRF_FIELD,
        "csrf_token": csrf_token,
        "datasets_query": format!("harvest_source_id:\"{}\"", s["id"].as_str().unwrap_or_default()),
    });
    crate::forms::with_cookie(
        page(
            &app,
            &visit,
            &headers,
            "harvest/read.html",
            StatusCode::OK,
            values,
            None,
        ),
        csrf_cookie,
    )
}

/// `/harvest/<name>/job/<id>`: a job's statistics and errors.
async fn job(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    if !enabled(&app) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let visit = visit(&app, &uri, &headers).await;
    let mut ctx = visit.context(&app);
    let (id, job_id) = ids(&uri);
    let s = match ctx
        .call("harvest_source_show", params(json!({"id": id})))
        .await
    {
        Ok(s) => s,
        Err(e) => return error_page(&app, &visit, &headers, &e, "Harvest source not found"),
    };
    let job_id = job_id.unwrap_or_default();
    let (job, report) = match (
        ctx.call("harvest_job_show", params(json!({"id": job_id})))
            .await,
        ctx.call("harvest_job_report", params(json!({"id": job_id})))
            .await,
    ) {
        (Ok(j), Ok(r)) if j["source_id"] == s["id"] => (j, r),
        (Err(e), _) | (_, Err(e)) => {
            return error_page(&app, &visit, &headers, &e, "Harvest job not found")
        }
        _ => {
            return error_page(
                &app,
                &visit,
                &headers,
                &not_found(""),
                "Harvest job not found",
            )
        }
    };
    let objects: Vec<Value> = report["object_errors"]
        .as_object()
        .map(|m| {
            m.iter()
                .take(200)
                .map(|(id, o)| json!({"id": id, "guid": o["guid"], "errors": o["errors"]}))
                .collect()
        })
        .unwrap_or_default();
    page(
        &app,
        &visit,
        &headers,
        "harvest/job.html",
        StatusCode::OK,
        json!({"source": s, "job": job, "gather_errors": report["gather_errors"],
               "object_errors": objects}),
        None,
    )
}

/// `POST /harvest/refresh/<name>`: `harvest_job_create` as the visitor, then the source's page
/// (ckanext-harvest's "Reharvest").
async fn refresh(State(app): State<AppState>, req: Request) -> Response {
    if !enabled(&app) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let (parts, visit, _) = match posted(&app, req).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    if visit.user.is_none() {
        return to_login(&visit, parts.uri.path());
    }
    let (id, _) = ids(&parts.uri);
    let mut ctx = visit.context(&app);
    let s = match ctx
        .call("harvest_source_show", params(json!({"id": id})))
        .await
    {
        Ok(s) => s,
        Err(e) => return error_page(&app, &visit, &parts.headers, &e, "Harvest source not found"),
    };
    let name = s["name"].as_str().unwrap_or_default().to_string();
    match visit
        .context(&app)
        .run_top("harvest_job_create", params(json!({"source_id": s["id"]})))
        .await
    {
        // A job already new or running: the page shows it.
        Ok(_) => {}
        Err(e) if e.kind == ErrorKind::Validation => {}
        Err(e) => return error_page(&app, &visit, &parts.headers, &e, "Harvest source not found"),
    }
    redirect(&format!("{}/harvest/{name}", visit.prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_come_from_the_path() {
        let u = |s: &str| s.parse::<Uri>().unwrap();
        assert_eq!(ids(&u("/harvest/city")), ("city".into(), None));
        assert_eq!(ids(&u("/de/harvest/city")), ("city".into(), None));
        assert_eq!(
            ids(&u("/harvest/city/job/42")),
            ("city".into(), Some("42".into()))
        );
        assert_eq!(ids(&u("/harvest/refresh/city")), ("city".into(), None));
    }
}
