//! Resource actions (through `package_update`, as CKAN does), uploads and their download route.

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use catalog_framework::prelude::*;
use catalog_framework::store_queries as q;

use crate::dictize::munge_filename;
use crate::package::{load, package_update};

fn resources_of(doc: &Value) -> Vec<Value> {
    doc.get("resources")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Stored (not output) resources of a dataset.
async fn stored_resources(
    ctx: &mut ActionContext,
    package_id: &str,
) -> CkanResult<(String, Vec<Value>)> {
    let row = load(ctx, package_id).await?;
    let doc: Value = serde_json::from_str(&row.data)?;
    Ok((row.id, resources_of(&doc)))
}

/// Finds the dataset of a resource id (or exact resource name).
async fn resource_package(ctx: &mut ActionContext, id: &str) -> CkanResult<String> {
    let row: Option<(String,)> = sqlx::query_as(
        "SELECT package_id FROM resource WHERE (id = $1 OR name = $1) AND state = 'active' \
         ORDER BY CASE WHEN id = $1 THEN 0 ELSE 1 END LIMIT 1",
    )
    .bind(id)
    .fetch_optional(ctx.db().await?)
    .await?;
    row.map(|r| r.0)
        .ok_or_else(|| not_found("Resource was not found."))
}

/// Saves an uploaded file under the data directory and points the resource at it. As CKAN's
/// `ResourceUpload`, an upload also sets `last_modified` to now.
async fn take_upload(
    ctx: &mut ActionContext,
    resource: &mut Map<String, Value>,
) -> CkanResult<Option<(String, Upload)>> {
    let Some(up) = ctx.uploads.iter().find(|u| u.field == "upload").cloned() else {
        return Ok(None);
    };
    let filename = munge_filename(&up.filename);
    resource.insert("url".into(), json!(filename));
    resource.insert("url_type".into(), json!("upload"));
    resource.insert("size".into(), json!(up.size));
    resource.insert(
        "last_modified".into(),
        json!(catalog_framework::time::now_iso()),
    );
    resource.remove("upload");
    Ok(Some((filename, up)))
}

/// CKAN's `resource_create` / `resource_update` with file storage on: a resource given without a
/// `mimetype` key gets one guessed from the URL it was given, else from the uploaded file's name
/// (the multipart part's own content type is not used). `resource_patch` never guesses.
fn guess_mimetype(
    resource: &mut Map<String, Value>,
    given_url: Option<&str>,
    upload: Option<&(String, Upload)>,
) {
    if resource.contains_key("mimetype") {
        return;
    }
    let guess = given_url
        .and_then(crate::formats::guess_mimetype)
        .or_else(|| upload.and_then(|(f, _)| crate::formats::guess_mimetype(f)));
    if let Some(m) = guess {
        resource.insert("mimetype".into(), json!(m));
    }
}

/// Copies an upload's temporary file into place (a copy, not a move: a call run again after a
/// store conflict stores the same upload again).
async fn store_file(
    data_dir: std::path::PathBuf,
    resource_id: &str,
    upload: &Upload,
) -> CkanResult<()> {
    let path = upload_path(&data_dir, resource_id);
    if let Some(dir) = path.parent() {
        tokio::fs::create_dir_all(dir).await.map_err(internal)?;
    }
    tokio::fs::copy(upload.path.as_ref(), &path)
        .await
        .map_err(internal)?;
    Ok(())
}

/// Files live at `<data>/resources/<id[0..3]>/<id[3..6]>/<id[6..]>`, like CKAN's local storage.
pub fn upload_path(data_dir: &std::path::Path, resource_id: &str) -> std::path::PathBuf {
    let id: String = resource_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let (a, rest) = id.split_at(id.len().min(3));
    let (b, c) = rest.split_at(rest.len().min(3));
    data_dir.join("resources").join(a).join(b).join(c)
}

fn find_resource(show: &Value, id: &str) -> CkanResult<Value> {
    resources_of(show)
        .into_iter()
        .find(|r| r["id"] == json!(id))
        .ok_or_else(|| not_found("Resource was not found."))
}

pub async fn resource_create(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let package_id = req_str(&p, "package_id")?;
    let (pkg_id, mut resources) = stored_resources(ctx, &package_id).await?;
    let mut auth = Params::new();
    auth.insert("package_id".into(), json!(pkg_id));
    ctx.check_access("resource_create", &auth).await?;
    let mut res = p.clone();
    res.remove("package_id");
    let given_url = res.get("url").and_then(Value::as_str).map(str::to_string);
    let upload = take_upload(ctx, &mut res).await?;
    guess_mimetype(&mut res, given_url.as_deref(), upload.as_ref());
    res.entry("url").or_insert(json!(""));
    let new_id = match res.get("id").and_then(Value::as_str) {
        Some(id) => catalog_plugin_schema::uuid_parse(id).unwrap_or_else(|| id.to_string()),
        None => crate::package::new_id(),
    };
    res.insert("id".into(), json!(new_id));
    let max = ctx.config().catalog.max_field_chars;
    let res =
        catalog_plugin_schema::validate_resource_dict(&Value::Object(res), max).map_err(|e| {
            let mut b = ValidationBuilder::default();
            for (k, v) in e {
                b.set(&k, v);
            }
            b.build()
        })?;
    resources.push(Value::Object(res));
    let shown = update_resources(ctx, &pkg_id, resources)
        .await
        .map_err(last_resource_error)?;
    if let Some((_, up)) = upload {
        store_file(ctx.app.data_dir.clone(), &new_id, &up).await?;
    }
    find_resource(&shown, &new_id)
}

/// CKAN re-raises only the new resource's errors from the inner package_update.
fn last_resource_error(e: CkanError) -> CkanError {
    if e.kind != ErrorKind::Validation {
        return e;
    }
    match e
        .body
        .get("resources")
        .and_then(Value::as_array)
        .and_then(|a| a.last())
        .and_then(Value::as_object)
    {
        Some(last) if !last.is_empty() => CkanError {
            kind: ErrorKind::Validation,
            body: last.clone(),
        },
        _ => e,
    }
}

async fn update_resources(
    ctx: &mut ActionContext,
    pkg_id: &str,
    resources: Vec<Value>,
) -> CkanResult<Value> {
    let row = load(ctx, pkg_id).await?;
    let current = crate::package::show_row(ctx, &row).await?;
    let mut params = current.as_object().cloned().unwrap_or_default();
    // package_update needs the stored, not rewritten, resources and the raw lists.
    params.insert("resources".into(), Value::Array(resources));
    params.remove("metadata_modified");
    package_update(ctx, params).await
}

pub async fn resource_show(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let id = req_str(&p, "id")?;
    let pkg = resource_package(ctx, &id).await?;
    let mut auth = Params::new();
    auth.insert("id".into(), json!(pkg));
    ctx.check_access("resource_show", &auth).await?;
    let row = load(ctx, &pkg).await?;
    let shown = crate::package::show_row(ctx, &row).await?;
    resources_of(&shown)
        .into_iter()
        .find(|r| r["id"] == json!(id) || r["name"] == json!(id))
        .ok_or_else(|| not_found("Resource was not found."))
}

async fn resource_update_inner(
    ctx: &mut ActionContext,
    p: Params,
    merge: bool,
) -> CkanResult<Value> {
    let id = req_str(&p, "id")?;
    let pkg = resource_package(ctx, &id)
        .await
        .map_err(|_| not_found("Resource was not found."))?;
    let (pkg_id, mut resources) = stored_resources(ctx, &pkg).await?;
    let mut auth = Params::new();
    auth.insert("id".into(), json!(id));
    auth.insert("package_id".into(), json!(pkg_id));
    ctx.check_access("resource_update", &auth).await?;
    let idx = resources
        .iter()
        .position(|r| r["id"] == json!(id))
        .ok_or_else(|| not_found("Resource was not found."))?;
    let old = resources[idx].as_object().cloned().unwrap_or_default();
    let mut res = if merge {
        let mut m = old.clone();
        m.retain(|_, v| !v.is_null());
        m
    } else {
        Map::new()
    };
    for (k, v) in p {
        res.insert(k, v);
    }
    res.remove("package_id");
    if !merge {
        // Columns that keep their value when absent on update.
        for k in [
            "name",
            "format",
            "hash",
            "size",
            "created",
            "last_modified",
            "cache_url",
            "url_type",
            "datastore_active",
        ] {
            if let (false, Some(v)) = (res.contains_key(k), old.get(k)) {
                res.insert(k.into(), v.clone());
            }
        }
    }
    let given_url = res.get("url").and_then(Value::as_str).map(str::to_string);
    let upload = take_upload(ctx, &mut res).await?;
    if !merge {
        guess_mimetype(&mut res, given_url.as_deref(), upload.as_ref());
    }
    let max = ctx.config().catalog.max_field_chars;
    let res =
        catalog_plugin_schema::validate_resource_dict(&Value::Object(res), max).map_err(|e| {
            let mut b = ValidationBuilder::default();
            for (k, v) in e {
                b.set(&k, v);
            }
            b.build()
        })?;
    resources[idx] = Value::Object(res);
    let shown = update_resources(ctx, &pkg_id, resources)
        .await
        .map_err(|e| {
            if e.kind != ErrorKind::Validation {
                return e;
            }
            match e
                .body
                .get("resources")
                .and_then(Value::as_array)
                .and_then(|a| a.get(idx))
                .and_then(Value::as_object)
            {
                Some(slot) if !slot.is_empty() => CkanError {
                    kind: ErrorKind::Validation,
                    body: slot.clone(),
                },
                _ => e,
            }
        })?;
    if let Some((_, up)) = upload {
        store_file(ctx.app.data_dir.clone(), &id, &up).await?;
    }
    find_resource(&shown, &id)
}

pub async fn resource_update(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    resource_update_inner(ctx, p, false).await
}

pub async fn resource_patch(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    resource_update_inner(ctx, p, true).await
}

pub async fn resource_delete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let id = req_str(&p, "id")?;
    let pkg = resource_package(ctx, &id)
        .await
        .map_err(|_| not_found(""))?;
    let (pkg_id, mut resources) = stored_resources(ctx, &pkg).await?;
    let mut auth = Params::new();
    auth.insert("id".into(), json!(id));
    auth.insert("package_id".into(), json!(pkg_id));
    ctx.check_access("resource_delete", &auth).await?;
    resources.retain(|r| r["id"] != json!(id));
    update_resources(ctx, &pkg_id, resources).await?;
    Ok(Value::Null)
}

