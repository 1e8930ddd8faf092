//! `/dataset/<id>/resource/<resource id>`: a resource's page, with the table preview of its
//! `datatables_view`s.

use axum::extract::{OriginalUri, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use catalog_framework::prelude::*;

use super::{page_number, page_numbers, MAX_PAGE};
use crate::render::{page, Visit};
use crate::visit::{error_page, params, visit};

/// `/dataset/<id>/resource/<resource id>`: the resource's metadata, download link and views.
pub(crate) async fn resource(
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
