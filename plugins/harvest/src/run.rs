//! Running a harvest job: one durable background job per page of the source (`harvest_gather`),
//! then one that ends the run (`harvest_finish`).
//!
//! - A page job reads one page through the source's harvester, records one harvest object per
//!   record (unique per job and guid, so a page read again after a crash adds nothing), skips
//!   records whose content hash is unchanged, and writes the others in batches: each dataset
//!   write and the object that records it commit together, so a dataset is never written
//!   without its object (no duplicates after a crash). Then, in one transaction, it records
//!   the page as read and enqueues the next page — or, at the end, the finishing job.
//! - A page that fails (timeout, error status, unparseable, a paging loop, too many pages) is
//!   a gather error: the walk stops there and the run deletes nothing.
//! - The finishing job deletes the datasets whose guid a complete, error-free walk did not
//!   see (unless more than `catalog.harvest.max_delete_share` of the source would go and the
//!   job has no `force`), then marks the job `Finished`.
//!
//! Jobs are delivered at least once; every step is safe to repeat.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use catalog_framework::jobs::{enqueue_job, JobOptions};
use catalog_framework::prelude::*;
use catalog_framework::store::Principal;
use sha2::{Digest, Sha256};

use crate::harvester::{self, GatherContext, Harvester, Page, Record, Source};
use crate::settings::HarvestSettings;
use crate::store::{self, report, state, status, JobRow, ObjectRow};

/// The queue of the harvest's jobs: `serve` gives it a worker of its own
/// (`Plugin::worker_queues`), so pages do not wait behind the DataStore loads of the files
/// they bring in.
pub(crate) const QUEUE: &str = "harvest";

/// The job kind of one page.
pub(crate) const GATHER_JOB: &str = "harvest_gather";
/// The job kind that ends a run.
pub(crate) const FINISH_JOB: &str = "harvest_finish";
/// The job kind that clears a big source (`harvest_source_clear`).
pub(crate) const CLEAR_JOB: &str = "harvest_clear";

/// Enqueues the first page of a job in the caller's transaction.
pub(crate) async fn start(
    ctx: &mut ActionContext,
    job_id: &str,
    source: &Source,
    source_type: &str,
    source_name: &str,
) -> CkanResult<()> {
    let h = harvester::harvester(&ctx.app, source_type).ok_or_else(|| {
        validation_message(format!(
            "System error - No harvester could be found for source type {source_type}"
        ))
    })?;
    let payload = json!({"job_id": job_id, "page": 0, "cursor": h.first_page(source)});
    ctx.enqueue_job(GATHER_JOB, payload, page_options(source_name, 0))
        .await?;
    Ok(())
}

fn page_options(source_name: &str, page: u64) -> JobOptions {
    JobOptions::queue(QUEUE).with_title(format!("Harvest {source_name}: page {}", page + 1))
}

/// The user harvests write as: `catalogext.harvest.user_name`, else the site user.
pub(crate) async fn harvest_user(app: &AppState) -> CkanResult<Principal> {
    if let Some(name) = &crate::settings(app).user_name {
        let mut conn = app.store.pool.acquire().await?;
        let u = catalog_framework::store::user_by_ref(&mut conn, name)
            .await?
            .ok_or_else(|| {
                internal(format!("catalogext.harvest.user_name {name}: no such user"))
            })?;
        return Ok(Principal {
            id: u.id,
            name: u.name,
            sysadmin: u.sysadmin,
            state: u.state,
        });
    }
    let mut ctx = ActionContext::new(app.clone(), None);
    ctx.ignore_auth = true;
    let u = ctx.run_top("get_site_user", Params::new()).await?;
    Ok(Principal {
        id: u["id"].as_str().unwrap_or_default().to_string(),
        name: u["name"].as_str().unwrap_or_default().to_string(),
        sysadmin: true,
        state: "active".into(),
    })
}

/// A short write of its own (SQLite's writer lock held only for it).
async fn write<F, T>(app: &AppState, f: F) -> anyhow::Result<T>
where
    F: for<'c> FnOnce(
        &'c mut sqlx::AnyConnection,
    ) -> futures::future::BoxFuture<'c, sqlx::Result<T>>,
{
    let _guard = app.store.lock_writes().await;
    let mut conn = app.store.pool.acquire().await?;
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    let v = f(&mut tx).await?;
    tx.commit().await?;
    Ok(v)
}

/// Everything a page or finishing job needs about its run.
#[derive(Clone)]
pub(crate) struct Run {
    pub(crate) app: AppState,
    pub(crate) job: JobRow,
    pub(crate) source: Source,
    pub(crate) source_name: String,
    pub(crate) harvester: std::sync::Arc<Box<dyn Harvester>>,
    pub(crate) settings: HarvestSettings,
    pub(crate) fetch: catalog_framework::store::config::FetchConfig,
}

impl Run {
    /// The run of a job that is still running; `Ok(None)` for one aborted, finished or gone,
    /// or whose source or harvester is gone (then the job is ended with a gather error).
    pub(crate) async fn load(app: &AppState, job_id: &str) -> anyhow::Result<Option<Run>> {
        let mut conn = app.store.pool.acquire().await?;
        let Some(job) = store::job(&mut conn, job_id).await? else {
            return Ok(None);
        };
        if job.status != status::RUNNING {
            return Ok(None);
        }
        let Some(row) = store::source(&mut conn, &job.source_id).await? else {
            end_with_error(app, &job.id, "The harvest source no longer exists").await?;
            return Ok(None);
        };
        let pkg = catalog_framework::store::package_by_ref(&mut conn, &row.id).await?;
        drop(conn);
        let Some(h) = harvester::harvester(app, &row.source_type) else {
            let msg = format!(
                "System error - No harvester could be found for source type {}",
                row.source_type
            );
            end_with_error(app, &job.id, &msg).await?;
            return Ok(None);
        };
        let settings = crate::settings(app).clone();
        let fetch = settings.fetch_config(&app.config.catalog.fetch);
        Ok(Some(Run {
            app: app.clone(),
            source: crate::source::harvester_source(
                &row,
                pkg.as_ref().and_then(|p| p.owner_org.clone()),
            ),
            source_name: pkg.map(|p| p.name).unwrap_or_else(|| row.id.clone()),
            job,
            harvester: h,
            settings,
            fetch,
        }))
    }

