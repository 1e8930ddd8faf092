//! Logging in and out, a user's page, and their API tokens: forms with CKAN's field names
//! (`login`, `password`, `name`), CSRF tokens, and the actions' own rules (a token list is
//! the owner's or a sysadmin's).

use axum::extract::{OriginalUri, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use catalog_framework::prelude::*;

use crate::forms::{
    came_from, checked_form, field, form_page, read_form, redirect, sessions, to_login, with_cookie,
};
use crate::i18n;
use crate::pages::search::run_search;
use crate::render::{page, Visit};
use crate::session::CSRF_FIELD;
use crate::visit::{error_page, last_segment, params, visit};

pub(crate) fn routes(mut r: Router<AppState>) -> Router<AppState> {
    for p in i18n::prefixes() {
        r = r
            .route(&format!("{p}/user/login"), get(login_form).post(login))
            .route(&format!("{p}/user/_logout"), get(logout))
            .route(
                &format!("{p}/user/register"),
                get(register_form).post(register),
            )
            .route(&format!("{p}/dashboard"), get(dashboard))
            .route(&format!("{p}/dashboard/"), get(dashboard))
            .route(&format!("{p}/user/{{id}}"), get(user_page))
            .route(
                &format!("{p}/user/{{id}}/api-tokens"),
                get(tokens_page).post(token_create),
            )
            .route(
                &format!("{p}/user/{{id}}/api-tokens/{{jti}}/revoke"),
                axum::routing::post(token_revoke),
            );
    }
    r
}

async fn login_form(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    let back = came_from(visit.param("came_from"));
    form_page(
        &app,
        &visit,
        &headers,
        "user/login.html",
        StatusCode::OK,
        json!({"came_from": back, "login": "", "error": null}),
    )
}

/// `POST /user/login`: `login` (the user name) and `password`; on success the session cookie
/// and a redirect to `came_from` or the user's page.
async fn login(State(app): State<AppState>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let visit = visit(&app, &parts.uri, &parts.headers).await;
    let Some(sessions) = sessions(&app) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let form = read_form(&app, &parts.headers, body, false)
        .await
        .unwrap_or_default()
        .fields;
    let account = field(&form, "login").unwrap_or_default().trim().to_string();
    let retry = |status: StatusCode, error: &str| {
        form_page(
            &app,
            &visit,
            &parts.headers,
            "user/login.html",
            status,
            json!({"came_from": came_from(field(&form, "came_from")), "login": account, "error": error}),
        )
    };
    if !sessions.csrf_ok(&parts.headers, field(&form, CSRF_FIELD)) {
        return retry(
            StatusCode::FORBIDDEN,
            "The form has expired: please send it again.",
        );
    }
    if !sessions.attempt(&account, &parts) {
        return retry(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many failed logins: try again in 15 minutes.",
        );
    }
    let password = field(&form, "password").unwrap_or_default().to_string();
    let mut ctx = ActionContext::new(app.clone(), None);
    let row = if account.is_empty() || account.contains('\0') {
        None
    } else {
        ctx.user_row(&account).await.ok().flatten()
    };
    let hash = row
        .as_ref()
        .filter(|r| r.state == "active")
        .and_then(|r| r.password_hash.clone());
    // An unknown account costs the same argon2 check as a known one: the answer's timing
    // does not tell which user names exist.
    let known = hash.is_some();
    let ok = catalog_framework::blocking::run(move || match &hash {
        Some(h) => catalog_framework::authz::verify_password(&password, h),
        None => catalog_framework::authz::verify_password(&password, dummy_hash()),
    })
    .await
    .unwrap_or(false)
        && known;
    let Some(row) = row.filter(|_| ok) else {
        return retry(StatusCode::OK, "Login failed. Bad username or password.");
    };
    sessions.succeeded(&account, &parts);
    let to = came_from(field(&form, "came_from"))
        .unwrap_or_else(|| format!("{}/user/{}", visit.prefix, row.name));
    match sessions
        .start(&app, &row.id, row.password_hash.as_deref())
        .await
    {
        Ok(cookie) => with_cookie(redirect(&to), Some(cookie)),
        Err(e) => {
            tracing::error!(error = %e, "starting a web session");
            retry(
                StatusCode::SERVICE_UNAVAILABLE,
                "The site could not log you in just now: please try again.",
            )
        }
    }
}

/// A password hash no password matches in practice, made once.
fn dummy_hash() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| {
        catalog_framework::authz::hash_password(&hex::encode(rand::random::<[u8; 16]>()))
    })
}

/// `/user/_logout`: the session ends, back to the home page.
async fn logout(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    let Some(sessions) = sessions(&app) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if let Err(e) = sessions.end(&app, &headers).await {
        tracing::error!(error = %e, "ending a web session");
    }
    with_cookie(
        redirect(&format!("{}/", visit.prefix)),
        Some(sessions.clear_session()),
    )
}

