//! The workers that run background jobs (`catalog_framework::jobs` is what plugins see: the
//! handlers' trait and enqueueing). A pool of workers claims due jobs, heartbeats while a
//! handler runs, records its result or error, requeues stale jobs and prunes old ones.

use std::time::{Duration, Instant};

use catalog_framework::jobs::JobHandlerRegistration;
use catalog_framework::prelude::AppState;
use catalog_framework::store::{self as q, FailOutcome, JobRow};
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinSet;

/// What a pool of workers does.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// The queues to take jobs from, the first emptied first (CKAN's worker: `default` when
    /// none is given).
    pub queues: Vec<String>,
    /// Workers of each lane (concurrent jobs of a lane's kinds; see
    /// [`JobHandler::lane`](catalog_framework::jobs::JobHandler::lane)).
    pub workers: usize,
    /// Exit once no job is due (CKAN's `ckan jobs worker --burst`).
    pub burst: bool,
    /// Exit after being idle this long (CKAN's `--max-idle-time`).
    pub max_idle: Option<Duration>,
}

impl WorkerOptions {
    /// The server's workers: `catalog.jobs.workers` on `catalog.jobs.queues`.
    pub fn from_config(config: &catalog_framework::app::Config) -> WorkerOptions {
        WorkerOptions {
            queues: config.catalog.jobs.queues.clone(),
            workers: config.catalog.jobs.workers,
            burst: false,
            max_idle: None,
        }
    }
}

/// Running workers. [`WorkerPool::shutdown`] stops them: each lets its job finish for
/// `catalog.jobs.shutdown_grace_secs`, then gives it back to its queue. A process killed
/// without a shutdown leaves its jobs `running`; other workers run them again once their
/// heartbeat is older than `catalog.jobs.stale_after_secs`.
pub struct WorkerPool {
    stop: watch::Sender<bool>,
    tasks: JoinSet<()>,
}

impl WorkerPool {
    /// Starts `opts.workers` workers (none when 0).
    pub fn spawn(app: AppState, opts: WorkerOptions) -> WorkerPool {
        let (stop, _) = watch::channel(false);
        let queues = if opts.queues.is_empty() {
            vec![q::DEFAULT_QUEUE.to_string()]
        } else {
            opts.queues.clone()
        };
        let name = worker_name();
        let mut tasks = JoinSet::new();
        let lanes = lanes(&app);
        for (lane, kinds) in &lanes {
            for n in 0..opts.workers {
                let worker = Worker {
                    app: app.clone(),
                    queues: queues.clone(),
                    kinds: kinds.clone(),
                    id: format!("{name}/{lane}/{n}"),
                    stop: stop.subscribe(),
                    burst: opts.burst,
                    max_idle: opts.max_idle,
                };
                tasks.spawn(worker.work());
            }
        }
        if opts.workers > 0 {
            let lanes: Vec<&str> = lanes.keys().copied().collect();
            tracing::info!(workers = opts.workers, lanes = ?lanes, queues = ?queues, worker = %name, "background job workers started (per lane)");
        }
        WorkerPool { stop, tasks }
    }

    /// Runs until every worker has exited by itself (`burst`, `max_idle`) or `stop` resolves
    /// (then as [`WorkerPool::shutdown`]).
    pub async fn run_until(mut self, stop: impl std::future::Future<Output = ()>) {
        tokio::pin!(stop);
        loop {
            tokio::select! {
                next = self.tasks.join_next() => {
                    if next.is_none() {
                        return;
                    }
                }
                _ = &mut stop => {
                    self.shutdown().await;
                    return;
                }
            }
        }
    }

    /// Stops the workers: no new job is claimed, a running job gets the grace period to
    /// finish and is given back to its queue if it does not.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        while self.tasks.join_next().await.is_some() {}
    }
}

/// The host's [`WorkerSpawner`](catalog_framework::cli::WorkerSpawner): what a plugin's
/// command runs jobs in the foreground with.
pub struct HostWorkers;

impl catalog_framework::cli::WorkerSpawner for HostWorkers {
    fn spawn(
        &self,
        app: AppState,
        queues: Vec<String>,
        workers: usize,
    ) -> Box<dyn catalog_framework::cli::RunningWorkers> {
        let opts = WorkerOptions {
            queues,
            workers: workers.max(1),
            burst: false,
            max_idle: None,
        };
        Box::new(WorkerPool::spawn(app, opts))
    }
}

#[async_trait::async_trait]
impl catalog_framework::cli::RunningWorkers for WorkerPool {
    async fn stop(self: Box<Self>) {
        (*self).shutdown().await;
    }
}

/// The job kinds with a handler, by the lane whose workers run them (the default lane always,
/// so that a pool without handlers still has its workers).
fn lanes(app: &AppState) -> std::collections::BTreeMap<&'static str, Vec<String>> {
    let mut lanes = std::collections::BTreeMap::new();
    lanes.insert(catalog_framework::jobs::DEFAULT_LANE, Vec::new());
    for (kind, handler) in app.registry.extensions::<JobHandlerRegistration>() {
        lanes
            .entry(handler.lane())
            .or_insert_with(Vec::new)
            .push(kind.clone());
    }
    lanes
}