    fn context<'a>(&'a self, since: Option<&'a str>) -> GatherContext<'a> {
        GatherContext {
            app: &self.app,
            source: &self.source,
            fetch: &self.fetch,
            settings: &self.settings,
            since,
        }
    }

    /// `delete_missing` of the source's config: `true` (default), `false` or `"mark"`.
    fn missing_policy(&self) -> Missing {
        match self.source.config.get("delete_missing") {
            Some(Value::Bool(false)) => Missing::Keep,
            Some(Value::String(s)) if s == "mark" => Missing::Mark,
            Some(Value::String(s)) if s == "false" => Missing::Keep,
            _ => Missing::Delete,
        }
    }
}

/// What happens to a dataset its source no longer lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Missing {
    Delete,
    Mark,
    Keep,
}

/// Records a gather error and ends the walk (no deletions), then the job.
async fn end_with_error(app: &AppState, job_id: &str, message: &str) -> anyhow::Result<()> {
    let (job_id, message) = (job_id.to_string(), message.to_string());
    write(app, move |c| {
        Box::pin(async move { end_with_error_on(c, &job_id, &message).await })
    })
    .await
}

/// [`end_with_error`] on the caller's connection.
async fn end_with_error_on(
    c: &mut sqlx::AnyConnection,
    job_id: &str,
    message: &str,
) -> sqlx::Result<()> {
    store::add_gather_error(c, job_id, message).await?;
    store::mark_gather_finished(c, job_id, false).await?;
    store::finish_job(c, job_id).await?;
    Ok(())
}

/// Records a gather error of a job (the run then deletes nothing).
async fn gather_error(app: &AppState, job_id: &str, message: String) -> anyhow::Result<()> {
    let id = job_id.to_string();
    write(app, move |c| {
        Box::pin(async move { store::add_gather_error(c, &id, &message).await })
    })
    .await
}

/// `harvest_gather`: one page.
pub(crate) struct GatherPage;

#[async_trait]
impl JobHandler for GatherPage {
    fn lane(&self) -> &'static str {
        catalog_framework::jobs::HARVEST_LANE
    }

    fn timeout(&self) -> Option<Duration> {
        // The fetch has its own deadline; the rest is the page's writes.
        Some(Duration::from_secs(3600))
    }

    async fn run(&self, app: &AppState, payload: &Value) -> anyhow::Result<Value> {
        let job_id = payload["job_id"].as_str().unwrap_or_default();
        let page_no = payload["page"].as_u64().unwrap_or(0);
        let cursor = payload["cursor"].clone();
        let Some(run) = Run::load(app, job_id).await? else {
            return Ok(json!({"skipped": "the harvest job is not running"}));
        };
        gather_page(&run, page_no, &cursor).await
    }
}

/// The paging state of a run, kept on its job.
#[derive(Debug, Clone, Default)]
struct PagingState {
    /// Pages read so far.
    pages: u64,
    /// Hashes of the page cursors read (a source whose paging comes back to a page loops).
    seen: Vec<String>,
    /// Where an incremental run starts (computed at the first page).
    since: Option<String>,
    /// Whether `since` was computed.
    since_set: bool,
}

