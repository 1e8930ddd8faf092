//! `harvest_gather`, one page of a run: the page's paging checks (a loop, too many pages), the
//! harvester's read, the page's records handed to the import, then the next page enqueued or
//! the walk ended.

use std::time::Duration;

use catalog_framework::jobs::{enqueue_job, JobOptions};
use catalog_framework::prelude::*;

use super::import::process_records;
use super::{hash_hex, write, Run, FINISH_JOB, GATHER_JOB, QUEUE};
use crate::harvester::Page;
use crate::store::{self, status};

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
pub(super) struct PagingState {
    /// Pages read so far.
    pub(super) pages: u64,
    /// Hashes of the page cursors read (a source whose paging comes back to a page loops).
    pub(super) seen: Vec<String>,
    /// Where an incremental run starts (computed at the first page).
    pub(super) since: Option<String>,
    /// Whether `since` was computed.
    pub(super) since_set: bool,
}

impl PagingState {
    pub(super) fn from_value(v: &Value) -> PagingState {
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
