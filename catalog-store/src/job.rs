//! Background jobs (`job`, `job_queue`): CKAN's RQ queues kept in the catalog's own store, so
//! that a job is enqueued in the transaction of the write that asks for it and is never lost
//! once that transaction committed (docs/adr/0005-background-jobs.md).
//!
//! A job's life: `queued` → (claimed by a worker) `running` → `finished`, or back to `queued`
//! with a later `run_after` when it failed and has attempts left, or `failed` when it has none.
//! A `running` job whose worker stopped heartbeating is queued again (or failed, when that was
//! its last attempt). `job_cancel` deletes a job; `job_clear` deletes the queued jobs of queues.
//!
//! Every timestamp of this table is written by [`job_time`]: fixed width (microseconds always
//! present), so that text comparison is time order on both backends.

use std::time::Duration;

use chrono::{NaiveDateTime, Utc};
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::AnyConnection;

use super::rows::{placeholders_from, RowExt};
use super::Backend;

/// The queue a job goes to when none is named (CKAN's `DEFAULT_QUEUE_NAME`).
pub const DEFAULT_QUEUE: &str = "default";

/// A job's state.
pub mod job_state {
    /// Waiting for a worker (possibly until `run_after`, when it is waiting to be retried).
    pub const QUEUED: &str = "queued";
    /// Claimed by a worker, which heartbeats while it runs.
    pub const RUNNING: &str = "running";
    /// Ran successfully; `result` holds what the handler returned.
    pub const FINISHED: &str = "finished";
    /// Failed on its last attempt; `error` holds the last error.
    pub const FAILED: &str = "failed";
}

/// One row of `job`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRow {
    pub id: String,
    /// The queue's name as the API shows it (CKAN's unprefixed name).
    pub queue: String,
    /// The job handler's name.
    pub kind: String,
    pub title: Option<String>,
    /// The handler's input, JSON text.
    pub payload: String,
    pub state: String,
    /// Attempts started so far (a claim counts one).
    pub attempts: i64,
    pub max_attempts: i64,
    /// Not claimed before this time (a retry's backoff).
    pub run_after: String,
    pub created: String,
    pub started: Option<String>,
    pub finished: Option<String>,
    pub heartbeat: Option<String>,
    /// The worker that holds (or last held) the job.
    pub worker: Option<String>,
    /// The last attempt's error.
    pub error: Option<String>,
    /// What the handler returned, JSON text.
    pub result: Option<String>,
}

const COLUMNS: &str = "id, queue, kind, title, payload, state, attempts, max_attempts, run_after, \
     created, started, finished, heartbeat, worker, error, result";

fn job_row(r: &AnyRow) -> JobRow {
    JobRow {
        id: r.s("id"),
        queue: r.s("queue"),
        kind: r.s("kind"),
        title: r.os("title"),
        payload: r.s("payload"),
        state: r.s("state"),
        attempts: r.i("attempts"),
        max_attempts: r.i("max_attempts"),
        run_after: r.s("run_after"),
        created: r.s("created"),
        started: r.os("started"),
        finished: r.os("finished"),
        heartbeat: r.os("heartbeat"),
        worker: r.os("worker"),
        error: r.os("error"),
        result: r.os("result"),
    }
}

/// A job's timestamp: naive UTC, always with microseconds (fixed width, so text order is
/// time order).
pub fn job_time(t: NaiveDateTime) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6f").to_string()
}

/// Now, as [`job_time`] writes it.
pub fn job_now() -> NaiveDateTime {
    Utc::now().naive_utc()
}

fn plus(t: NaiveDateTime, d: Duration) -> NaiveDateTime {
    t + chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX / 2)
}

fn minus(t: NaiveDateTime, d: Duration) -> NaiveDateTime {
    t - chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX / 2)
}

/// What [`enqueue_job`] writes.
#[derive(Debug, Clone)]
pub struct NewJob<'a> {
    pub id: &'a str,
    pub queue: &'a str,
    pub kind: &'a str,
    pub title: Option<&'a str>,
    pub payload: &'a Value,
    pub max_attempts: i64,
}