/// `/user/<name>`: the user, their datasets and activity.
async fn user_page(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    let id = last_segment(&uri);
    let mut ctx = visit.context(&app);
    let user = match ctx.call("user_show", params(json!({"id": id}))).await {
        Ok(u) => u,
        Err(e) => return error_page(&app, &visit, &headers, &e, "User not found"),
    };
    let scope = format!(
        "creator_user_id:\"{}\"",
        user["id"].as_str().unwrap_or_default()
    );
    let (status, mut values, _) = run_search(&mut ctx, &visit, Some(scope)).await;
    values["activity"] = if ctx.has_action("user_activity_list") {
        ctx.call(
            "user_activity_list",
            params(json!({"id": user["id"], "limit": 10})),
        )
        .await
        .unwrap_or_else(|_| json!([]))
    } else {
        json!([])
    };
    values["is_self"] = json!(visit.user.as_ref().is_some_and(|u| u.id == user["id"]));
    values["profile"] = user;
    page(
        &app,
        &visit,
        &headers,
        "user/read.html",
        status,
        values,
        None,
    )
}

/// The API tokens page of `id` as the visitor sees it (`new_token`: the one just made, shown
/// this once).
async fn tokens(
    app: &AppState,
    visit: &Visit,
    headers: &HeaderMap,
    id: &str,
    new_token: Option<String>,
    error: Option<String>,
) -> Response {
    if visit.user.is_none() {
        return to_login(visit, &format!("{}/user/{id}/api-tokens", visit.prefix));
    }
    let mut ctx = visit.context(app);
    let list = match ctx
        .call("api_token_list", params(json!({"user_id": id})))
        .await
    {
        Ok(l) => l,
        Err(e) => return error_page(app, visit, headers, &e, "User not found"),
    };
    form_page(
        app,
        visit,
        headers,
        "user/api_tokens.html",
        if error.is_some() {
            StatusCode::BAD_REQUEST
        } else {
            StatusCode::OK
        },
        json!({"user_id": id, "tokens": list, "new_token": new_token, "error": error}),
    )
}

async fn tokens_page(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    let id = user_segment(uri.path());
    tokens(&app, &visit, &headers, &id, None, None).await
}

/// The `<id>` of `/user/<id>/api-tokens…`, decoded.
fn user_segment(path: &str) -> String {
    let raw = path
        .split("/user/")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_default();
    percent_encoding::percent_decode_str(raw)
        .decode_utf8_lossy()
        .into_owned()
}

/// `POST /user/<id>/api-tokens`: `name`; the new token is shown once, on this answer only.
async fn token_create(State(app): State<AppState>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let visit = visit(&app, &parts.uri, &parts.headers).await;
    let id = user_segment(parts.uri.path());
    let form = match checked_form(&app, &visit, &parts.headers, body).await {
        Ok(f) => f,
        Err(r) => return r,
    };
    if visit.user.is_none() {
        return tokens(&app, &visit, &parts.headers, &id, None, None).await;
    }
    let name = form.text("name");
    // A write runs as the Action API runs it: its own transaction, committed before the answer.
    match visit
        .context(&app)
        .run_top(
            "api_token_create",
            params(json!({"user": id, "name": name})),
        )
        .await
    {
        Ok(r) => {
            let token = r["token"].as_str().map(str::to_string);
            tokens(&app, &visit, &parts.headers, &id, token, None).await
        }
        Err(e) if e.kind == ErrorKind::Validation => {
            let message = e.to_error_object()["name"][0]
                .as_str()
                .unwrap_or("Missing value")
                .to_string();
            tokens(&app, &visit, &parts.headers, &id, None, Some(message)).await
        }
        Err(e) => error_page(&app, &visit, &parts.headers, &e, "User not found"),
    }
}

/// `POST /user/<id>/api-tokens/<jti>/revoke`.
async fn token_revoke(State(app): State<AppState>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let visit = visit(&app, &parts.uri, &parts.headers).await;
    let id = user_segment(parts.uri.path());
    if let Err(r) = checked_form(&app, &visit, &parts.headers, body).await {
        return r;
    }
    let jti = parts
        .uri
        .path()
        .rsplit('/')
        .nth(1)
        .map(|j| {
            percent_encoding::percent_decode_str(j)
                .decode_utf8_lossy()
                .into_owned()
        })
        .unwrap_or_default();
    match visit
        .context(&app)
        .run_top("api_token_revoke", params(json!({"jti": jti})))
        .await
    {
        Ok(_) => redirect(&format!("{}/user/{id}/api-tokens", visit.prefix)),
        Err(e) => error_page(&app, &visit, &parts.headers, &e, "User not found"),
    }
}

/// The registration form's fields (CKAN's names).
const REGISTER_FIELDS: &[&str] = &["name", "fullname", "email"];

/// Registration is open only with `catalog.auth.create_user_via_web` (CKAN's
/// `ckan.auth.create_user_via_web`, default off); else a 403 page.
fn registration_closed(app: &AppState, visit: &Visit, headers: &HeaderMap) -> Option<Response> {
    if app.config.catalog.auth.create_user_via_web {
        return None;
    }
    Some(page(
        app,
        visit,
        headers,
        "error.html",
        StatusCode::FORBIDDEN,
        json!({"status": 403, "message": "Unauthorized to register as a user."}),
        None,
    ))
}

