//! `/dataset/<name or id>`, the dataset page (kept rendered for anonymous visitors, its heavy
//! parts kept per dict), and `/dataset/activity/<name or id>`, its activity stream.

use std::sync::Arc;

use axum::extract::{OriginalUri, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use catalog_framework::escape;
use catalog_framework::prelude::*;
use sha2::{Digest, Sha256};

use super::alternates;
use crate::cache::{Derived, Rendered};
use crate::render::{page, respond_tagged, Visit};
use crate::visit::{error_page, last_segment, params, visit};

pub(crate) async fn dataset_prefixed(
    State(app): State<AppState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let visit = visit(&app, &uri, &headers).await;
    let id = last_segment(&uri);
    dataset(&app, &visit, &headers, &id, uri.query().unwrap_or_default()).await
}

/// `/dataset/<name or id>`. An anonymous visitor's page is kept rendered (see
/// [`rendered_key`]): a visit that finds it only hashes the dataset's JSON.
pub(crate) async fn dataset(
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
    let web = app.extension::<crate::state::Web>();
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

/// The dataset's derived parts: kept ones when the dict is unchanged, else made and kept.
async fn derived(app: &AppState, ctx: &mut ActionContext, d: &Value) -> Arc<Derived> {
    let key: [u8; 32] = Sha256::digest(d.to_string().as_bytes()).into();
    let web = app.extension::<crate::state::Web>();
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
        .and_then(|v| v.as_str().map(escape::script_json))
    } else {
        None
    };
    let out = Arc::new(Derived { notes_html, jsonld });
    if let Some(w) = web {
        w.derived_put(key, out.clone());
    }
    out
}

/// `/dataset/activity/<name or id>`: the dataset's activity stream (CKAN 2.10's tab of its
/// own: the dataset page stays cheap).
pub(crate) async fn dataset_activity(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_are_escaped() {
        assert_eq!(
            escape::script_json("{\"x\":\"</script><!--&\"}"),
            "{\"x\":\"\\u003c/script\\u003e\\u003c!--\\u0026\"}"
        );
    }
}