/// This process's worker name: host, pid and a random part (a restarted process with a
/// reused pid is another worker).
fn worker_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into());
    let tag = uuid::Uuid::new_v4().simple().to_string();
    format!("{host}.{}.{}", std::process::id(), &tag[..8])
}

/// A connection for one of the worker's writes, behind SQLite's single-writer lock.
async fn write_conn(
    app: &AppState,
) -> sqlx::Result<(
    Option<tokio::sync::OwnedMutexGuard<()>>,
    sqlx::pool::PoolConnection<sqlx::Any>,
)> {
    let guard = app.store.lock_writes().await;
    let conn = app.store.pool.acquire().await?;
    Ok((guard, conn))
}

struct Worker {
    app: AppState,
    queues: Vec<String>,
    /// The kinds of this worker's lane: the only ones it claims.
    kinds: Vec<String>,
    id: String,
    stop: watch::Receiver<bool>,
    burst: bool,
    max_idle: Option<Duration>,
}

impl Worker {
    fn settings(&self) -> &catalog_framework::store::config::JobsConfig {
        &self.app.config.catalog.jobs
    }

    fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    async fn work(mut self) {
        let poll = Duration::from_millis(self.settings().poll_interval_ms.max(10));
        let mut idle_since = Instant::now();
        loop {
            if self.stopping() {
                break;
            }
            // Listen before looking, so a job committed between the look and the wait
            // still wakes this worker.
            let app = self.app.clone();
            let woken = app.jobs.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            self.chores().await;
            match self.claim().await {
                Ok(Some(job)) => {
                    self.run(job).await;
                    idle_since = Instant::now();
                    continue;
                }
                Ok(None) => {}
                Err(e) => tracing::error!(worker = %self.id, error = %e, "claiming a job failed"),
            }
            if self.burst {
                break;
            }
            if self.max_idle.is_some_and(|m| idle_since.elapsed() >= m) {
                tracing::info!(worker = %self.id, "idle for too long: stopping");
                break;
            }
            tokio::select! {
                _ = &mut woken => {}
                _ = tokio::time::sleep(poll) => {}
                _ = self.stop.changed() => {}
            }
        }
    }

    /// Takes back abandoned jobs and deletes old ones, each at its own pace.
    async fn chores(&self) {
        let stale_after = Duration::from_secs(self.settings().stale_after_secs.max(1));
        let (stale, prune) = self.app.jobs.due_chores(stale_after / 4);
        if stale {
            if let Err(e) = self.requeue_stale(stale_after).await {
                tracing::error!(error = %e, "requeueing stale jobs failed");
            }
        }
        if prune {
            let s = self.settings();
            let (finished, failed) = (
                Duration::from_secs(s.keep_finished_secs),
                Duration::from_secs(s.keep_failed_secs),
            );
            let pruned = async {
                let (_guard, mut conn) = write_conn(&self.app).await?;
                q::prune_jobs(&mut conn, finished, failed).await
            };
            match pruned.await {
                Ok(0) => {}
                Ok(n) => tracing::info!(jobs = n, "deleted old finished and failed jobs"),
                Err(e) => tracing::error!(error = %e, "deleting old jobs failed"),
            }
        }
    }

    async fn requeue_stale(&self, stale_after: Duration) -> sqlx::Result<()> {
        let mut conn = self.app.store.pool.acquire().await?;
        if !q::stale_jobs_exist(&mut conn, stale_after).await? {
            return Ok(());
        }
        drop(conn);
        let (_guard, mut conn) = write_conn(&self.app).await?;
        let r = q::requeue_stale_jobs(&mut conn, stale_after).await?;
        if r.requeued + r.failed > 0 {
            tracing::warn!(
                requeued = r.requeued,
                failed = r.failed,
                "took back running jobs whose worker stopped heartbeating"
            );
        }
        Ok(())
    }

    async fn claim(&self) -> sqlx::Result<Option<JobRow>> {
        let kinds = &self.kinds;
        if kinds.is_empty() {
            return Ok(None);
        }
        let mut conn = self.app.store.pool.acquire().await?;
        if !q::job_due(&mut conn, &self.queues, kinds).await? {
            return Ok(None);
        }
        drop(conn);
        let (_guard, mut conn) = write_conn(&self.app).await?;
        q::claim_job(
            &mut conn,
            self.app.store.backend,
            &self.queues,
            kinds,
            &self.id,
        )
        .await
    }

