//! Resources: the `resource_*` actions and `package_resource_reorder`, all written through
//! `package_update` as CKAN does; uploads and their download route.

use catalog_framework::context::Upload;
use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::store::time::now_iso;
use catalog_framework::store::PackageRow;

use crate::dictize::munge_filename;
use crate::package::load;
use crate::package::update::update_dict;

pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod download;
pub(crate) mod format_autocomplete;
pub(crate) mod purge_files;
pub(crate) mod reorder;
pub(crate) mod search;
pub(crate) mod show;
pub(crate) mod update;

/// [`dict_params!`](crate::dict_params) with the keys of a resource dict.
macro_rules! resource_dict_params {
    ($($t:tt)*) => {
        crate::dict_params! {
            [
                /// the URL of the resource's data
                url: crate::InDict<String>,
                /// a file sent in a multipart body, stored with the resource
                upload: crate::InDict<Value>,
                /// the name
                name: crate::InDict<String>,
                /// a description
                description: crate::InDict<String>,
                /// the format (`CSV`, `JSON` …)
                format: crate::InDict<String>,
                /// a hash of the data
                hash: crate::InDict<String>,
                /// the resource type
                resource_type: crate::InDict<String>,
                /// the MIME type
                mimetype: crate::InDict<String>,
                /// the MIME type inside an archive
                mimetype_inner: crate::InDict<String>,
                /// the size in bytes
                size: crate::InDict<i64>,
                /// when the data last changed (ISO timestamp)
                last_modified: crate::InDict<String>,
            ]
            $($t)*
        }
    };
}
pub(crate) use resource_dict_params;

fn resources_of(doc: &Value) -> Vec<Value> {
    doc.get("resources")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// A dataset's row, loaded (and locked) for a change, and its stored (not output) resources.
async fn stored_resources(
    ctx: &mut ActionContext,
    package_id: &str,
) -> CkanResult<(PackageRow, Vec<Value>)> {
    let row = load(ctx, package_id).await?;
    let doc: Value = serde_json::from_str(&row.data)?;
    Ok((row, resources_of(&doc)))
}

/// Finds the dataset of a resource id (or exact resource name).
async fn resource_package(ctx: &mut ActionContext, id: &str) -> CkanResult<String> {
    q::active_resource_package_id(ctx.db().await?, id)
        .await?
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
    resource.insert("last_modified".into(), json!(now_iso()));
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

/// Stores an upload's temporary file as the resource's file (read, not moved: a call run again
/// after a store conflict stores the same upload again). A store that fails (an object store
/// out of reach) fails the call, so its transaction leaves no resource pointing at no file.
async fn store_file(
    files: &catalog_framework::files::FileStore,
    resource_id: &str,
    upload: &Upload,
) -> CkanResult<()> {
    files
        .put_file(resource_id, upload.path.as_ref())
        .await
        .map_err(|e| {
            tracing::error!(resource_id, error = %e, "storing an upload");
            internal(e)
        })?;
    Ok(())
}

fn find_resource(show: &Value, id: &str) -> CkanResult<Value> {
    resources_of(show)
        .into_iter()
        .find(|r| r["id"] == json!(id))
        .ok_or_else(|| not_found("Resource was not found."))
}

/// CKAN re-raises only the written resource's errors from the inner package_update: those of
/// its slot `idx` in `resources` (the last slot when `None`), when it has any.
fn resource_slot_error(e: CkanError, idx: Option<usize>) -> CkanError {
    if e.kind != ErrorKind::Validation {
        return e;
    }
    let slot = e
        .body
        .get("resources")
        .and_then(Value::as_array)
        .and_then(|a| match idx {
            Some(i) => a.get(i),
            None => a.last(),
        })
        .and_then(Value::as_object)
        .filter(|s| !s.is_empty())
        .cloned();
    match slot {
        Some(body) => CkanError {
            kind: ErrorKind::Validation,
            body,
        },
        None => e,
    }
}

/// The resource `id` of the dataset `package_id` as `package_show` shows it.
async fn shown_resource(ctx: &mut ActionContext, package_id: &str, id: &str) -> CkanResult<Value> {
    let row = load(ctx, package_id).await?;
    let shown = crate::package::show_row(ctx, &row).await?;
    find_resource(&shown, id)
}

/// CKAN's resource actions: a `package_show` of the dataset `row` (loaded in this call) and a
/// `package_update` of it with `resources`, in the caller's transaction. Returns the stored
/// document written.
async fn update_resources(
    ctx: &mut ActionContext,
    row: PackageRow,
    resources: Vec<Value>,
) -> CkanResult<Map<String, Value>> {
    let current = crate::package::show_row(ctx, &row).await?;
    let mut params = current.as_object().cloned().unwrap_or_default();
    // package_update needs the stored, not rewritten, resources and the raw lists.
    params.insert("resources".into(), Value::Array(resources));
    params.remove("metadata_modified");
    // The dataset's own groups, as shown: without them package_update keeps the memberships
    // as they are instead of writing them again.
    params.remove("groups");
    update_dict(ctx, row, params).await
}
