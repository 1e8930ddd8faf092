//! Background jobs (CKAN's `ckan jobs`, RQ's queues and workers), kept in the store.
//!
//! - A plugin registers a [`JobHandler`] for a job kind with
//!   [`register_job_handler!`](crate::register_job_handler).
//! - An action enqueues a job with
//!   [`ActionContext::enqueue_job`](crate::context::ActionContext::enqueue_job), in its
//!   transaction: the job exists exactly when the action's writes commit, and the process's
//!   workers are woken after the commit. Code outside an action (an `after_commit` hook, the
//!   CLI) uses [`enqueue_job`], which commits a transaction of its own.
//! - Workers (the host's `WorkerPool`) claim due jobs (PostgreSQL: `FOR UPDATE SKIP LOCKED`, so workers
//!   of several processes never take the same job), heartbeat while the handler runs, and
//!   record its result or error. A failed attempt is retried after `retry_base_ms · 2^attempts`
//!   until the job's `max_attempts`, then the job is `failed` with its error kept. A running
//!   job whose heartbeat is older than `catalog.jobs.stale_after_secs` (its worker crashed or
//!   was killed) runs again. A job may therefore run more than once: handlers must be
//!   idempotent (at-least-once delivery).
//!
//! The design is argued in docs/adr/0005-background-jobs.md.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::Notify;

use crate::context::AppState;
use crate::error::{internal, validation, CkanResult};
use crate::store::{self as q, JobRow};

/// The lane of the kinds that name none: maintenance (purges, test jobs, plugins' jobs).
pub const DEFAULT_LANE: &str = "default";

/// The lane of the DataStore loader's jobs.
pub const LOAD_LANE: &str = "load";

/// The lane of the harvester's jobs.
pub const HARVEST_LANE: &str = "harvest";

/// Runs the jobs of one kind (the name it is registered under).
///
/// ```ignore
/// struct Reindex;
/// #[async_trait]
/// impl JobHandler for Reindex {
///     async fn run(&self, app: &AppState, payload: &Value) -> anyhow::Result<Value> {
///         // … idempotent work; Ok(value) is kept as the job's result …
///         Ok(json!({"done": true}))
///     }
/// }
/// register_job_handler!("reindex_dataset", Reindex);
/// ```
///
/// A job may run more than once (its worker died after the work but before recording it, a
/// retry after an error): the work must be safe to repeat.
#[async_trait]
pub trait JobHandler: Send + Sync + 'static {
    /// The lane whose workers run this kind: each lane has `catalog.jobs.workers` workers of
    /// its own, so a slow kind (a load of a remote file, a harvest page) holds only its own
    /// lane's workers and never the others'. [`DEFAULT_LANE`] unless the handler says.
    fn lane(&self) -> &'static str {
        DEFAULT_LANE
    }

    /// How long one attempt may run; `None`: `catalog.jobs.timeout` (CKAN's
    /// `ckan.jobs.timeout`, 180 s).
    fn timeout(&self) -> Option<Duration> {
        None
    }

    /// Runs one attempt of a job. `Ok` is stored as the job's `result`; an error fails the
    /// attempt (it is retried while attempts remain) and is stored as the job's `error`.
    async fn run(&self, app: &AppState, payload: &Value) -> anyhow::Result<Value>;
}

crate::extension_point!(
    /// A [`JobHandler`], submitted with [`register_job_handler!`](crate::register_job_handler).
    pub JobHandlerRegistration, Box<dyn JobHandler>,
    collected("job_handlers", "job handler")
);

/// Registers a [`JobHandler`] for a job kind: `register_job_handler!("reindex_dataset", Reindex);`
#[macro_export]
macro_rules! register_job_handler {
    ($name:expr, $value:expr) => {
        $crate::register_job_handler!($name, $value, priority = 0);
    };
    ($name:expr, $value:expr, priority = $p:expr) => {
        $crate::__register!(JobHandlerRegistration, $name, $value, $p);
    };
}

/// How a job is enqueued. Every field has a default: `JobOptions::default()` is a job on the
/// `default` queue, without a title, with `catalog.jobs.max_attempts` attempts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobOptions {
    /// The queue (CKAN's unprefixed name); `None`: `default`.
    pub queue: Option<String>,
    /// A human-readable title (what `job_list` shows).
    pub title: Option<String>,
    /// Attempts before the job is `failed`; `None`: `catalog.jobs.max_attempts`.
    pub max_attempts: Option<u32>,
}

impl JobOptions {
    /// Options with this queue.
    pub fn queue(queue: impl Into<String>) -> JobOptions {
        JobOptions {
            queue: Some(queue.into()),
            ..JobOptions::default()
        }
    }

    /// The same options with this title.
    pub fn with_title(mut self, title: impl Into<String>) -> JobOptions {
        self.title = Some(title.into());
        self
    }
}