impl PagingState {
    fn from_value(v: &Value) -> PagingState {
        PagingState {
            pages: v["pages"].as_u64().unwrap_or(0),
            seen: v["seen"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
            since: v["since"].as_str().map(str::to_string),
            since_set: v.get("since").is_some(),
        }
    }
    fn to_value(&self) -> Value {
        json!({"pages": self.pages, "seen": self.seen, "since": self.since})
    }
}

fn hash_hex(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    hex::encode(h.finalize())
}

async fn gather_page(run: &Run, page_no: u64, cursor: &Value) -> anyhow::Result<Value> {
    let app = &run.app;
    let job_id = run.job.id.clone();
    {
        let id = job_id.clone();
        write(app, move |c| {
            Box::pin(async move { store::mark_gather_started(c, &id).await })
        })
        .await?;
    }
    let mut paging = PagingState::from_value(&run.job.gather_state);
    if paging.pages > page_no {
        // This page was read and the next one enqueued already (a repeated delivery).
        return Ok(json!({"skipped": "page already read"}));
    }
    if !paging.since_set {
        paging.since = if run.job.force_all
            || run.source.config.get("force_all").and_then(Value::as_bool) == Some(true)
        {
            None
        } else {
            let mut conn = app.store.pool.acquire().await?;
            store::last_error_free_job(&mut conn, &run.source.id, &job_id)
                .await?
                .and_then(|j| j.gather_started)
        };
        paging.since_set = true;
    }
    let cursor_hash = hash_hex(&[&cursor.to_string()]);
    if paging.seen.contains(&cursor_hash) {
        let msg = format!(
            "The source's paging comes back to a page already read in this run ({}): stopped",
            cursor
                .get("url")
                .and_then(Value::as_str)
                .unwrap_or(&cursor.to_string())
        );
        end_walk(run, &paging, Some(&msg)).await?;
        return Ok(json!({"page": page_no, "error": msg}));
    }
    if paging.pages >= run.settings.max_pages {
        let msg = format!(
            "The source has more than {} pages (catalog.harvest.max_pages): stopped",
            run.settings.max_pages
        );
        end_walk(run, &paging, Some(&msg)).await?;
        return Ok(json!({"page": page_no, "error": msg}));
    }
    let cx = run.context(paging.since.as_deref());
    let page = match run.harvester.gather_page(&cx, cursor).await {
        Ok(p) => p,
        Err(msg) => {
            end_walk(run, &paging, Some(&msg)).await?;
            return Ok(json!({"page": page_no, "error": msg}));
        }
    };
    let Page {
        records,
        next,
        errors,
    } = page;
    if !errors.is_empty() {
        let (id, errors) = (job_id.clone(), errors.clone());
        write(app, move |c| {
            Box::pin(async move {
                for e in &errors {
                    store::add_gather_error(c, &id, e).await?;
                }
                Ok(())
            })
        })
        .await?;
    }
    let counts = process_records(run, records).await?;
    paging.pages = page_no + 1;
    paging.seen.push(cursor_hash);
    match next {
        Some(next_cursor) => {
            let run_state = paging.to_value();
            let payload = json!({"job_id": job_id, "page": page_no + 1, "cursor": next_cursor});
            advance(run, page_no, run_state, Some(payload)).await?;
        }
        None => end_walk(run, &paging, None).await?,
    }
    Ok(json!({"page": page_no, "records": counts}))
}

/// Records the page as read and enqueues the next one, once: a repeated delivery of a page
/// whose successor exists enqueues nothing.
async fn advance(
    run: &Run,
    page_no: u64,
    paging: Value,
    next: Option<Value>,
) -> anyhow::Result<()> {
    let app = run.app.clone();
    let job_id = run.job.id.clone();
    let backend = app.store.backend;
    let source_name = run.source_name.clone();
    let _guard = app.store.lock_writes().await;
    let mut conn = app.store.pool.acquire().await?;
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    let Some(job) = store::job_for_update(&mut tx, backend, &job_id).await? else {
        return Ok(());
    };
    if PagingState::from_value(&job.gather_state).pages > page_no || job.status != status::RUNNING {
        return Ok(());
    }
    store::save_gather_state(&mut tx, &job_id, &paging).await?;
    if let Some(payload) = next {
        let page = payload["page"].as_u64().unwrap_or(0);
        catalog_framework::store::enqueue_job(
            &mut tx,
            &catalog_framework::store::NewJob {
                id: &catalog_framework::store::new_id(),
                queue: QUEUE,
                kind: GATHER_JOB,
                title: Some(&format!("Harvest {source_name}: page {}", page + 1)),
                payload: &payload,
                max_attempts: i64::from(app.config.catalog.jobs.max_attempts),
            },
        )
        .await?;
    }
    tx.commit().await?;
    drop(conn);
    drop(_guard);
    app.jobs.wake();
    Ok(())
}

/// Ends the walk: with an error (recorded; the run then deletes nothing) or complete, and
/// hands the run to the finishing job.
async fn end_walk(run: &Run, paging: &PagingState, error: Option<&str>) -> anyhow::Result<()> {
    let app = run.app.clone();
    let job_id = run.job.id.clone();
    {
        let (id, error) = (job_id.clone(), error.map(str::to_string));
        let state = paging.to_value();
        write(&app, move |c| {
            Box::pin(async move {
                if let Some(e) = &error {
                    store::add_gather_error(c, &id, e).await?;
                }
                let errors = store::gather_error_count(c, &id).await?;
                store::save_gather_state(c, &id, &state).await?;
                store::mark_gather_finished(c, &id, errors == 0).await?;
                Ok(())
            })
        })
        .await?;
    }
    enqueue_job(
        &app,
        FINISH_JOB,
        json!({"job_id": job_id}),
        JobOptions::queue(QUEUE).with_title(format!("Harvest {}: finish", run.source_name)),
    )
    .await
    .map_err(|e| anyhow::anyhow!("{}", e.to_error_object()))?;
    Ok(())
}

/// What a page's records came to.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    imported: usize,
    unchanged: usize,
    errored: usize,
}

/// One record to write, with what is known of its dataset here.
#[derive(Clone)]
struct Item {
    object_id: String,
    guid: String,
    dataset: Map<String, Value>,
    /// The dataset of the source and guid, if one exists (in any state).
    existing: Option<String>,
}

/// The content hash of a record: its dataset dict and what the import adds from the source.
fn content_hash(dataset: &Map<String, Value>, source: &Source) -> String {
    hash_hex(&[
        &Value::Object(dataset.clone()).to_string(),
        &Value::Object(source.config.clone()).to_string(),
        &source.title,
        source.owner_org.as_deref().unwrap_or(""),
    ])
}