/// Enqueues a job on the caller's connection: in an action's transaction, the job exists
/// exactly when the action's writes commit. The queue becomes known (`job_queue`, by the
/// store's trigger on `job`: migration 0010).
pub async fn enqueue_job(conn: &mut AnyConnection, job: &NewJob<'_>) -> sqlx::Result<JobRow> {
    let now = job_time(job_now());
    let row = JobRow {
        id: job.id.to_string(),
        queue: job.queue.to_string(),
        kind: job.kind.to_string(),
        title: job.title.map(str::to_string),
        payload: job.payload.to_string(),
        state: job_state::QUEUED.to_string(),
        attempts: 0,
        max_attempts: job.max_attempts,
        run_after: now.clone(),
        created: now,
        started: None,
        finished: None,
        heartbeat: None,
        worker: None,
        error: None,
        result: None,
    };
    sqlx::query(
        "INSERT INTO job (id, queue, kind, title, payload, state, attempts, max_attempts, \
         run_after, created) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(&row.id)
    .bind(&row.queue)
    .bind(&row.kind)
    .bind(&row.title)
    .bind(&row.payload)
    .bind(&row.state)
    .bind(row.attempts)
    .bind(row.max_attempts)
    .bind(&row.run_after)
    .bind(&row.created)
    .execute(&mut *conn)
    .await?;
    Ok(row)
}

/// Whether a queued job of these queues and kinds is due: a plain read, so that an idle
/// worker's poll takes no write lock.
///
/// Each queue is read as the claim reads it, in the order of the `job_claim` index (state,
/// queue, run_after, …), so the first entry the index gives is the answer. Without the order
/// PostgreSQL read the table from its start (with most rows queued, a sequential scan looks
/// cheap), past every failed, finished or waiting job and every dead row version before the
/// first due one: during a bulk load that queues thousands of DataStore loads the poll grew
/// from ~1 to ~7 ms and was the store's largest cost.
pub async fn job_due(
    conn: &mut AnyConnection,
    queues: &[String],
    kinds: &[String],
) -> sqlx::Result<bool> {
    if queues.is_empty() || kinds.is_empty() {
        return Ok(false);
    }
    let sql = format!(
        "SELECT id FROM job WHERE state = 'queued' AND queue = $2 AND run_after <= $1 \
         AND kind IN ({}) ORDER BY run_after, created, id LIMIT 1",
        placeholders_from(3, kinds.len()),
    );
    let now = job_time(job_now());
    for queue in queues {
        let mut q = sqlx::query(&sql).bind(&now).bind(queue);
        for v in kinds {
            q = q.bind(v);
        }
        if q.fetch_optional(&mut *conn).await?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Claims the oldest due job of these queues (in the order the queues are given, as RQ
/// empties the left-most queue first) whose kind is one of `kinds`, for `worker`: it becomes
/// `running`, its attempts grow by one and its heartbeat is now.
///
/// This is the one statement whose text differs per backend. On PostgreSQL the candidate is
/// picked with `FOR UPDATE SKIP LOCKED`, so that workers in several processes, claiming at the
/// same moment, each lock a different row instead of queueing on the same one (and a row
/// another claim updated meanwhile is re-checked and skipped). SQLite has no row locks and no
/// such clause: there a write statement holds the database's single write lock from start to
/// end, so the `UPDATE … WHERE id = (SELECT …)` is atomic against every other writer, in this
/// process (whose writers also queue on the store's in-process lock, which the caller holds)
/// or another one; the `state = 'queued'` condition of the UPDATE keeps a claim conditional on
/// both.
pub async fn claim_job(
    conn: &mut AnyConnection,
    backend: Backend,
    queues: &[String],
    kinds: &[String],
    worker: &str,
) -> sqlx::Result<Option<JobRow>> {
    if kinds.is_empty() {
        return Ok(None);
    }
    // RQ's left-most queue first: one claim per queue, in the worker's order, each the oldest
    // due job of its queue, read in the order of the `job_claim` index (one ORDER BY over all
    // the queues, by the queue's position, could use no index: every queued job was sorted).
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE SKIP LOCKED",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "UPDATE job SET state = 'running', attempts = attempts + 1, started = $1, \
         heartbeat = $1, worker = $2, finished = NULL \
         WHERE state = 'queued' AND id = (SELECT id FROM job WHERE state = 'queued' \
         AND queue = $3 AND run_after <= $1 AND kind IN ({kinds_in}) \
         ORDER BY run_after, created, id LIMIT 1{lock}) \
         RETURNING {COLUMNS}",
        kinds_in = placeholders_from(4, kinds.len()),
    );
    let now = job_time(job_now());
    for queue in queues {
        let mut q = sqlx::query(&sql).bind(&now).bind(worker).bind(queue);
        for v in kinds {
            q = q.bind(v);
        }
        if let Some(row) = q.fetch_optional(&mut *conn).await? {
            return Ok(Some(job_row(&row)));
        }
    }
    Ok(None)
}

/// Records that `worker` still runs the job. False when the job is no longer the worker's
/// (cancelled, or queued again as stale): the worker should stop running it.
pub async fn job_heartbeat(conn: &mut AnyConnection, id: &str, worker: &str) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE job SET heartbeat = $1 WHERE id = $2 AND worker = $3 AND state = 'running'",
    )
    .bind(job_time(job_now()))
    .bind(id)
    .bind(worker)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Records a successful run. False when the job was no longer the worker's.
pub async fn finish_job(
    conn: &mut AnyConnection,
    id: &str,
    worker: &str,
    result: &Value,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE job SET state = 'finished', finished = $1, result = $2, error = NULL \
         WHERE id = $3 AND worker = $4 AND state = 'running'",
    )
    .bind(job_time(job_now()))
    .bind(result.to_string())
    .bind(id)
    .bind(worker)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The delay before a failed job's next attempt: `base · 2^attempts` (attempts made so far).
pub fn retry_delay(base: Duration, attempts: i64) -> Duration {
    let exponent = attempts.clamp(0, 20) as u32;
    base.saturating_mul(1u32 << exponent)
}

/// What became of a failed attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailOutcome {
    /// Queued again, not to run before this time.
    Retry { run_after: String },
    /// That was its last attempt: the job is `failed`, its error kept.
    Failed,
    /// The job was no longer the worker's (cancelled, or queued again as stale).
    Lost,
}

/// Records a failed attempt: queued again after `retry_delay(retry_base, attempts)` while the
/// job has attempts left, else `failed`. The error is kept either way.
pub async fn fail_job(
    conn: &mut AnyConnection,
    id: &str,
    worker: &str,
    error: &str,
    retry_base: Duration,
) -> sqlx::Result<FailOutcome> {
    let row: Option<(i64, i64)> = sqlx::query(
        "SELECT attempts, max_attempts FROM job WHERE id = $1 AND worker = $2 AND state = 'running'",
    )
    .bind(id)
    .bind(worker)
    .fetch_optional(&mut *conn)
    .await?
    .map(|r| (r.i("attempts"), r.i("max_attempts")));
    let Some((attempts, max_attempts)) = row else {
        return Ok(FailOutcome::Lost);
    };
    let now = job_now();
    let (sql, outcome, when) = if attempts < max_attempts {
        let run_after = job_time(plus(now, retry_delay(retry_base, attempts)));
        (
            "UPDATE job SET state = 'queued', run_after = $1, error = $2, heartbeat = NULL \
             WHERE id = $3 AND worker = $4 AND state = 'running'",
            FailOutcome::Retry {
                run_after: run_after.clone(),
            },
            run_after,
        )
    } else {
        (
            "UPDATE job SET state = 'failed', finished = $1, error = $2, heartbeat = NULL \
             WHERE id = $3 AND worker = $4 AND state = 'running'",
            FailOutcome::Failed,
            job_time(now),
        )
    };
    let done = sqlx::query(sql)
        .bind(when)
        .bind(error)
        .bind(id)
        .bind(worker)
        .execute(&mut *conn)
        .await?;
    Ok(if done.rows_affected() == 1 {
        outcome
    } else {
        FailOutcome::Lost
    })
}

/// Gives a running job back to its queue without counting the attempt: a worker that shuts
/// down before its job finished. False when the job was no longer the worker's.
pub async fn release_job(conn: &mut AnyConnection, id: &str, worker: &str) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE job SET state = 'queued', attempts = attempts - 1, run_after = $1, \
         heartbeat = NULL WHERE id = $2 AND worker = $3 AND state = 'running'",
    )
    .bind(job_time(job_now()))
    .bind(id)
    .bind(worker)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Whether some running job's heartbeat is older than `stale_after` (a plain read).
