//! The loader (XLoader's job, done as a durable background job): when a resource with a
//! CSV, TSV or spreadsheet file is created or its file changes, a `datastore_load` job reads
//! the file (an upload from the data directory; a link through the server's fetch rules),
//! checks and types every row, fills a new table, and swaps it in for the resource's old one
//! in one transaction: readers see the old rows or the new rows, never half. A file with a
//! bad row is reported with its row and line and changes nothing.
//!
//! `xloader_submit` runs it again; `xloader_status` reports its state, log and error, in
//! XLoader's shapes (the record is kept in `datastore_load`, not in `task_status`).

mod read;
mod write;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use catalog_framework::events::{Change, DomainEvent, Entity, EventSubscriber};
use catalog_framework::jobs::JobOptions;
use catalog_framework::prelude::*;
use catalog_framework::store::time::now_iso;
use sha2::{Digest, Sha256};
use sqlx::{AnyConnection, Row};

use crate::table::{self, Field, Meta};
use crate::types::parse_type;

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
/// How long one load may run.
const LOAD_TIMEOUT: Duration = Duration::from_secs(3600);
/// The largest spreadsheet read (a spreadsheet is read whole into memory).
const SPREADSHEET_MAX: u64 = 50 * 1024 * 1024;
/// Log lines a load keeps.
const MAX_LOG: usize = 200;

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

/// The loader's row of a resource.
struct LoadRow {
    job_id: Option<String>,
    load_id: Option<String>,
    state: String,
    file_hash: Option<String>,
    loading_table: Option<String>,
    rows_loaded: Option<i64>,
    error: Option<String>,
    logs: String,
    requested: String,
    finished: Option<String>,
    last_updated: String,
}

async fn load_row(conn: &mut AnyConnection, resource_id: &str) -> CkanResult<Option<LoadRow>> {
    let row = sqlx::query(
        "SELECT job_id, load_id, state, file_hash, loading_table, CAST(rows_loaded AS BIGINT) AS rows_loaded, error, logs, requested, finished, last_updated FROM datastore_load WHERE resource_id = $1",
    )
    .bind(resource_id)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(|r| LoadRow {
        job_id: r.try_get("job_id").ok(),
        load_id: r.try_get("load_id").ok(),
        state: r.try_get("state").unwrap_or_default(),
        file_hash: r.try_get("file_hash").ok(),
        loading_table: r.try_get("loading_table").ok(),
        rows_loaded: r.try_get("rows_loaded").ok(),
        error: r.try_get("error").ok(),
        logs: r.try_get("logs").unwrap_or_else(|_| "[]".into()),
        requested: r.try_get("requested").unwrap_or_default(),
        finished: r.try_get("finished").ok(),
        last_updated: r.try_get("last_updated").unwrap_or_default(),
    }))
}

/// The log of one load, kept in memory and written with each state change.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<Value>>>);

impl Log {
    fn line(&self, level: &str, message: impl Into<String>) {
        let message = message.into();
        tracing::info!(target: "datastore_load", "{message}");
        let mut l = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if l.len() < MAX_LOG {
            l.push(json!({"timestamp": now_iso(), "message": message, "level": level}));
        }
    }
    fn json(&self) -> String {
        Value::Array(
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
        )
        .to_string()
    }
}

/// Writes the load's state if it is still the resource's current load (a newer submit wins).
/// Whether it was.
async fn set_state(
    app: &AppState,
    resource_id: &str,
    load_id: &str,
    state: &str,
    log: &Log,
    extra: &[(&str, Option<String>)],
) -> anyhow::Result<bool> {
    let mut sets = vec![
        "state = $3".to_string(),
        "logs = $4".to_string(),
        "last_updated = $5".to_string(),
    ];
    for (i, (col, _)) in extra.iter().enumerate() {
        sets.push(format!("{col} = ${}", i + 6));
    }
    let sql = format!(
        "UPDATE datastore_load SET {} WHERE resource_id = $1 AND load_id = $2",
        sets.join(", ")
    );
    let _guard = app.store.lock_writes().await;
    let mut q = sqlx::query(&sql)
        .bind(resource_id)
        .bind(load_id)
        .bind(state)
        .bind(log.json())
        .bind(now_iso());
    for (_, v) in extra {
        q = q.bind(v.clone());
    }
    Ok(q.execute(&app.store.pool).await?.rows_affected() > 0)
}