async fn process_records(run: &Run, records: Vec<Record>) -> anyhow::Result<Value> {
    let app = &run.app;
    let job_id = &run.job.id;
    // One record per guid in a page (the first).
    let mut seen = HashSet::new();
    let mut repeated = 0usize;
    let records: Vec<Record> = records
        .into_iter()
        .filter(|r| {
            let fresh = seen.insert(r.guid.clone());
            if !fresh {
                repeated += 1;
            }
            fresh
        })
        .collect();
    let guids: Vec<String> = records.iter().map(|r| r.guid.clone()).collect();
    let (done, currents, live) = {
        let mut conn = app.store.pool.acquire().await?;
        let done: HashMap<String, ObjectRow> =
            store::job_objects_by_guid(&mut conn, job_id, &guids)
                .await?
                .into_iter()
                .map(|o| (o.guid.clone(), o))
                .collect();
        let currents: HashMap<String, ObjectRow> =
            store::current_objects_by_guid(&mut conn, &run.source.id, &guids)
                .await?
                .into_iter()
                .map(|o| (o.guid.clone(), o))
                .collect();
        let ids: Vec<String> = currents
            .values()
            .filter_map(|o| o.package_id.clone())
            .collect();
        let live: HashMap<String, String> =
            catalog_framework::store::package_summaries(&mut conn, &ids)
                .await?
                .into_iter()
                .map(|p| (p.id, p.state))
                .collect();
        (done, currents, live)
    };
    let force = run.job.force_all
        || run.source.config.get("force_all").and_then(Value::as_bool) == Some(true);
    let now = store::now();
    let mut new_objects: Vec<ObjectRow> = Vec::new();
    let mut items: Vec<Item> = Vec::new();
    let mut counts = Counts::default();
    for r in records {
        let existing_object = done.get(&r.guid);
        if existing_object.is_some_and(|o| o.state == state::COMPLETE || o.state == state::ERROR) {
            continue;
        }
        let current = currents.get(&r.guid);
        let package = current.and_then(|c| c.package_id.clone());
        let package_state = package.as_ref().and_then(|p| live.get(p));
        let hash = r.dataset.as_ref().map(|d| content_hash(d, &run.source));
        let unchanged = match (&r.dataset, current) {
            (None, _) => true,
            (Some(_), Some(c)) => {
                !force
                    && c.content_hash.is_some()
                    && c.content_hash == hash
                    && package_state.is_some_and(|s| s == "active")
            }
            (Some(_), None) => false,
        };
        let object_id = existing_object
            .map(|o| o.id.clone())
            .unwrap_or_else(catalog_framework::store::new_id);
        if existing_object.is_none() {
            new_objects.push(ObjectRow {
                id: object_id.clone(),
                guid: r.guid.clone(),
                current: false,
                gathered: now.clone(),
                fetch_started: None,
                content: r.content.clone(),
                fetch_finished: None,
                import_started: None,
                import_finished: None,
                state: if unchanged {
                    state::COMPLETE.into()
                } else {
                    state::WAITING.into()
                },
                metadata_modified_date: r.modified.clone(),
                retry_times: 0,
                harvest_job_id: job_id.clone(),
                harvest_source_id: run.source.id.clone(),
                package_id: if unchanged { package.clone() } else { None },
                report_status: if unchanged {
                    Some(report::NOT_MODIFIED.into())
                } else {
                    None
                },
                content_hash: hash.clone(),
            });
        }
        if unchanged {
            counts.unchanged += 1;
            continue;
        }
        items.push(Item {
            object_id,
            guid: r.guid,
            dataset: r.dataset.unwrap_or_default(),
            existing: package.filter(|p| live.contains_key(p)),
        });
    }
    if !new_objects.is_empty() {
        for chunk in new_objects.chunks(200) {
            let chunk = chunk.to_vec();
            write(app, move |c| {
                Box::pin(async move {
                    for o in &chunk {
                        store::insert_object(c, o).await?;
                    }
                    Ok(())
                })
            })
            .await?;
        }
    }
    let user = harvest_user(app)
        .await
        .map_err(|e| anyhow::anyhow!("{}", e.to_error_object()))?;
    for batch in items.chunks(run.settings.batch_size) {
        match import_batch(run, &user, batch).await {
            Ok(()) => counts.imported += batch.len(),
            Err(_) if batch.len() > 1 => {
                for one in batch {
                    match import_batch(run, &user, std::slice::from_ref(one)).await {
                        Ok(()) => counts.imported += 1,
                        Err(e) => {
                            counts.errored += 1;
                            record_import_error(app, &one.object_id, &e).await?;
                        }
                    }
                }
            }
            Err(e) => {
                counts.errored += 1;
                record_import_error(app, &batch[0].object_id, &e).await?;
            }
        }
        let id = job_id.clone();
        write(app, move |c| {
            Box::pin(async move { store::touch_job(c, &id).await })
        })
        .await?;
    }
    Ok(json!({
        "imported": counts.imported,
        "not_modified": counts.unchanged,
        "errored": counts.errored,
        "repeated_guids": repeated,
    }))
}

async fn record_import_error(app: &AppState, object_id: &str, e: &CkanError) -> anyhow::Result<()> {
    let message = import_error_message(e);
    let id = object_id.to_string();
    write(app, move |c| {
        Box::pin(async move {
            store::add_object_error(c, &id, &message, "Import").await?;
            store::close_object(c, &id, state::ERROR, report::ERRORED).await?;
            Ok(())
        })
    })
    .await
}

/// An import error as ckanext-harvest words it: a validation error's fields, else the message.
fn import_error_message(e: &CkanError) -> String {
    if e.kind == ErrorKind::Validation {
        let mut body = e.to_error_object();
        if let Some(o) = body.as_object_mut() {
            o.remove("__type");
        }
        format!("Invalid package: {body}")
    } else {
        e.message()
            .map(str::to_string)
            .unwrap_or_else(|| e.to_error_object().to_string())
    }
}

/// Writes a batch of datasets and their objects in one transaction: all or none.
async fn import_batch(run: &Run, user: &Principal, batch: &[Item]) -> CkanResult<()> {
    let mut ctx = ActionContext::new(run.app.clone(), Some(user.clone()));
    ctx.ignore_auth = true;
    ctx.allow_state_change = true;
    // The search index takes the batches up a few at a time (the host's background sync):
    // one index commit per batch would be most of a harvest's time.
    ctx.background = true;
    let started = store::now();
    let (run, batch) = (run.clone(), batch.to_vec());
    ctx.run_write("harvest_import", move |ctx| {
        Box::pin(async move {
            for item in &batch {
                import_one(ctx, &run, item, &started).await?;
            }
            Ok(Value::Null)
        })
    })
    .await?;
    Ok(())
}

/// Keys of a source's dataset dict that are the source's own bookkeeping, never written here.
const DROPPED_KEYS: &[&str] = &[
    "organization",
    "revision_id",
    "metadata_created",
    "metadata_modified",
    "creator_user_id",
    "num_resources",
    "num_tags",
    "relationships_as_subject",
    "relationships_as_object",
    "tracking_summary",
    "isopen",
    "license_title",
    "license_url",
    "state",
    "private",
];

