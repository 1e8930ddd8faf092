//! What every handler starts from: the [`Visit`] (the language from the path's prefix, the
//! visitor from an API token or a session cookie), the path's last segment, an action's params
//! from JSON, and the error page for a failed action.

use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use catalog_framework::prelude::*;
use catalog_framework::web::identify;

use crate::i18n::{self, Locale};
use crate::render::{page, Visit};

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
    let web = app.extension::<crate::state::Web>()?;
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