pub async fn stale_jobs_exist(
    conn: &mut AnyConnection,
    stale_after: Duration,
) -> sqlx::Result<bool> {
    Ok(
        sqlx::query("SELECT id FROM job WHERE state = 'running' AND heartbeat < $1 LIMIT 1")
            .bind(job_time(minus(job_now(), stale_after)))
            .fetch_optional(&mut *conn)
            .await?
            .is_some(),
    )
}

/// What [`requeue_stale_jobs`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StaleJobs {
    /// Queued again, to run at once.
    pub requeued: u64,
    /// That was their last attempt: now `failed`.
    pub failed: u64,
}

/// The message a job gets whose worker stopped heartbeating.
pub const STALE_MESSAGE: &str =
    "The worker running this job stopped (no heartbeat); the attempt was abandoned";

/// Takes back the running jobs whose heartbeat is older than `stale_after` (their worker
/// crashed, was killed or lost the database): queued again to run at once, or `failed` when
/// that was their last attempt.
pub async fn requeue_stale_jobs(
    conn: &mut AnyConnection,
    stale_after: Duration,
) -> sqlx::Result<StaleJobs> {
    let now = job_now();
    let cutoff = job_time(minus(now, stale_after));
    let now = job_time(now);
    let failed = sqlx::query(
        "UPDATE job SET state = 'failed', finished = $1, error = $2, heartbeat = NULL \
         WHERE state = 'running' AND heartbeat < $3 AND attempts >= max_attempts",
    )
    .bind(&now)
    .bind(STALE_MESSAGE)
    .bind(&cutoff)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    let requeued = sqlx::query(
        "UPDATE job SET state = 'queued', run_after = $1, error = $2, heartbeat = NULL \
         WHERE state = 'running' AND heartbeat < $3",
    )
    .bind(&now)
    .bind(STALE_MESSAGE)
    .bind(&cutoff)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    Ok(StaleJobs { requeued, failed })
}