/// Keys of a source's resource dicts never written here.
const DROPPED_RESOURCE_KEYS: &[&str] = &[
    "url_type",
    "revision_id",
    "package_id",
    "position",
    "datastore_active",
    "created",
    "metadata_modified",
    "tracking_summary",
    "state",
];

/// The extras every harvested dataset carries (replacing any the source sent).
const HARVEST_EXTRAS: &[&str] = &[
    "guid",
    "harvest_object_id",
    "harvest_source_id",
    "harvest_source_title",
];

async fn import_one(
    ctx: &mut ActionContext,
    run: &Run,
    item: &Item,
    started: &str,
) -> CkanResult<()> {
    let mut d = item.dataset.clone();
    // The harvester sees the record whole (the CKAN harvester reads its `organization`).
    run.harvester
        .prepare(ctx, &run.source, &mut d)
        .await
        .map_err(validation_message)?;
    for k in DROPPED_KEYS {
        d.remove(*k);
    }
    crate::config::apply_common(&mut d, &run.source, &run.job.id, &item.object_id);
    if d.get("owner_org").is_none_or(Value::is_null) {
        if let Some(org) = &run.source.owner_org {
            d.insert("owner_org".into(), json!(org));
        }
    }
    if d.get("type").is_none_or(|t| !t.is_string()) {
        d.insert("type".into(), json!("dataset"));
    }
    let mut extras: Vec<Value> = d
        .get("extras")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|e| {
            !e.get("key")
                .and_then(Value::as_str)
                .is_some_and(|k| HARVEST_EXTRAS.contains(&k))
        })
        .collect();
    for (k, v) in [
        ("guid", item.guid.as_str()),
        ("harvest_object_id", item.object_id.as_str()),
        ("harvest_source_id", run.source.id.as_str()),
        ("harvest_source_title", run.source.title.as_str()),
    ] {
        extras.push(json!({"key": k, "value": v}));
    }
    d.insert("extras".into(), Value::Array(extras));
    let existing = match &item.existing {
        Some(id) => ctx.package_row(id).await?,
        None => None,
    };
    let (package_id, report_status) = match existing {
        Some(pkg) => {
            d.insert("id".into(), json!(pkg.id));
            d.insert("name".into(), json!(pkg.name));
            d.insert("state".into(), json!("active"));
            keep_resource_ids(ctx, &pkg.id, &mut d, run.harvester.keeps_source_id()).await?;
            ctx.call("package_update", d).await?;
            (pkg.id, report::UPDATED)
        }
        None => {
            let keep_id = run.harvester.keeps_source_id()
                && match d.get("id").and_then(Value::as_str) {
                    Some(id) => ctx.package_row(id).await?.is_none(),
                    None => false,
                };
            if !keep_id {
                d.remove("id");
            }
            strip_resource_ids(ctx, &mut d, run.harvester.keeps_source_id()).await?;
            let base = match d.get("name").and_then(Value::as_str) {
                Some(n) if !n.trim().is_empty() => n.to_string(),
                _ => catalog_framework::munge::munge_title_to_name(
                    d.get("title").and_then(Value::as_str).unwrap_or_default(),
                ),
            };
            let name = unique_name(ctx, &base, run.settings.name_append_random).await?;
            d.insert("name".into(), json!(name));
            let saved = ctx.call("package_create", d).await?;
            let id = saved["id"].as_str().unwrap_or_default().to_string();
            (id, report::ADDED)
        }
    };
    let conn = ctx.db().await?;
    store::complete_import(
        conn,
        &item.object_id,
        &run.source.id,
        &item.guid,
        &package_id,
        report_status,
        started,
    )
    .await?;
    Ok(())
}

/// On an update, resources keep their ids: by the source's resource id when the harvester
/// keeps them, else by `uri` (ckanext-dcat), else by `url` (ckanext-dcat's JSON harvester).
async fn keep_resource_ids(
    ctx: &mut ActionContext,
    package_id: &str,
    d: &mut Map<String, Value>,
    keep_source_ids: bool,
) -> CkanResult<()> {
    let Some(row) = ctx.package_row(package_id).await? else {
        return Ok(());
    };
    let stored: Map<String, Value> = serde_json::from_str(&row.data).unwrap_or_default();
    let old: Vec<Map<String, Value>> = stored
        .get("resources")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|r| r.as_object().cloned()).collect())
        .unwrap_or_default();
    let old_ids: HashSet<String> = old
        .iter()
        .filter_map(|r| r.get("id").and_then(Value::as_str).map(str::to_string))
        .collect();
    let mut by_uri: HashMap<String, String> = HashMap::new();
    let mut by_url: HashMap<String, String> = HashMap::new();
    for r in &old {
        let Some(id) = r.get("id").and_then(Value::as_str) else {
            continue;
        };
        if let Some(u) = r
            .get("uri")
            .and_then(Value::as_str)
            .filter(|u| !u.is_empty())
        {
            by_uri
                .entry(u.to_string())
                .or_insert_with(|| id.to_string());
        }
        if let Some(u) = r
            .get("url")
            .and_then(Value::as_str)
            .filter(|u| !u.is_empty())
        {
            by_url
                .entry(u.to_string())
                .or_insert_with(|| id.to_string());
        }
    }
    let mut taken: HashSet<String> = HashSet::new();
    if let Some(Value::Array(resources)) = d.get_mut("resources") {
        for r in resources.iter_mut() {
            let Some(r) = r.as_object_mut() else { continue };
            for k in DROPPED_RESOURCE_KEYS {
                r.remove(*k);
            }
            let own = r.get("id").and_then(Value::as_str).map(str::to_string);
            let chosen = match own {
                Some(id) if keep_source_ids && old_ids.contains(&id) => Some(id),
                _ => {
                    let by = |m: &HashMap<String, String>, key: &str| {
                        r.get(key)
                            .and_then(Value::as_str)
                            .and_then(|u| m.get(u))
                            .cloned()
                    };
                    by(&by_uri, "uri").or_else(|| by(&by_url, "url"))
                }
            };
            match chosen.filter(|id| taken.insert(id.clone())) {
                Some(id) => {
                    r.insert("id".into(), json!(id));
                }
                None => {
                    r.remove("id");
                }
            }
        }
    }
    Ok(())
}