    /// Runs a claimed job to its end, heartbeating meanwhile, and records the outcome.
    async fn run(&mut self, job: JobRow) {
        let label = match &job.title {
            Some(t) => format!("{} ({t})", job.id),
            None => job.id.clone(),
        };
        tracing::info!(worker = %self.id, job = %label, queue = %job.queue, kind = %job.kind, attempt = job.attempts, "starting job");
        let Some(handler) = self
            .app
            .registry
            .extensions::<JobHandlerRegistration>()
            .get(&job.kind)
            .cloned()
        else {
            // Claims only take kinds with a handler; kept for robustness.
            self.record_failure(&job, "No handler is registered for this job kind")
                .await;
            return;
        };
        let payload: Value = match serde_json::from_str(&job.payload) {
            Ok(v) => v,
            Err(e) => {
                self.record_failure(&job, &format!("The job's payload is not JSON: {e}"))
                    .await;
                return;
            }
        };
        let timeout = handler
            .timeout()
            .unwrap_or(Duration::from_secs(self.settings().timeout.max(1)));
        let app = self.app.clone();
        // Its own task: a panic in the handler fails the attempt, not the worker.
        let mut task = tokio::spawn(async move {
            tokio::time::timeout(timeout, handler.run(&app, &payload)).await
        });
        let stale_after = Duration::from_secs(self.settings().stale_after_secs.max(1));
        let mut beat = tokio::time::interval((stale_after / 3).max(Duration::from_millis(100)));
        beat.tick().await;
        let outcome = loop {
            tokio::select! {
                r = &mut task => break Some(r),
                _ = beat.tick() => {
                    match self.heartbeat(&job.id).await {
                        Ok(true) => {}
                        Ok(false) => {
                            task.abort();
                            tracing::warn!(worker = %self.id, job = %label, "job was cancelled or taken back: stopped running it");
                            break None;
                        }
                        Err(e) => tracing::error!(worker = %self.id, job = %label, error = %e, "heartbeat failed"),
                    }
                }
                _ = self.stop.changed() => {
                    let grace = Duration::from_secs(self.settings().shutdown_grace_secs);
                    match tokio::time::timeout(grace, &mut task).await {
                        Ok(r) => break Some(r),
                        Err(_) => {
                            task.abort();
                            self.release(&job).await;
                            tracing::info!(worker = %self.id, job = %label, "shutting down: job given back to its queue");
                            return;
                        }
                    }
                }
            }
        };
        let Some(outcome) = outcome else { return };
        match outcome {
            Ok(Ok(Ok(result))) => {
                let done = async {
                    let (_guard, mut conn) = write_conn(&self.app).await?;
                    q::finish_job(&mut conn, &job.id, &self.id, &result).await
                };
                match done.await {
                    Ok(true) => {
                        tracing::info!(worker = %self.id, job = %label, "finished job")
                    }
                    Ok(false) => {
                        tracing::warn!(worker = %self.id, job = %label, "job finished after it was cancelled or taken back")
                    }
                    Err(e) => {
                        tracing::error!(worker = %self.id, job = %label, error = %e, "recording the job's result failed; it will run again")
                    }
                }
            }
            Ok(Ok(Err(e))) => self.record_failure(&job, &format!("{e:#}")).await,
            Ok(Err(_)) => {
                self.record_failure(
                    &job,
                    &format!(
                        "Task exceeded maximum timeout value ({} seconds)",
                        timeout.as_secs_f64()
                    ),
                )
                .await
            }
            Err(e) => {
                let message = if e.is_panic() {
                    let p = e.into_panic();
                    let text = p
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    format!("The job's handler panicked: {text}")
                } else {
                    "The job's task was cancelled".to_string()
                };
                self.record_failure(&job, &message).await
            }
        }
    }

    async fn heartbeat(&self, id: &str) -> sqlx::Result<bool> {
        let (_guard, mut conn) = write_conn(&self.app).await?;
        q::job_heartbeat(&mut conn, id, &self.id).await
    }

    async fn release(&self, job: &JobRow) {
        let released = async {
            let (_guard, mut conn) = write_conn(&self.app).await?;
            q::release_job(&mut conn, &job.id, &self.id).await
        };
        if let Err(e) = released.await {
            tracing::error!(job = %job.id, error = %e, "giving the job back failed; it runs again once stale");
        }
    }

    async fn record_failure(&self, job: &JobRow, error: &str) {
        let base = Duration::from_millis(self.settings().retry_base_ms);
        let failed = async {
            let (_guard, mut conn) = write_conn(&self.app).await?;
            q::fail_job(&mut conn, &job.id, &self.id, error, base).await
        };
        match failed.await {
            Ok(FailOutcome::Retry { run_after }) => {
                tracing::warn!(worker = %self.id, job = %job.id, attempt = job.attempts, error, %run_after, "job failed; it will be retried")
            }
            Ok(FailOutcome::Failed) => {
                tracing::error!(worker = %self.id, job = %job.id, attempts = job.attempts, error, "job failed on its last attempt")
            }
            Ok(FailOutcome::Lost) => {
                tracing::warn!(worker = %self.id, job = %job.id, error, "job failed after it was cancelled or taken back")
            }
            Err(e) => {
                tracing::error!(worker = %self.id, job = %job.id, error = %e, "recording the job's failure failed; it runs again once stale")
            }
        }
    }
}

/// Resolves when the process is asked to stop (SIGINT or SIGTERM).
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