pub async fn package_resource_reorder(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let id = req_str(&p, "id")?;
    let order = match p.get("order") {
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .collect::<Vec<_>>(),
        _ => return Err(validation_message("Must be a list of resource")),
    };
    let unique: std::collections::HashSet<&String> = order.iter().collect();
    if unique.len() != order.len() {
        return Err(validation_message("Must supply unique resource_ids"));
    }
    let (pkg_id, resources) = stored_resources(ctx, &id).await?;
    let mut ordered = Vec::new();
    for rid in &order {
        let r = resources
            .iter()
            .find(|r| r["id"] == json!(rid))
            .ok_or_else(|| validation_message(format!("resource_id {rid} can not be found")))?;
        ordered.push(r.clone());
    }
    for r in &resources {
        if !order.iter().any(|o| r["id"] == json!(o)) {
            ordered.push(r.clone());
        }
    }
    let all: Vec<Value> = ordered.iter().map(|r| r["id"].clone()).collect();
    update_resources(ctx, &pkg_id, ordered).await?;
    Ok(json!({"id": id, "order": all}))
}

/// `GET /dataset/{id}/resource/{resource_id}/download/{filename}`: the uploaded file, with the
/// dataset's read permission (private datasets stay private).
pub async fn download(
    State(app): State<AppState>,
    Path((id, resource_id, _filename)): Path<(String, String, String)>,
    headers: HeaderMap,
) -> Response {
    let user = catalog_framework::http::identify(&app, &headers).await;
    let mut ctx = ActionContext::new(app.clone(), user);
    let mut p = Params::new();
    p.insert("id".into(), json!(resource_id));
    let res = match ctx.call("resource_show", p).await {
        Ok(r) => r,
        Err(e) => {
            return (e.status(), e.message().unwrap_or("Not found").to_string()).into_response()
        }
    };
    let belongs = match q::package_by_ref(
        &mut *match ctx.db().await {
            Ok(c) => c,
            Err(_) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        },
        &id,
    )
    .await
    {
        Ok(Some(pkg)) => res["package_id"] == json!(pkg.id),
        _ => false,
    };
    if !belongs || res["url_type"] != json!("upload") {
        return (StatusCode::NOT_FOUND, "Resource data not found").into_response();
    }
    match tokio::fs::read(upload_path(&app.data_dir, &resource_id)).await {
        Ok(bytes) => {
            let ct = res["mimetype"]
                .as_str()
                .unwrap_or("application/octet-stream")
                .to_string();
            (StatusCode::OK, [(header::CONTENT_TYPE, ct)], bytes).into_response()
        }
        Err(_) => (StatusCode::NOT_FOUND, "Resource data not found").into_response(),
    }
}