/// On a creation, resources take the source's ids only when the harvester keeps them and no
/// resource here has them.
async fn strip_resource_ids(
    ctx: &mut ActionContext,
    d: &mut Map<String, Value>,
    keep_source_ids: bool,
) -> CkanResult<()> {
    let Some(Value::Array(resources)) = d.get_mut("resources") else {
        return Ok(());
    };
    let mut ids: Vec<String> = Vec::new();
    for r in resources.iter_mut() {
        let Some(r) = r.as_object_mut() else { continue };
        for k in DROPPED_RESOURCE_KEYS {
            r.remove(*k);
        }
        if !keep_source_ids {
            r.remove("id");
        } else if let Some(id) = r.get("id").and_then(Value::as_str) {
            ids.push(id.to_string());
        }
    }
    if ids.is_empty() {
        return Ok(());
    }
    let mut taken: HashSet<String> = HashSet::new();
    for id in &ids {
        if catalog_framework::store::resource_package_id(ctx.db().await?, id)
            .await?
            .is_some()
        {
            taken.insert(id.clone());
        }
    }
    if let Some(Value::Array(resources)) = d.get_mut("resources") {
        let mut seen = HashSet::new();
        for r in resources.iter_mut().filter_map(Value::as_object_mut) {
            let drop = match r.get("id").and_then(Value::as_str) {
                Some(id) => taken.contains(id) || !seen.insert(id.to_string()),
                None => false,
            };
            if drop {
                r.remove("id");
            }
        }
    }
    Ok(())
}

/// A dataset name no dataset has (deleted ones included): the name itself, else with `1` …
/// `999` appended (ckanext-harvest's `number-sequence`), else five random hex digits.
async fn unique_name(ctx: &mut ActionContext, base: &str, random: bool) -> CkanResult<String> {
    let base: String = {
        let b = base.trim().to_lowercase();
        let b = if b.chars().count() < 2 {
            format!(
                "dataset-{}",
                &uuid::Uuid::new_v4().simple().to_string()[..8]
            )
        } else {
            b
        };
        b.chars().take(100).collect()
    };
    let free = |n: Option<(String, String)>| n.is_none();
    if free(catalog_framework::store::package_name_holder(ctx.db().await?, &base).await?) {
        return Ok(base);
    }
    if !random {
        for i in 1..=999u32 {
            let suffix = i.to_string();
            let keep = 100 - suffix.len();
            let candidate = format!("{}{suffix}", base.chars().take(keep).collect::<String>());
            if free(
                catalog_framework::store::package_name_holder(ctx.db().await?, &candidate).await?,
            ) {
                return Ok(candidate);
            }
        }
    }
    loop {
        let hex = &uuid::Uuid::new_v4().simple().to_string()[..5];
        let candidate = format!("{}{hex}", base.chars().take(95).collect::<String>());
        if free(catalog_framework::store::package_name_holder(ctx.db().await?, &candidate).await?) {
            return Ok(candidate);
        }
    }
}

/// `harvest_finish`: deletions after a complete walk, then the job ends.
pub(crate) struct FinishRun;

#[async_trait]
impl JobHandler for FinishRun {
    fn lane(&self) -> &'static str {
        catalog_framework::jobs::HARVEST_LANE
    }

    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_secs(3600))
    }

    async fn run(&self, app: &AppState, payload: &Value) -> anyhow::Result<Value> {
        let job_id = payload["job_id"].as_str().unwrap_or_default();
        let Some(run) = Run::load(app, job_id).await? else {
            return Ok(json!({"skipped": "the harvest job is not running"}));
        };
        let deleted = delete_missing(&run).await?;
        // The run's datasets are searchable when its job says Finished.
        catch_up_derived_state(app).await;
        let id = run.job.id.clone();
        write(app, move |c| {
            Box::pin(async move { store::finish_job(c, &id).await })
        })
        .await?;
        tracing::info!(job = %run.job.id, source = %run.source_name, deleted, "harvest job finished");
        Ok(json!({"deleted": deleted}))
    }
}

/// Runs the commit hooks the run's background writes skipped (the search index's sync).
pub(crate) async fn catch_up_derived_state(app: &AppState) {
    // Searches from now on wait for the index to have the run's writes.
    app.index_lag.note_commit();
    for hook in app.commit_hooks.iter().filter(|h| h.read_your_writes()) {
        if let Err(e) = hook.after_write_commit(app).await {
            tracing::warn!(hook = hook.name(), error = %e, "catching up after a harvest failed; the background sync retries");
        }
    }
}

