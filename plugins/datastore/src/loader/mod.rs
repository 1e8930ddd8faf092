//! The loader (XLoader's job, done as a durable background job): when a resource with a
//! CSV, TSV or spreadsheet file is created or its file changes, a `datastore_load` job reads
//! the file (an upload from the data directory; a link through the server's fetch rules),
//! checks and types every row, fills a new table, and swaps it in for the resource's old one
//! in one transaction: readers see the old rows or the new rows, never half. A file with a
//! bad row is reported with its row and line and changes nothing.
//!
//! `xloader_submit` runs it again; `xloader_status` reports its state, log and error, in
//! XLoader's shapes (the record is kept in `datastore_load`, not in `task_status`).
//!
//! This file holds the settings, the queueing of loads (on a resource's new or changed file,
//! and by `xloader_submit`) and the two actions; the job is `job.rs`, the record it keeps
//! `state.rs`, the first pass over the file `read.rs` (with `guess.rs`, the columns' types)
//! and the filling of the new table `write.rs`.

mod guess;
mod job;
mod read;
mod state;
mod write;

use std::time::Duration;

use catalog_framework::events::{Change, DomainEvent, Entity, EventSubscriber};
use catalog_framework::jobs::JobOptions;
use catalog_framework::prelude::*;
use catalog_framework::store::time::now_iso;
use catalog_framework::typed::{ParamType, Truthy};

use crate::params::Opt;

pub(crate) use state::forget;
use state::load_row;

/// The job kind.
const KIND: &str = "datastore_load";
/// XLoader's default formats (`ckanext.xloader.formats`).
const DEFAULT_FORMATS: &[&str] = &[
    "csv",
    "application/csv",
    "text/csv",
    "tsv",
    "text/tab-separated-values",
    "xls",
    "xlsx",
    "application/vnd.ms-excel",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "ods",
    "application/vnd.oasis.opendocument.spreadsheet",
];

/// `catalog.datastore.loader.*`.
struct LoaderSettings {
    enabled: bool,
    formats: Vec<String>,
    /// How long a replaced table is kept for the readers that found it just before.
    drop_after: Duration,
}

fn settings(config: &Config) -> LoaderSettings {
    let loader = config
        .catalog
        .other
        .get("datastore")
        .and_then(|d| d.get("loader"));
    let enabled = loader
        .and_then(|l| l.get("enabled"))
        .is_none_or(|v| catalog_framework::params::truthy(Some(v)));
    let formats = match loader.and_then(|l| l.get("formats")) {
        Some(Value::String(s)) => s.split_whitespace().map(str::to_lowercase).collect(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_lowercase)
            .collect(),
        _ => DEFAULT_FORMATS.iter().map(|s| (*s).to_string()).collect(),
    };
    let drop_after = loader
        .and_then(|l| l.get("drop_replaced_after_secs"))
        .and_then(|v| {
            v.as_u64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        })
        .unwrap_or(30);
    LoaderSettings {
        enabled,
        formats,
        drop_after: Duration::from_secs(drop_after),
    }
}