/// Runs the loads.
struct LoadJob;

/// How a load ended when it did not fail for a reason worth retrying.
enum Outcome {
    Complete(u64),
    Skipped(String),
    /// The file is bad: reported, not retried.
    Bad(String),
    /// A newer submit took over.
    Superseded,
}

#[async_trait]
impl JobHandler for LoadJob {
    fn lane(&self) -> &'static str {
        catalog_framework::jobs::LOAD_LANE
    }

    fn timeout(&self) -> Option<Duration> {
        Some(LOAD_TIMEOUT)
    }

    async fn run(&self, app: &AppState, payload: &Value) -> anyhow::Result<Value> {
        let resource_id = payload["resource_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let load_id = payload["load_id"].as_str().unwrap_or_default().to_string();
        let ignore_hash = payload["ignore_hash"].as_bool().unwrap_or(false);
        let log = Log::default();
        if !set_state(app, &resource_id, &load_id, "running", &log, &[]).await? {
            return Ok(json!({"superseded": true}));
        }
        let outcome = load(app, &resource_id, &load_id, ignore_hash, &log).await;
        let (state, error, result) = match outcome {
            Ok(Outcome::Complete(rows)) => ("complete", None, json!({"rows": rows})),
            Ok(Outcome::Skipped(why)) => {
                log.line("INFO", why);
                ("complete", None, json!({"skipped": true}))
            }
            Ok(Outcome::Bad(msg)) => {
                log.line("ERROR", msg.clone());
                ("error", Some(msg.clone()), json!({"error": msg}))
            }
            Ok(Outcome::Superseded) => return Ok(json!({"superseded": true})),
            Err(e) => {
                let msg = format!("Loading file raised an error: {e}");
                log.line("ERROR", msg.clone());
                set_state(
                    app,
                    &resource_id,
                    &load_id,
                    "error",
                    &log,
                    &[("error", Some(msg)), ("finished", Some(now_iso()))],
                )
                .await?;
                return Err(e);
            }
        };
        if !set_state(
            app,
            &resource_id,
            &load_id,
            state,
            &log,
            &[("error", error), ("finished", Some(now_iso()))],
        )
        .await?
        {
            return Ok(json!({"superseded": true}));
        }
        // PostgreSQL: the rows are queryable now; the full-text index is built after, without
        // blocking the table (a `q` meanwhile scans). A run that finds it built does nothing;
        // one killed midway leaves an invalid index, rebuilt by the job's next run.
        if state == "complete" && app.store.backend == catalog_framework::store::Backend::Postgres {
            if let Some(took) = write::ensure_full_text_index(app, &resource_id).await? {
                log.line(
                    "INFO",
                    format!("Full-text index built in {:.1} s", took.as_secs_f64()),
                );
                set_state(app, &resource_id, &load_id, "complete", &log, &[]).await?;
            }
        }
        Ok(result)
    }
}

register_job_handler!(KIND, LoadJob);

/// SHA-256 of a file, read on a blocking thread.
async fn file_hash(path: std::path::PathBuf) -> anyhow::Result<String> {
    tokio::task::spawn_blocking(move || -> anyhow::Result<String> {
        use std::io::Read;
        let mut f = std::fs::File::open(&path)?;
        let mut h = Sha256::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = f.read(&mut buf)?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
        Ok(hex::encode(h.finalize()))
    })
    .await?
}

