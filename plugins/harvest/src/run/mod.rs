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
//!
//! This file holds the start of a run and what every phase shares (the [`Run`] context, the
//! job kinds, short writes, gather errors); the phases are one file each: `gather.rs` (a page
//! job), `import.rs` (a page's records to datasets), `finish.rs` (deletions and the end of the
//! job), `clear.rs` (the job that clears a big source) and `dry_run.rs` (`catalog harvest
//! dry-run`).

pub(crate) mod clear;
pub(crate) mod dry_run;
pub(crate) mod finish;
pub(crate) mod gather;
mod import;

use catalog_framework::jobs::JobOptions;
use catalog_framework::prelude::*;
use catalog_framework::store::Principal;
use sha2::{Digest, Sha256};

use crate::harvester::{self, GatherContext, Harvester, Source};
use crate::settings::HarvestSettings;
use crate::store::{self, status, JobRow};

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

fn hash_hex(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    hex::encode(h.finalize())
}