/// Whether the loader takes this resource: a file (uploaded or linked) in one of the formats,
/// not a DataStore-only resource.
fn loadable(res: &Value, s: &LoaderSettings) -> bool {
    let format = res["format"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_lowercase();
    let url = res["url"].as_str().unwrap_or_default();
    let url_type = res["url_type"].as_str().unwrap_or_default();
    s.enabled
        && !url.is_empty()
        && !matches!(url_type, "datastore" | "datapusher" | "xloader")
        && s.formats.contains(&format)
}

/// Whether the file behind a resource changed (a new upload, another link, another format).
fn file_changed(before: Option<&Value>, after: &Value) -> bool {
    let Some(b) = before else { return true };
    ["url", "url_type", "format", "size"]
        .iter()
        .any(|k| b[*k] != after[*k])
        || (after["url_type"] == "upload" && b["last_modified"] != after["last_modified"])
}

/// Queues a load of the resource (replacing a queued one) and records it as pending.
async fn submit(
    ctx: &mut ActionContext,
    resource_id: &str,
    ignore_hash: bool,
) -> CkanResult<String> {
    let load_id = uuid::Uuid::new_v4().to_string();
    let job_id = ctx
        .enqueue_job(
            KIND,
            json!({"resource_id": resource_id, "load_id": load_id, "ignore_hash": ignore_hash}),
            JobOptions::default()
                .with_title(format!("Load resource {resource_id} into the DataStore")),
        )
        .await?;
    let now = now_iso();
    let conn = ctx.db().await?;
    // One statement: a new resource's row, or the pending load replacing the resource's last.
    sqlx::query(
        "INSERT INTO datastore_load (resource_id, job_id, load_id, state, logs, requested, last_updated) \
         VALUES ($1, $2, $3, 'pending', '[]', $4, $4) \
         ON CONFLICT (resource_id) DO UPDATE SET job_id = excluded.job_id, load_id = excluded.load_id, \
         state = 'pending', error = NULL, logs = '[]', rows_loaded = NULL, \
         requested = excluded.requested, finished = NULL, last_updated = excluded.last_updated",
    )
    .bind(resource_id)
    .bind(&job_id)
    .bind(&load_id)
    .bind(&now)
    .execute(&mut *conn)
    .await?;
    Ok(job_id)
}

/// Queues a load for every loadable resource whose file is new or changed.
struct AutoSubmit;

#[async_trait]
impl EventSubscriber for AutoSubmit {
    async fn on_event(&self, ctx: &mut ActionContext, event: &DomainEvent) -> CkanResult<()> {
        if event.entity != Entity::Package
            || !matches!(event.change, Change::Created | Change::Updated)
        {
            return Ok(());
        }
        let s = settings(ctx.config());
        if !s.enabled {
            return Ok(());
        }
        let Some(after) = &event.after else {
            return Ok(());
        };
        let none = Vec::new();
        let before = event
            .before
            .as_ref()
            .and_then(|b| b["resources"].as_array())
            .unwrap_or(&none);
        for res in after["resources"].as_array().unwrap_or(&none) {
            let Some(id) = res["id"].as_str() else {
                continue;
            };
            let old = before.iter().find(|b| b["id"] == res["id"]);
            if loadable(res, &s) && file_changed(old, res) {
                submit(ctx, id, false).await?;
            }
        }
        Ok(())
    }
}

register_event_subscriber!("datastore_loader", AutoSubmit);

action_params! {
    /// Loads a resource's file into the DataStore again (XLoader's `xloader_submit`): queues
    /// a load and answers `true`, or `false` when a load of it is queued already.
    pub struct XloaderSubmitParams {
        /// the resource's id
        resource_id: Opt<IdString>,
        /// alias of resource_id
        id: Opt<IdString>,
        /// load even when the file has not changed since the last load
        ignore_hash: Option<Truthy>,
        /// accepted; the resource's url_type is left as it is
        set_url_type: Option<Truthy>,
    }
}

/// A resource id as the loader's actions read it: a string; any other value (a number, a
/// list) is no id, so that `id` sent so hides `resource_id` and is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IdString(pub Option<String>);

impl ParamType for IdString {
    fn decode(v: &Value) -> Result<Self, std::borrow::Cow<'static, str>> {
        Ok(IdString(v.as_str().map(str::to_string)))
    }
    fn schema() -> Value {
        json!({"type": "string"})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// `id`, else `resource_id`: a string that is not blank, else `Missing value`.
fn resource_id_param(id: &Opt<IdString>, resource_id: &Opt<IdString>) -> CkanResult<String> {
    id.0.as_ref()
        .or(resource_id.0.as_ref())
        .and_then(|IdString(s)| s.clone())
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| validation().field("resource_id", "Missing value").build())
}

/// The resource (404 when there is none) and the auth check's data.
async fn resource_for(ctx: &mut ActionContext, id: &str, action: &str) -> CkanResult<Value> {
    let res = match ctx
        .call_ignoring_auth(
            "resource_show",
            [("id".to_string(), json!(id))].into_iter().collect(),
        )
        .await
    {
        Ok(r) => r,
        Err(e) if e.kind == ErrorKind::NotFound => return Err(not_found("")),
        Err(e) => return Err(e),
    };
    let data: Params = [
        ("resource_id".to_string(), res["id"].clone()),
        ("package_id".to_string(), res["package_id"].clone()),
    ]
    .into_iter()
    .collect();
    ctx.check_access(action, &data).await?;
    Ok(res)
}

pub(crate) async fn xloader_submit(
    ctx: &mut ActionContext,
    p: XloaderSubmitParams,
) -> CkanResult<Value> {
    let id = resource_id_param(&p.id, &p.resource_id)?;
    let res = resource_for(ctx, &id, "xloader_submit").await?;
    let rid = res["id"].as_str().unwrap_or_default().to_string();
    if let Some(row) = load_row(ctx.db().await?, &rid).await? {
        if row.state == "pending" {
            return Ok(json!(false));
        }
    }
    let ignore_hash = p.ignore_hash.is_some_and(|t| t.0);
    submit(ctx, &rid, ignore_hash).await?;
    Ok(json!(true))
}

action_params! {
    /// The state of a resource's latest load (XLoader's `xloader_status`): `status`
    /// (pending, running, complete, error), `job_id`, `last_updated`, `task_info` (the load's
    /// log and counts) and `error`.
    pub struct XloaderStatusParams {
        /// the resource's id
        resource_id: Opt<IdString>,
        /// alias of resource_id
        id: Opt<IdString>,
    }
}

pub(crate) async fn xloader_status(
    ctx: &mut ActionContext,
    p: XloaderStatusParams,
) -> CkanResult<Value> {
    let id = resource_id_param(&p.id, &p.resource_id)?;
    let res = resource_for(ctx, &id, "xloader_status").await?;
    let rid = res["id"].as_str().unwrap_or_default().to_string();
    let row = load_row(ctx.db().await?, &rid)
        .await?
        .ok_or_else(|| not_found(""))?;
    let logs: Value = serde_json::from_str(&row.logs).unwrap_or_else(|_| json!([]));
    let error = row.error.as_ref().map_or_else(|| json!({}), |e| json!(e));
    Ok(json!({
        "status": row.state,
        "job_id": row.job_id,
        "job_url": null,
        "last_updated": row.last_updated,
        "task_info": {
            "job_id": row.job_id,
            "status": row.state,
            "requested_timestamp": row.requested,
            "finished_timestamp": row.finished,
            "rows_loaded": row.rows_loaded,
            "error": row.error.as_ref().map(|e| json!({"message": e})),
            "logs": logs,
        },
        "error": error,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog_framework::typed::ActionParams;

    #[test]
    fn only_a_string_is_an_id_and_id_hides_resource_id() {
        let id = |v: Value| {
            let p = XloaderStatusParams::decode(v.as_object().cloned().unwrap()).unwrap();
            resource_id_param(&p.id, &p.resource_id).map_err(|e| e.to_error_object())
        };
        let missing = Err(json!({"__type": "Validation Error", "resource_id": ["Missing value"]}));
        assert_eq!(id(json!({"resource_id": "r"})), Ok("r".to_string()));
        assert_eq!(
            id(json!({"id": "i", "resource_id": "r"})),
            Ok("i".to_string())
        );
        assert_eq!(
            id(json!({"id": null, "resource_id": "r"})),
            Ok("r".to_string())
        );
        assert_eq!(id(json!({"id": 5, "resource_id": "r"})), missing);
        assert_eq!(id(json!({"resource_id": 5})), missing);
        assert_eq!(id(json!({"resource_id": " "})), missing);
        assert_eq!(id(json!({})), missing);
    }
}