/// Longest accepted queue name, in characters.
pub const MAX_QUEUE_CHARS: usize = 100;
/// Longest accepted job title, in characters.
pub const MAX_TITLE_CHARS: usize = 1000;
/// Most attempts a job may be given.
pub const MAX_ATTEMPTS: u32 = 100;

/// The checked queue, title and attempts of a job to enqueue.
fn resolve_options(
    app: &AppState,
    kind: &str,
    opts: &JobOptions,
) -> CkanResult<(String, Option<String>, i64)> {
    if !app
        .registry
        .extensions::<JobHandlerRegistration>()
        .contains_key(kind)
    {
        return Err(internal(format!(
            "no job handler is registered for the job kind {kind:?}"
        )));
    }
    let queue = opts.queue.as_deref().unwrap_or(q::DEFAULT_QUEUE);
    let mut errs = validation();
    if queue.trim().is_empty() {
        errs.push("queue", "Missing value");
    } else if queue.chars().count() > MAX_QUEUE_CHARS || queue.contains('\0') {
        errs.push(
            "queue",
            format!("Must be at most {MAX_QUEUE_CHARS} characters, without NUL"),
        );
    }
    if let Some(t) = &opts.title {
        if t.chars().count() > MAX_TITLE_CHARS || t.contains('\0') {
            errs.push(
                "title",
                format!("Must be at most {MAX_TITLE_CHARS} characters, without NUL"),
            );
        }
    }
    let attempts = opts
        .max_attempts
        .unwrap_or(app.config.catalog.jobs.max_attempts);
    if !(1..=MAX_ATTEMPTS).contains(&attempts) {
        errs.push(
            "max_attempts",
            format!("Must be between 1 and {MAX_ATTEMPTS}"),
        );
    }
    errs.finish()?;
    Ok((queue.to_string(), opts.title.clone(), i64::from(attempts)))
}

/// Enqueues a job on `conn` (the caller's transaction), checked as
/// [`ActionContext::enqueue_job`](crate::context::ActionContext::enqueue_job) checks it.
pub(crate) async fn enqueue_on(
    conn: &mut sqlx::AnyConnection,
    app: &AppState,
    kind: &str,
    payload: &Value,
    opts: &JobOptions,
) -> CkanResult<JobRow> {
    let (queue, title, max_attempts) = resolve_options(app, kind, opts)?;
    let id = q::new_id();
    let row = q::enqueue_job(
        conn,
        &q::NewJob {
            id: &id,
            queue: &queue,
            kind,
            title: title.as_deref(),
            payload,
            max_attempts,
        },
    )
    .await?;
    Ok(row)
}

/// Enqueues a job in a transaction of its own and wakes this process's workers: for code
/// outside an action call (an `after_commit` hook, the CLI). Inside an action use
/// [`ActionContext::enqueue_job`](crate::context::ActionContext::enqueue_job), so that the job
/// commits or rolls back with the action's writes.
pub async fn enqueue_job(
    app: &AppState,
    kind: &str,
    payload: Value,
    opts: JobOptions,
) -> CkanResult<JobRow> {
    let _guard = app.store.lock_writes().await;
    let mut db = crate::db::Db::default();
    let row = enqueue_on(db.get(&app.store, true).await?, app, kind, &payload, &opts).await?;
    db.commit().await?;
    drop(_guard);
    app.jobs.wake();
    tracing::info!(job = %row.id, kind, queue = %row.queue, "added background job");
    Ok(row)
}

/// What the app keeps for its workers: the wake-up of jobs enqueued in this process, and when
/// the stale-job check and the pruning last ran.
#[derive(Default)]
pub struct Jobs {
    wake: Notify,
    maintenance: Mutex<Maintenance>,
}

#[derive(Default)]
struct Maintenance {
    stale_checked: Option<Instant>,
    pruned: Option<Instant>,
}

/// How often finished and failed jobs past their keeping time are deleted.
const PRUNE_EVERY: Duration = Duration::from_secs(600);

impl Jobs {
    /// Wakes this process's idle workers (a job was committed).
    pub fn wake(&self) {
        self.wake.notify_waiters();
    }

    /// Resolves when [`Jobs::wake`] is called (a worker waits on it while idle).
    pub fn notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.wake.notified()
    }

    /// Which periodic chores are due now (and marks them done): whether to requeue stale jobs
    /// and whether to prune old ones. For the host's workers.
    #[doc(hidden)]
    pub fn due_chores(&self, stale_every: Duration) -> (bool, bool) {
        let mut m = self.maintenance.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let stale = m.stale_checked.is_none_or(|t| now - t >= stale_every);
        if stale {
            m.stale_checked = Some(now);
        }
        let prune = m.pruned.is_none_or(|t| now - t >= PRUNE_EVERY);
        if prune {
            m.pruned = Some(now);
        }
        (stale, prune)
    }
}