fn register_page(
    app: &AppState,
    visit: &Visit,
    headers: &HeaderMap,
    data: Value,
    errors: Value,
) -> Response {
    let status = if errors.as_object().is_some_and(|m| !m.is_empty()) {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    form_page(
        app,
        visit,
        headers,
        "user/register.html",
        status,
        json!({"data": data, "errors": errors}),
    )
}

async fn register_form(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    if let Some(r) = registration_closed(&app, &visit, &headers) {
        return r;
    }
    register_page(&app, &visit, &headers, json!({}), json!({}))
}

/// `POST /user/register`: `name`, `fullname`, `email`, `password1`, `password2`; the account
/// is made by `user_create` (its rules for names, e-mails and passwords) and logged in.
/// Attempts count against the address as failed logins do.
async fn register(State(app): State<AppState>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let visit = visit(&app, &parts.uri, &parts.headers).await;
    if let Some(r) = registration_closed(&app, &visit, &parts.headers) {
        return r;
    }
    let form = match checked_form(&app, &visit, &parts.headers, body).await {
        Ok(f) => f,
        Err(r) => return r,
    };
    let Some(sessions) = sessions(&app) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let mut data = serde_json::Map::new();
    for f in REGISTER_FIELDS {
        data.insert((*f).into(), json!(form.text(f)));
    }
    let data = Value::Object(data);
    // Counted under a key no login can have (a login never holds NUL), so registering never
    // locks a real account; the address's limit is the one that bites.
    let attempt = format!("\0register:{}", form.text("name"));
    // Every attempt counts against the address (it is never refunded): accounts cannot be
    // made in bulk.
    if !sessions.attempt(&attempt, &parts) {
        let errors = json!({"__form": "Too many failed logins: try again in 15 minutes."});
        return register_page(&app, &visit, &parts.headers, data, errors);
    }
    let password = form.get("password1").unwrap_or_default().to_string();
    if password != form.get("password2").unwrap_or_default() {
        let errors = json!({"password2": "The passwords you entered do not match."});
        return register_page(&app, &visit, &parts.headers, data, errors);
    }
    let mut p = params(data.clone());
    p.insert("password".into(), json!(password));
    // The web's own rule was checked above (CKAN's user_create auth: create_user_via_web
    // for a visitor of the site, create_user_via_api for the API).
    let mut ctx = ActionContext::new(app.clone(), None);
    ctx.ignore_auth = true;
    match ctx.run_top("user_create", p).await {
        Ok(user) => {
            let id = user["id"].as_str().unwrap_or_default();
            let mut ctx = ActionContext::new(app.clone(), None);
            let hash = match ctx.user_row(id).await {
                Ok(Some(row)) => row.password_hash,
                _ => None,
            };
            let cookie = sessions.start(&app, id, hash.as_deref()).await;
            // The account exists either way; without a session the visitor logs in.
            let cookie = cookie.map_err(|e| tracing::error!(error = %e, "starting a web session"));
            with_cookie(
                redirect(&format!("{}/dashboard", visit.prefix)),
                cookie.ok(),
            )
        }
        Err(e) if e.kind == ErrorKind::Validation => {
            let mut errors = crate::forms::field_errors(&e);
            if let Some(m) = errors.as_object_mut() {
                if let Some(pw) = m.remove("password") {
                    m.insert("password1".into(), pw);
                }
            }
            register_page(&app, &visit, &parts.headers, data, errors)
        }
        Err(e) => error_page(&app, &visit, &parts.headers, &e, "User not found"),
    }
}

/// `/dashboard`: the news feed of what the visitor follows, and their own datasets (drafts
/// and private ones included).
async fn dashboard(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    let Some(user) = visit.user.clone() else {
        return to_login(&visit, &format!("{}/dashboard", visit.prefix));
    };
    let mut ctx = visit.context(&app);
    let activity = if ctx.has_action("dashboard_activity_list") {
        ctx.call("dashboard_activity_list", params(json!({"limit": 20})))
            .await
            .unwrap_or_else(|_| json!([]))
    } else {
        json!([])
    };
    let mine = ctx
        .call(
            "package_search",
            params(json!({
                "fq": format!("creator_user_id:\"{}\"", user.id),
                "rows": 20, "sort": "metadata_modified desc",
                "include_private": true, "include_drafts": true,
            })),
        )
        .await
        .unwrap_or_else(|_| json!({"count": 0, "results": []}));
    let mut r = page(
        &app,
        &visit,
        &headers,
        "user/dashboard.html",
        StatusCode::OK,
        json!({"activity": activity, "datasets": mine["results"], "dataset_count": mine["count"]}),
        None,
    );
    r.headers_mut().insert(
        axum::http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-store"),
    );
    r
}