/// Deletes (or marks) what a complete, error-free walk did not see; answers how many.
async fn delete_missing(run: &Run) -> anyhow::Result<usize> {
    let app = &run.app;
    let policy = run.missing_policy();
    let (job, total, missing) = {
        let mut conn = app.store.pool.acquire().await?;
        let Some(job) = store::job(&mut conn, &run.job.id).await? else {
            return Ok(0);
        };
        let errors = store::gather_error_count(&mut conn, &job.id).await?;
        if !job.gather_complete || errors > 0 || policy == Missing::Keep {
            return Ok(0);
        }
        let total = store::current_count(&mut conn, &run.source.id).await?;
        let missing = store::missing_current(&mut conn, &run.source.id, &job.id, total + 1).await?;
        (job, total, missing)
    };
    if missing.is_empty() {
        return Ok(0);
    }
    let share = run.settings.max_delete_share;
    if missing.len() as f64 > share * total as f64 && !job.force_delete && policy == Missing::Delete
    {
        let msg = format!(
            "Not deleting {} of the source's {} datasets: more than {}% of them would go \
             (catalog.harvest.max_delete_share). Run a job with force to delete them.",
            missing.len(),
            total,
            (share * 100.0).round()
        );
        let id = job.id.clone();
        write(app, move |c| {
            Box::pin(async move { store::add_gather_error(c, &id, &msg).await })
        })
        .await?;
        return Ok(0);
    }
    let paging = PagingState::from_value(&job.gather_state);
    let cx = run.context(paging.since.as_deref());
    let guids: Vec<String> = missing.iter().map(|o| o.guid.clone()).collect();
    let gone: HashSet<String> = match run.harvester.confirm_missing(&cx, guids).await {
        Ok(g) => g.into_iter().collect(),
        Err(e) => {
            let msg = format!("Datasets missing from the source could not be checked: {e}");
            gather_error(app, &job.id, msg).await?;
            return Ok(0);
        }
    };
    let doomed: Vec<&ObjectRow> = missing.iter().filter(|o| gone.contains(&o.guid)).collect();
    let user = harvest_user(app)
        .await
        .map_err(|e| anyhow::anyhow!("{}", e.to_error_object()))?;
    let mut done = 0;
    for batch in doomed.chunks(run.settings.batch_size) {
        let mut ctx = ActionContext::new(app.clone(), Some(user.clone()));
        ctx.ignore_auth = true;
        ctx.background = true;
        let batch: Vec<ObjectRow> = batch.iter().map(|o| (*o).clone()).collect();
        let n = batch.len();
        let job_id = job.id.clone();
        let source_id = run.source.id.clone();
        ctx.run_write("harvest_delete", |ctx| {
            Box::pin(async move {
                for o in &batch {
                    remove_one(ctx, &job_id, &source_id, o, policy).await?;
                }
                Ok(Value::Null)
            })
        })
        .await
        .map_err(|e| anyhow::anyhow!("{}", e.to_error_object()))?;
        done += n;
    }
    Ok(done)
}

/// Deletes (or marks) one dataset the source no longer lists, with the object that says so.
async fn remove_one(
    ctx: &mut ActionContext,
    job_id: &str,
    source_id: &str,
    current: &ObjectRow,
    policy: Missing,
) -> CkanResult<()> {
    let id = catalog_framework::store::new_id();
    let report_status = if policy == Missing::Mark {
        "missing"
    } else {
        report::DELETED
    };
    let object = ObjectRow {
        id: id.clone(),
        guid: current.guid.clone(),
        current: false,
        gathered: store::now(),
        fetch_started: None,
        content: None,
        fetch_finished: None,
        import_started: None,
        import_finished: None,
        state: state::COMPLETE.into(),
        metadata_modified_date: None,
        retry_times: 0,
        harvest_job_id: job_id.to_string(),
        harvest_source_id: source_id.to_string(),
        package_id: current.package_id.clone(),
        report_status: Some(report_status.into()),
        content_hash: None,
    };
    if !store::insert_object(ctx.db().await?, &object).await? {
        return Ok(());
    }
    store::close_object(ctx.db().await?, &id, state::COMPLETE, report_status).await?;
    let Some(package_id) = current.package_id.clone() else {
        store::uncurrent(ctx.db().await?, source_id, &current.guid).await?;
        return Ok(());
    };
    if ctx.package_row(&package_id).await?.is_none() {
        store::uncurrent(ctx.db().await?, source_id, &current.guid).await?;
        return Ok(());
    }
    let mut p = Params::new();
    p.insert("id".into(), json!(package_id));
    match policy {
        Missing::Mark => {
            // The dataset stays (and its object current); it carries the date it went
            // missing, and a reappearance re-imports it (its hash is cleared).
            let shown = ctx.call("package_show", p.clone()).await?;
            let mut extras: Vec<Value> = shown["extras"].as_array().cloned().unwrap_or_default();
            if !extras
                .iter()
                .any(|e| e["key"] == json!("harvest_missing_since"))
            {
                extras.push(json!({"key": "harvest_missing_since", "value": store::now()}));
                p.insert("extras".into(), Value::Array(extras));
                ctx.call("package_patch", p).await?;
            }
            sqlx::query(
                "UPDATE harvest_object SET content_hash = NULL WHERE harvest_source_id = $1 \
                 AND guid = $2 AND current = TRUE",
            )
            .bind(source_id)
            .bind(&current.guid)
            .execute(ctx.db().await?)
            .await?;
        }
        _ => {
            store::uncurrent(ctx.db().await?, source_id, &current.guid).await?;
            ctx.call("package_delete", p).await?;
        }
    }
    Ok(())
}

/// Ends running jobs that show no activity for `minutes` (`catalog.harvest.timeout`): their
/// chain of page jobs died (retries exhausted, or every worker gone for that long).
pub(crate) async fn time_out_stuck_jobs(
    conn: &mut sqlx::AnyConnection,
    minutes: u64,
    source_id: Option<&str>,
) -> sqlx::Result<usize> {
    if minutes == 0 {
        return Ok(0);
    }
    let before = catalog_framework::store::job_time(
        catalog_framework::store::job_now() - chrono::Duration::minutes(minutes as i64),
    );
    let stuck: Vec<JobRow> = store::stale_running_jobs(conn, &before)
        .await?
        .into_iter()
        .filter(|j| source_id.is_none_or(|s| s == j.source_id))
        .collect();
    for job in &stuck {
        let msg = format!(
            "Job {} timeout ({minutes} minutes)\n\tJob created: {}\n\tJob last action time: {}\n",
            job.id,
            job.created,
            job.last_action.clone().unwrap_or_default()
        );
        end_with_error_on(conn, &job.id, &msg).await?;
    }
    Ok(stuck.len())
}