/// A job by id, in any state.
pub async fn job_by_id(conn: &mut AnyConnection, id: &str) -> sqlx::Result<Option<JobRow>> {
    Ok(
        sqlx::query(&format!("SELECT {COLUMNS} FROM job WHERE id = $1"))
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?
            .as_ref()
            .map(job_row),
    )
}

/// The queued jobs of a queue in the order workers take them (FIFO, a retry at its
/// `run_after`), at most `limit`.
pub async fn queued_jobs(
    conn: &mut AnyConnection,
    queue: &str,
    limit: i64,
) -> sqlx::Result<Vec<JobRow>> {
    Ok(sqlx::query(&format!(
        "SELECT {COLUMNS} FROM job WHERE queue = $1 AND state = 'queued' \
         ORDER BY run_after, created, id LIMIT $2"
    ))
    .bind(queue)
    .bind(limit.max(0))
    .fetch_all(&mut *conn)
    .await?
    .iter()
    .map(job_row)
    .collect())
}

/// How many jobs of a queue are queued.
pub async fn count_queued_jobs(conn: &mut AnyConnection, queue: &str) -> sqlx::Result<i64> {
    let n: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM job WHERE queue = $1 AND state = 'queued'")
            .bind(queue)
            .fetch_one(&mut *conn)
            .await?;
    Ok(n)
}

/// Every queue a job was ever enqueued on, the oldest first.
pub async fn job_queues(conn: &mut AnyConnection) -> sqlx::Result<Vec<String>> {
    sqlx::query_scalar("SELECT name FROM job_queue ORDER BY created, name")
        .fetch_all(&mut *conn)
        .await
}

/// Deletes a job, in any state (CKAN's `job.delete()`); false when there is none. A worker
/// running it notices at its next heartbeat and stops.
pub async fn delete_job(conn: &mut AnyConnection, id: &str) -> sqlx::Result<bool> {
    let done = sqlx::query("DELETE FROM job WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Deletes the queued jobs of a queue (CKAN's `queue.empty()`); running jobs are unaffected.
pub async fn clear_queued_jobs(conn: &mut AnyConnection, queue: &str) -> sqlx::Result<u64> {
    Ok(
        sqlx::query("DELETE FROM job WHERE queue = $1 AND state = 'queued'")
            .bind(queue)
            .execute(&mut *conn)
            .await?
            .rows_affected(),
    )
}

/// Deletes finished jobs that finished more than `keep_finished` ago and failed jobs that
/// failed more than `keep_failed` ago (RQ's `result_ttl` and `failure_ttl`).
pub async fn prune_jobs(
    conn: &mut AnyConnection,
    keep_finished: Duration,
    keep_failed: Duration,
) -> sqlx::Result<u64> {
    let now = job_now();
    let mut n = 0;
    for (state, keep) in [
        (job_state::FINISHED, keep_finished),
        (job_state::FAILED, keep_failed),
    ] {
        n += sqlx::query("DELETE FROM job WHERE state = $1 AND finished < $2")
            .bind(state)
            .bind(job_time(minus(now, keep)))
            .execute(&mut *conn)
            .await?
            .rows_affected();
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_per_attempt() {
        let base = Duration::from_secs(10);
        assert_eq!(retry_delay(base, 0), Duration::from_secs(10));
        assert_eq!(retry_delay(base, 1), Duration::from_secs(20));
        assert_eq!(retry_delay(base, 3), Duration::from_secs(80));
        assert_eq!(retry_delay(base, 1000), retry_delay(base, 20));
    }

    #[test]
    fn job_times_sort_as_text() {
        let a = crate::time::parse_iso("2024-01-01T00:00:00").unwrap();
        let b = crate::time::parse_iso("2024-01-01T00:00:00.5").unwrap();
        assert_eq!(job_time(a), "2024-01-01T00:00:00.000000");
        assert!(job_time(a) < job_time(b));
    }
}