async fn load(
    app: &AppState,
    resource_id: &str,
    load_id: &str,
    ignore_hash: bool,
    log: &Log,
) -> anyhow::Result<Outcome> {
    let mut ctx = ActionContext::new(app.clone(), None);
    ctx.ignore_auth = true;
    let res = match ctx
        .run_top(
            "resource_show",
            [("id".to_string(), json!(resource_id))]
                .into_iter()
                .collect(),
        )
        .await
    {
        Ok(r) => r,
        Err(e) if e.kind == ErrorKind::NotFound => {
            return Ok(Outcome::Bad("The resource was not found".into()))
        }
        Err(e) => return Err(anyhow::anyhow!("{e}")),
    };
    if res["url_type"] == "datastore" {
        return Ok(Outcome::Skipped(
            "Ignoring resource - R/W DataStore resources are managed with the Datastore API".into(),
        ));
    }
    // A table an earlier, interrupted run of this load was filling is dropped first.
    drop_loading_table(app, resource_id).await?;
    let work = tempfile::Builder::new()
        .prefix("datastore-load-")
        .tempdir_in(std::env::temp_dir())?;
    let path = if res["url_type"] == "upload" {
        match app.files.local_path(resource_id) {
            Some(p) => {
                if !p.exists() {
                    return Ok(Outcome::Bad("The uploaded file is missing".into()));
                }
                log.line("INFO", "Reading the uploaded file");
                p
            }
            None => {
                // An object store: the file is copied here first (the loader reads it twice).
                let dest = work.path().join("upload");
                log.line("INFO", "Copying the uploaded file from the file store");
                match app.files.copy_to(resource_id, &dest).await? {
                    Some(n) => log.line("INFO", format!("Copied {n} bytes")),
                    None => return Ok(Outcome::Bad("The uploaded file is missing".into())),
                }
                dest
            }
        }
    } else {
        let url = res["url"].as_str().unwrap_or_default();
        let dest = work.path().join("download");
        log.line("INFO", format!("Fetching {url}"));
        match catalog_framework::fetch::to_file(&app.config.catalog.fetch, url, &dest).await {
            Ok(got) => {
                log.line("INFO", format!("Downloaded {} bytes", got.size));
                dest
            }
            Err(
                e @ (catalog_framework::fetch::FetchError::Refused(_)
                | catalog_framework::fetch::FetchError::TooLarge { .. }
                | catalog_framework::fetch::FetchError::Status { .. }),
            ) => return Ok(Outcome::Bad(e.to_string())),
            Err(e) => return Err(e.into()),
        }
    };
    let hash = file_hash(path.clone()).await?;
    let (previous, has_table) = {
        let mut conn = app.store.pool.acquire().await?;
        let previous = load_row(&mut conn, resource_id)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let has_table = table::load(&mut conn, resource_id)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .is_some();
        (previous, has_table)
    };
    if !ignore_hash
        && has_table
        && previous.as_ref().and_then(|p| p.file_hash.as_deref()) == Some(hash.as_str())
    {
        return Ok(Outcome::Skipped(format!(
            "Ignoring resource - the file hash hasn't changed: {hash}."
        )));
    }
    let format = res["format"].as_str().unwrap_or_default().to_lowercase();
    let work_dir = work.path().to_path_buf();
    let surveyed = tokio::task::spawn_blocking(move || {
        read::survey(&path, &format, &work_dir, SPREADSHEET_MAX)
    })
    .await?;
    let survey = match surveyed {
        Ok(s) => s,
        Err(e) => return Ok(Outcome::Bad(e.to_string())),
    };
    for n in &survey.notes {
        log.line("INFO", n.clone());
    }
    log.line(
        "INFO",
        format!(
            "{} rows, {} columns, read as {}",
            survey.rows,
            survey.columns.len(),
            survey.encoding
        ),
    );
    let fields: Vec<Field> = survey
        .columns
        .iter()
        .zip(&survey.types)
        .map(|(c, t)| Field {
            id: c.clone(),
            ftype: parse_type(t.type_name()).expect("the guessed types are known"),
            info: None,
        })
        .collect();
    let meta = Meta {
        resource_id: resource_id.to_string(),
        name: table::table_name(&format!("{resource_id}:{load_id}")),
        fields,
        primary_key: Vec::new(),
    };
    // Remember the table before making it, so that a crash leaves nothing unnamed behind.
    if !set_state(
        app,
        resource_id,
        load_id,
        "running",
        log,
        &[("loading_table", Some(meta.name.clone()))],
    )
    .await?
    {
        return Ok(Outcome::Superseded);
    }
    // PostgreSQL makes the table in the loading transaction itself (write.rs).
    if app.store.backend == catalog_framework::store::Backend::Sqlite {
        let _guard = app.store.lock_writes().await;
        let mut conn = app.store.pool.acquire().await?;
        table::create_bare(&mut conn, app.store.backend, &meta)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let (app2, rid, lid) = (app.clone(), resource_id.to_string(), load_id.to_string());
    let progress = move |rows: u64| {
        let (app, rid, lid) = (app2.clone(), rid.clone(), lid.clone());
        // Only the count, and only while this load is running: a report that arrives after
        // the swap must not turn a complete load back into a running one.
        tokio::spawn(async move {
            let _guard = app.store.lock_writes().await;
            let _ = sqlx::query(
                "UPDATE datastore_load SET rows_loaded = $3 WHERE resource_id = $1 AND load_id = $2 AND state = 'running'",
            )
            .bind(&rid)
            .bind(&lid)
            .bind(i64::try_from(rows).unwrap_or(i64::MAX))
            .execute(&app.store.pool)
            .await;
        });
    };
    let filled = write::fill(app, &meta, &survey, &progress).await;
    let rows = match filled {
        Ok(n) => n,
        Err(e) => {
            drop_loading_table(app, resource_id).await.ok();
            return Err(e);
        }
    };
    log.line("INFO", format!("Loaded {rows} rows"));
    match swap(app, &meta, load_id, &hash, rows, log).await {
        Ok(true) => {
            let (app, rid) = (app.clone(), resource_id.to_string());
            let grace = settings(&app.config).drop_after;
            tokio::spawn(async move {
                tokio::time::sleep(grace).await;
                if let Err(e) = drop_loading_table(&app, &rid).await {
                    tracing::warn!(resource = %rid, "dropping the replaced table: {e}");
                }
            });
            Ok(Outcome::Complete(rows))
        }
        Ok(false) => {
            drop_loading_table(app, resource_id).await.ok();
            Ok(Outcome::Superseded)
        }
        Err(e) => {
            drop_loading_table(app, resource_id).await.ok();
            Err(e)
        }
    }
}

/// Drops the table the resource's current load was filling, if any.
async fn drop_loading_table(app: &AppState, resource_id: &str) -> anyhow::Result<()> {
    let _guard = app.store.lock_writes().await;
    let mut conn = app.store.pool.acquire().await?;
    let Some(row) = load_row(&mut conn, resource_id)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?
    else {
        return Ok(());
    };
    let Some(name) = row.loading_table.filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    let current = table::load(&mut conn, resource_id)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    if current.is_some_and(|m| m.name == name) {
        return Ok(());
    }
    let meta = Meta {
        resource_id: resource_id.to_string(),
        name,
        fields: Vec::new(),
        primary_key: Vec::new(),
    };
    table::drop_bare(&mut conn, app.store.backend, &meta)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    sqlx::query("UPDATE datastore_load SET loading_table = NULL WHERE resource_id = $1")
        .bind(resource_id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// In one transaction: drops the resource's old table, records the new one, marks the
/// resource `datastore_active`, and records the load as complete. `false`: a newer load was
/// submitted meanwhile, or the resource is gone (nothing is changed).
async fn swap(
    app: &AppState,
    meta: &Meta,
    load_id: &str,
    hash: &str,
    rows: u64,
    log: &Log,
) -> anyhow::Result<bool> {
    let meta = meta.clone();
    let (load_id, hash, logs) = (load_id.to_string(), hash.to_string(), log.json());
    let mut ctx = ActionContext::new(app.clone(), None);
    ctx.ignore_auth = true;
    let done = ctx
        .run_write(KIND, move |ctx| {
            Box::pin(async move {
                let current = load_row(ctx.db().await?, &meta.resource_id).await?;
                if current.and_then(|c| c.load_id).as_deref() != Some(load_id.as_str()) {
                    return Ok(json!(false));
                }
                let res = match ctx
                    .call("resource_show", [("id".to_string(), json!(meta.resource_id))].into_iter().collect())
                    .await
                {
                    Ok(r) => r,
                    Err(e) if e.kind == ErrorKind::NotFound => return Ok(json!(false)),
                    Err(e) => return Err(e),
                };
                // The old table is forgotten now and dropped a little later, so that a
                // reader that found it just before still reads it.
                let old = table::load(ctx.db().await?, &meta.resource_id).await?;
                if old.is_some() {
                    table::forget(ctx.db().await?, &meta.resource_id).await?;
                }
                table::record(ctx.db().await?, &meta).await?;
                sqlx::query(
                    "UPDATE datastore_load SET state = 'complete', loading_table = $6, file_hash = $2, rows_loaded = $3, logs = $4, last_updated = $5, finished = $5 WHERE resource_id = $1",
                )
                .bind(&meta.resource_id)
                .bind(&hash)
                .bind(i64::try_from(rows).unwrap_or(i64::MAX))
                .bind(&logs)
                .bind(now_iso())
                .bind(old.map(|o| o.name))
                .execute(ctx.db().await?)
                .await?;
                if res["datastore_active"] != json!(true) {
                    ctx.call(
                        "resource_patch",
                        [
                            ("id".to_string(), json!(meta.resource_id)),
                            ("datastore_active".to_string(), json!(true)),
                        ]
                        .into_iter()
                        .collect(),
                    )
                    .await?;
                }
                // The views that need the DataStore (the table preview), as DataPusher and
                // XLoader make them after a load; a view the resource has is kept.
                if ctx.has_action("resource_create_default_resource_views") {
                    ctx.call(
                        "resource_create_default_resource_views",
                        [
                            ("resource".to_string(), json!({"id": meta.resource_id})),
                            ("create_datastore_views".to_string(), json!(true)),
                        ]
                        .into_iter()
                        .collect(),
                    )
                    .await?;
                }
                Ok(json!(true))
            })
        })
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(done == json!(true))
}

/// Forgets the load of a resource that is deleted, and drops the table it left (a replaced
/// one, or one being filled); its current table goes with [`crate::DropTables`].
pub(crate) async fn forget(
    conn: &mut AnyConnection,
    backend: catalog_framework::store::Backend,
    resource_id: &str,
) -> CkanResult<()> {
    if let Some(name) = load_row(conn, resource_id)
        .await?
        .and_then(|r| r.loading_table)
        .filter(|n| !n.is_empty())
    {
        let meta = Meta {
            resource_id: resource_id.to_string(),
            name,
            fields: Vec::new(),
            primary_key: Vec::new(),
        };
        table::drop_bare(conn, backend, &meta).await?;
    }
    sqlx::query("DELETE FROM datastore_load WHERE resource_id = $1")
        .bind(resource_id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

action_params! {
    /// Loads a resource's file into the DataStore again (XLoader's `xloader_submit`): queues
    /// a load and answers `true`, or `false` when a load of it is queued already.
    pub struct XloaderSubmitParams {
        /// the resource's id
        resource_id: Option<Value>,
        /// alias of resource_id
        id: Option<Value>,
        /// load even when the file has not changed since the last load
        ignore_hash: Option<Value>,
        /// accepted; the resource's url_type is left as it is
        set_url_type: Option<Value>,
    }
}

fn resource_id_param(id: &Option<Value>, resource_id: &Option<Value>) -> CkanResult<String> {
    id.as_ref()
        .or(resource_id.as_ref())
        .and_then(|v| v.as_str().map(str::to_string))
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
    let ignore_hash = p
        .ignore_hash
        .as_ref()
        .is_some_and(|v| catalog_framework::params::truthy(Some(v)));
    submit(ctx, &rid, ignore_hash).await?;
    Ok(json!(true))
}

action_params! {
    /// The state of a resource's latest load (XLoader's `xloader_status`): `status`
    /// (pending, running, complete, error), `job_id`, `last_updated`, `task_info` (the load's
    /// log and counts) and `error`.
    pub struct XloaderStatusParams {
        /// the resource's id
        resource_id: Option<Value>,
        /// alias of resource_id
        id: Option<Value>,
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