/// Reads a source as a run would, writing nothing: how many records would be added, updated,
/// left alone, and how many datasets deleted.
pub(crate) async fn dry_run(
    app: &AppState,
    source_ref: &str,
    force_all: bool,
) -> anyhow::Result<Value> {
    let mut conn = app.store.pool.acquire().await?;
    let pkg = catalog_framework::store::package_by_ref(&mut conn, source_ref)
        .await?
        .filter(|p| p.dataset_type == crate::source::SOURCE_TYPE)
        .ok_or_else(|| anyhow::anyhow!("no harvest source {source_ref}"))?;
    let row = store::source(&mut conn, &pkg.id)
        .await?
        .ok_or_else(|| anyhow::anyhow!("no harvest source {source_ref}"))?;
    let h = harvester::harvester(app, &row.source_type)
        .ok_or_else(|| anyhow::anyhow!("no harvester for source type {}", row.source_type))?;
    let settings = crate::settings(app).clone();
    let fetch = settings.fetch_config(&app.config.catalog.fetch);
    let source = crate::source::harvester_source(&row, pkg.owner_org.clone());
    let since = if force_all {
        None
    } else {
        store::last_error_free_job(&mut conn, &row.id, "")
            .await?
            .and_then(|j| j.gather_started)
    };
    drop(conn);
    let cx = GatherContext {
        app,
        source: &source,
        fetch: &fetch,
        settings: &settings,
        since: since.as_deref(),
    };
    let mut cursor = h.first_page(&source);
    let mut cursors = HashSet::new();
    let mut guids = HashSet::new();
    let (mut pages, mut new, mut changed, mut unchanged) = (0u64, 0u64, 0u64, 0u64);
    let mut errors: Vec<String> = Vec::new();
    loop {
        if pages >= settings.max_pages {
            errors.push(format!("more than {} pages", settings.max_pages));
            break;
        }
        if !cursors.insert(cursor.to_string()) {
            errors.push(format!("the paging comes back to {cursor}"));
            break;
        }
        let page = match h.gather_page(&cx, &cursor).await {
            Ok(p) => p,
            Err(e) => {
                errors.push(e);
                break;
            }
        };
        errors.extend(page.errors.iter().cloned());
        let page_guids: Vec<String> = page.records.iter().map(|r| r.guid.clone()).collect();
        let mut conn = app.store.pool.acquire().await?;
        let currents: HashMap<String, ObjectRow> =
            store::current_objects_by_guid(&mut conn, &row.id, &page_guids)
                .await?
                .into_iter()
                .map(|o| (o.guid.clone(), o))
                .collect();
        drop(conn);
        for r in page.records {
            if !guids.insert(r.guid.clone()) {
                continue;
            }
            match (&r.dataset, currents.get(&r.guid)) {
                (None, _) => unchanged += 1,
                (Some(_), None) => new += 1,
                (Some(d), Some(c)) => {
                    if !force_all && c.content_hash.as_deref() == Some(&content_hash(d, &source)) {
                        unchanged += 1;
                    } else {
                        changed += 1;
                    }
                }
            }
        }
        pages += 1;
        match page.next {
            Some(next) => cursor = next,
            None => break,
        }
    }
    let mut conn = app.store.pool.acquire().await?;
    let current = store::current_guids(&mut conn, &row.id).await?;
    let missing = current.iter().filter(|g| !guids.contains(*g)).count();
    let policy = match source.config.get("delete_missing") {
        Some(Value::Bool(false)) => "keep",
        Some(Value::String(s)) if s == "mark" => "mark",
        _ => "delete",
    };
    Ok(json!({
        "source": pkg.name,
        "pages": pages,
        "records": guids.len(),
        "would_add": new,
        "would_update": changed,
        "not_modified": unchanged,
        "missing_from_source": missing,
        "missing_policy": policy,
        "would_delete": if errors.is_empty() && policy == "delete" { missing } else { 0 },
        "errors": errors,
    }))
}

/// `harvest_clear`: purges a source's datasets a batch per transaction, then its history.
pub(crate) struct ClearSource;

#[async_trait]
impl JobHandler for ClearSource {
    fn lane(&self) -> &'static str {
        catalog_framework::jobs::HARVEST_LANE
    }

    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_secs(6 * 3600))
    }

    async fn run(&self, app: &AppState, payload: &Value) -> anyhow::Result<Value> {
        let source_id = payload["source_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let user = harvest_user(app)
            .await
            .map_err(|e| anyhow::anyhow!("{}", e.to_error_object()))?;
        let ids = {
            let mut conn = app.store.pool.acquire().await?;
            store::source_package_ids(&mut conn, &source_id).await?
        };
        let mut purged = 0usize;
        for batch in ids.chunks(200) {
            let batch = batch.to_vec();
            let mut ctx = ActionContext::new(app.clone(), Some(user.clone()));
            ctx.ignore_auth = true;
            ctx.background = true;
            let n = ctx
                .run_write("harvest_clear", move |ctx| {
                    Box::pin(async move {
                        let n = crate::source::delete::purge_datasets(ctx, &batch).await?;
                        Ok(json!(n))
                    })
                })
                .await
                .map_err(|e| anyhow::anyhow!("{}", e.to_error_object()))?;
            purged += n.as_u64().unwrap_or(0) as usize;
        }
        let id = source_id.clone();
        write(app, move |c| {
            Box::pin(async move { store::clear_history(c, &id, false).await })
        })
        .await?;
        catch_up_derived_state(app).await;
        Ok(json!({"purged": purged}))
    }
}
