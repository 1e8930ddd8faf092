//! The sysadmin's pages: `/ckan-admin/config` (the keys `config_option_update` changes at run
//! time) and `/ckan-admin/trash` (deleted datasets, organizations and groups, purged for good).

use axum::extract::{OriginalUri, Request, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use catalog_framework::prelude::*;

use crate::forms::{field_errors, form_page, posted, redirect, to_login};
use crate::i18n;
use crate::render::Visit;
use crate::visit::{error_page, params, visit};

pub(crate) fn routes(mut r: Router<AppState>) -> Router<AppState> {
    for p in i18n::prefixes() {
        r = r
            .route(
                &format!("{p}/ckan-admin/config"),
                get(config_form).post(config_save),
            )
            .route(
                &format!("{p}/ckan-admin/trash"),
                get(trash_page).post(trash_purge),
            );
    }
    r
}

/// Deleted things of each kind the trash lists, at most.
const TRASH_ROWS: i64 = 500;

/// The runtime keys the form edits (the upload flags are for CKAN's logo upload, not shown).
fn editable_keys(keys: &Value) -> Vec<String> {
    keys.as_array()
        .map(|ks| {
            ks.iter()
                .filter_map(Value::as_str)
                .filter(|k| !k.contains("upload"))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// `Err`: the login page for an anonymous visitor, a 403 page for anyone else not allowed.
async fn sysadmin_only(
    app: &AppState,
    visit: &Visit,
    headers: &HeaderMap,
    uri: &Uri,
    action: &str,
) -> Result<(), Response> {
    if visit.user.is_none() {
        return Err(to_login(visit, uri.path()));
    }
    let mut ctx = visit.context(app);
    match ctx.check_access(action, &Params::new()).await {
        Ok(()) => Ok(()),
        Err(_) => Err(forbidden(app, visit, headers)),
    }
}

fn forbidden(app: &AppState, visit: &Visit, headers: &HeaderMap) -> Response {
    crate::render::page(
        app,
        visit,
        headers,
        "error.html",
        StatusCode::FORBIDDEN,
        json!({"status": 403, "message": "Not authorized to see this page"}),
        None,
    )
}

/// The config form with the values in force (`values`: what to show instead, after a refusal).
async fn config_page(
    app: &AppState,
    visit: &Visit,
    headers: &HeaderMap,
    values: Option<serde_json::Map<String, Value>>,
    errors: Value,
    saved: bool,
) -> Response {
    let mut ctx = visit.context(app);
    let keys = match ctx.call("config_option_list", Params::new()).await {
        Ok(k) => editable_keys(&k),
        Err(e) => return error_page(app, visit, headers, &e, "Not authorized to see this page"),
    };
    let mut options = Vec::new();
    for key in keys {
        let value = match values.as_ref().and_then(|v| v.get(&key)) {
            Some(v) => v.clone(),
            None => ctx
                .call("config_option_show", params(json!({"key": key})))
                .await
                .unwrap_or(Value::Null),
        };
        let long = key.ends_with("about") || key.ends_with("intro_text") || key.ends_with("css");
        options.push(json!({
            "key": key,
            "value": value.as_str().unwrap_or_default(),
            "long": long,
            "error": errors
                .get(&key)
                .and_then(Value::as_str)
                .map(|m| crate::render::translate(visit.locale.code, m)),
        }));
    }
    form_page(
        app,
        visit,
        headers,
        "admin/config.html",
        if errors.as_object().is_some_and(|m| !m.is_empty()) {
            StatusCode::BAD_REQUEST
        } else {
            StatusCode::OK
        },
        json!({"options": options, "saved": saved, "errors": errors}),
    )
}

async fn config_form(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    if let Err(r) = sysadmin_only(&app, &visit, &headers, &uri, "config_option_update").await {
        return r;
    }
    let saved = visit.param("saved").is_some();
    config_page(&app, &visit, &headers, None, json!({}), saved).await
}

/// `POST /ckan-admin/config`: the listed keys the form sent, through `config_option_update`.
async fn config_save(State(app): State<AppState>, req: Request) -> Response {
    let (parts, visit, form) = match posted(&app, req).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    if let Err(r) = sysadmin_only(
        &app,
        &visit,
        &parts.headers,
        &parts.uri,
        "config_option_update",
    )
    .await
    {
        return r;
    }
    let mut ctx = visit.context(&app);
    let keys = match ctx.call("config_option_list", Params::new()).await {
        Ok(k) => editable_keys(&k),
        Err(e) => return error_page(&app, &visit, &parts.headers, &e, "Not authorized"),
    };
    let mut update = serde_json::Map::new();
    for key in keys {
        if let Some(v) = form.get(&key) {
            update.insert(key, json!(v));
        }
    }
    match visit
        .context(&app)
        .run_top("config_option_update", update.clone().into_iter().collect())
        .await
    {
        Ok(_) => redirect(&format!("{}/ckan-admin/config?saved=1", visit.prefix)),
        Err(e) if e.kind == ErrorKind::Validation => {
            let errors = field_errors(&e);
            config_page(&app, &visit, &parts.headers, Some(update), errors, false).await
        }
        Err(e) => error_page(&app, &visit, &parts.headers, &e, "Not authorized"),
    }
}

/// What the trash holds, by kind.
async fn deleted(app: &AppState) -> CkanResult<Value> {
    let mut ctx = ActionContext::new(app.clone(), None);
    let rows = catalog_framework::store::deleted_refs(ctx.db().await?, TRASH_ROWS).await?;
    let mut out = json!({"package": [], "organization": [], "group": []});
    for r in rows {
        if let Some(list) = out[r.kind].as_array_mut() {
            list.push(json!({"id": r.id, "name": r.name, "title": r.title}));
        }
    }
    Ok(out)
}

async fn trash_page(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    if let Err(r) = sysadmin_only(&app, &visit, &headers, &uri, "dataset_purge").await {
        return r;
    }
    let items = match deleted(&app).await {
        Ok(i) => i,
        Err(e) => return error_page(&app, &visit, &headers, &e, "Not authorized"),
    };
    form_page(
        &app,
        &visit,
        &headers,
        "admin/trash.html",
        StatusCode::OK,
        json!({"items": items, "purged": visit.param("purged")}),
    )
}

/// `POST /ckan-admin/trash`: `action` is CKAN's — `all`, `package`, `organization` or `group` —
/// and every deleted thing of that kind is purged through its `*_purge` action.
async fn trash_purge(State(app): State<AppState>, req: Request) -> Response {
    let (parts, visit, form) = match posted(&app, req).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    if let Err(r) = sysadmin_only(&app, &visit, &parts.headers, &parts.uri, "dataset_purge").await {
        return r;
    }
    let kinds: &[&str] = match form.get("action") {
        Some("package") => &["package"],
        Some("organization") => &["organization"],
        Some("group") => &["group"],
        Some("all") => &["package", "organization", "group"],
        _ => &[],
    };
    let items = match deleted(&app).await {
        Ok(i) => i,
        Err(e) => return error_page(&app, &visit, &parts.headers, &e, "Not authorized"),
    };
    let mut purged = 0;
    for kind in kinds {
        let action = match *kind {
            "package" => "dataset_purge",
            "organization" => "organization_purge",
            _ => "group_purge",
        };
        for item in items[*kind].as_array().cloned().unwrap_or_default() {
            let p = params(json!({"id": item["id"]}));
            match visit.context(&app).run_top(action, p).await {
                Ok(_) => purged += 1,
                // Purged meanwhile by someone else: nothing left to do.
                Err(e) if e.kind == ErrorKind::NotFound => {}
                Err(e) => return error_page(&app, &visit, &parts.headers, &e, "Not authorized"),
            }
        }
    }
    redirect(&format!(
        "{}/ckan-admin/trash?purged={purged}",
        visit.prefix
    ))
}
