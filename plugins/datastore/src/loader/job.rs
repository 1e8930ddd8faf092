//! The load job (`datastore_load`): one resource's file read, checked and typed, a new table
//! filled with its rows, and swapped in for the old one in one transaction, with the load's
//! state, log and outcome written to its record as it goes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use catalog_framework::prelude::*;
use catalog_framework::store::time::now_iso;
use sha2::{Digest, Sha256};

use super::read::{self, Survey};
use super::state::{drop_loading_table, load_row, set_state, Log};
use super::write;
use super::{settings, KIND};
use crate::table::{self, Field, Meta};
use crate::types::parse_type;

/// How long one load may run.
const LOAD_TIMEOUT: Duration = Duration::from_secs(3600);
/// The largest spreadsheet read (a spreadsheet is read whole into memory).
const SPREADSHEET_MAX: u64 = 50 * 1024 * 1024;

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

/// One load, in steps: the resource read, its file fetched and hashed (an unchanged file is
/// skipped), the first pass over it (`read::survey`), a new table made and filled, and the
/// swap.
async fn load(
    app: &AppState,
    resource_id: &str,
    load_id: &str,
    ignore_hash: bool,
    log: &Log,
) -> anyhow::Result<Outcome> {
    let res = match resource(app, resource_id).await? {
        Ok(r) => r,
        Err(done) => return Ok(done),
    };
    // A table an earlier, interrupted run of this load was filling is dropped first.
    drop_loading_table(app, resource_id).await?;
    let work = tempfile::Builder::new()
        .prefix("datastore-load-")
        .tempdir_in(std::env::temp_dir())?;
    let path = match fetch(app, &res, resource_id, work.path(), log).await? {
        Ok(p) => p,
        Err(done) => return Ok(done),
    };
    let hash = file_hash(path.clone()).await?;
    if let Some(done) = unchanged(app, resource_id, &hash, ignore_hash).await? {
        return Ok(done);
    }
    let survey = match survey(&res, path, work.path(), log).await? {
        Ok(s) => s,
        Err(done) => return Ok(done),
    };
    let meta = new_table(resource_id, load_id, &survey);
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
    let rows = fill(app, &meta, &survey, load_id).await?;
    log.line("INFO", format!("Loaded {rows} rows"));
    finish(app, &meta, load_id, &hash, rows, log).await
}

/// The resource to load, or how the load ends: a resource that is gone is reported, a
/// DataStore-only one skipped.
async fn resource(app: &AppState, resource_id: &str) -> anyhow::Result<Result<Value, Outcome>> {
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
            return Ok(Err(Outcome::Bad("The resource was not found".into())))
        }
        Err(e) => return Err(anyhow::anyhow!("{e}")),
    };
    if res["url_type"] == "datastore" {
        return Ok(Err(Outcome::Skipped(
            "Ignoring resource - R/W DataStore resources are managed with the Datastore API".into(),
        )));
    }
    Ok(Ok(res))
}

/// The path of the resource's file: an upload in the data directory where it is, one in an
/// object store copied under `work`, a link downloaded under `work` (through the server's
/// fetch rules). A missing or refused file is reported.
async fn fetch(
    app: &AppState,
    res: &Value,
    resource_id: &str,
    work: &Path,
    log: &Log,
) -> anyhow::Result<Result<PathBuf, Outcome>> {
    let path = if res["url_type"] == "upload" {
        match app.files.local_path(resource_id) {
            Some(p) => {
                if !p.exists() {
                    return Ok(Err(Outcome::Bad("The uploaded file is missing".into())));
                }
                log.line("INFO", "Reading the uploaded file");
                p
            }
            None => {
                // An object store: the file is copied here first (the loader reads it twice).
                let dest = work.join("upload");
                log.line("INFO", "Copying the uploaded file from the file store");
                match app.files.copy_to(resource_id, &dest).await? {
                    Some(n) => log.line("INFO", format!("Copied {n} bytes")),
                    None => return Ok(Err(Outcome::Bad("The uploaded file is missing".into()))),
                }
                dest
            }
        }
    } else {
        let url = res["url"].as_str().unwrap_or_default();
        let dest = work.join("download");
        log.line("INFO", format!("Fetching {url}"));
        match app
            .fetcher
            .to_file(&app.config.catalog.fetch, url, &dest)
            .await
        {
            Ok(got) => {
                log.line("INFO", format!("Downloaded {} bytes", got.size));
                dest
            }
            Err(
                e @ (catalog_framework::fetch::FetchError::Refused(_)
                | catalog_framework::fetch::FetchError::TooLarge { .. }
                | catalog_framework::fetch::FetchError::Status { .. }),
            ) => return Ok(Err(Outcome::Bad(e.to_string()))),
            Err(e) => return Err(e.into()),
        }
    };
    Ok(Ok(path))
}

/// `Skipped` when the file is the one the resource's table was loaded from (unless
/// `ignore_hash`).
async fn unchanged(
    app: &AppState,
    resource_id: &str,
    hash: &str,
    ignore_hash: bool,
) -> anyhow::Result<Option<Outcome>> {
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
        && previous.as_ref().and_then(|p| p.file_hash.as_deref()) == Some(hash)
    {
        return Ok(Some(Outcome::Skipped(format!(
            "Ignoring resource - the file hash hasn't changed: {hash}."
        ))));
    }
    Ok(None)
}

/// The first pass over the file, on a blocking thread, and its notes logged; a bad file is
/// reported.
async fn survey(
    res: &Value,
    path: PathBuf,
    work: &Path,
    log: &Log,
) -> anyhow::Result<Result<Survey, Outcome>> {
    let format = res["format"].as_str().unwrap_or_default().to_lowercase();
    let work_dir = work.to_path_buf();
    let surveyed = tokio::task::spawn_blocking(move || {
        read::survey(&path, &format, &work_dir, SPREADSHEET_MAX)
    })
    .await?;
    let survey = match surveyed {
        Ok(s) => s,
        Err(e) => return Ok(Err(Outcome::Bad(e.to_string()))),
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
    Ok(Ok(survey))
}

/// The new table of this load: a name of its own, the surveyed columns and their types.
fn new_table(resource_id: &str, load_id: &str, survey: &Survey) -> Meta {
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
    Meta {
        resource_id: resource_id.to_string(),
        name: table::table_name(&format!("{resource_id}:{load_id}")),
        fields,
        primary_key: Vec::new(),
    }
}

/// Fills the new table (`write::fill`), reporting the rows loaded so far; the table is
/// dropped when that fails. The rows loaded.
async fn fill(app: &AppState, meta: &Meta, survey: &Survey, load_id: &str) -> anyhow::Result<u64> {
    let resource_id = meta.resource_id.as_str();
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
    let filled = write::fill(app, meta, survey, &progress).await;
    match filled {
        Ok(n) => Ok(n),
        Err(e) => {
            drop_loading_table(app, resource_id).await.ok();
            Err(e)
        }
    }
}

/// Swaps the filled table in; the replaced one is dropped after the grace period, a table
/// that was not swapped in at once.
async fn finish(
    app: &AppState,
    meta: &Meta,
    load_id: &str,
    hash: &str,
    rows: u64,
    log: &Log,
) -> anyhow::Result<Outcome> {
    let resource_id = meta.resource_id.as_str();
    match swap(app, meta, load_id, hash, rows, log).await {
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
