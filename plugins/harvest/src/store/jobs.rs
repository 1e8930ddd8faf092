//! `harvest_job`: a source's jobs, their status and their paging state.

use catalog_framework::store::Backend;
use catalog_framework::store::RowExt;
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::AnyConnection;

use super::values::{now, status};

/// One row of `harvest_job`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JobRow {
    pub(crate) id: String,
    pub(crate) created: String,
    pub(crate) gather_started: Option<String>,
    pub(crate) gather_finished: Option<String>,
    pub(crate) finished: Option<String>,
    pub(crate) source_id: String,
    pub(crate) status: String,
    pub(crate) force_all: bool,
    pub(crate) force_delete: bool,
    pub(crate) gather_complete: bool,
    pub(crate) gather_state: Value,
    pub(crate) last_action: Option<String>,
}

const JOB_COLUMNS: &str = "id, created, gather_started, gather_finished, finished, source_id, \
     status, force_all, force_delete, gather_complete, gather_state, last_action";

fn job_row(r: &AnyRow) -> JobRow {
    JobRow {
        id: r.s("id"),
        created: r.s("created"),
        gather_started: r.os("gather_started"),
        gather_finished: r.os("gather_finished"),
        finished: r.os("finished"),
        source_id: r.s("source_id"),
        status: r.s("status"),
        force_all: r.b("force_all"),
        force_delete: r.b("force_delete"),
        gather_complete: r.b("gather_complete"),
        gather_state: serde_json::from_str(&r.s("gather_state")).unwrap_or(Value::Null),
        last_action: r.os("last_action"),
    }
}

/// A new job of a source (`New`, or `Running` when `run`). Fails on the unique key when the
/// source already has a job that is new or running.
pub(crate) async fn insert_job(
    conn: &mut AnyConnection,
    id: &str,
    source_id: &str,
    run: bool,
    force_all: bool,
    force_delete: bool,
) -> sqlx::Result<JobRow> {
    let now = now();
    let status = if run { status::RUNNING } else { status::NEW };
    sqlx::query(
        "INSERT INTO harvest_job (id, created, source_id, status, force_all, force_delete, \
         last_action) VALUES ($1, $2, $3, $4, $5, $6, $2)",
    )
    .bind(id)
    .bind(&now)
    .bind(source_id)
    .bind(status)
    .bind(force_all)
    .bind(force_delete)
    .execute(&mut *conn)
    .await?;
    Ok(job(conn, id).await?.expect("the job just inserted"))
}

/// The job of this id.
pub(crate) async fn job(conn: &mut AnyConnection, id: &str) -> sqlx::Result<Option<JobRow>> {
    let sql = format!("SELECT {JOB_COLUMNS} FROM harvest_job WHERE id = $1");
    Ok(sqlx::query(&sql)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
        .as_ref()
        .map(job_row))
}

/// The job of this id, locked for an update until the transaction ends (PostgreSQL; SQLite's
/// writer lock already serializes writers).
pub(crate) async fn job_for_update(
    conn: &mut AnyConnection,
    backend: Backend,
    id: &str,
) -> sqlx::Result<Option<JobRow>> {
    let lock = if backend == Backend::Postgres {
        " FOR UPDATE"
    } else {
        ""
    };
    let sql = format!("SELECT {JOB_COLUMNS} FROM harvest_job WHERE id = $1{lock}");
    Ok(sqlx::query(&sql)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
        .as_ref()
        .map(job_row))
}

/// A source's jobs, newest first, of one status when given.
pub(crate) async fn jobs(
    conn: &mut AnyConnection,
    source_id: Option<&str>,
    job_status: Option<&str>,
    limit: i64,
) -> sqlx::Result<Vec<JobRow>> {
    let sql = format!(
        "SELECT {JOB_COLUMNS} FROM harvest_job WHERE ($1 = '' OR source_id = $1) \
         AND ($2 = '' OR status = $2) ORDER BY created DESC LIMIT $3"
    );
    Ok(sqlx::query(&sql)
        .bind(source_id.unwrap_or(""))
        .bind(job_status.unwrap_or(""))
        .bind(limit)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(job_row)
        .collect())
}

/// How many jobs a source has had.
pub(crate) async fn job_count(conn: &mut AnyConnection, source_id: &str) -> sqlx::Result<i64> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM harvest_job WHERE source_id = $1")
        .bind(source_id)
        .fetch_one(&mut *conn)
        .await?;
    Ok(n)
}

/// The source's job that is new or running, if any.
pub(crate) async fn active_job(
    conn: &mut AnyConnection,
    source_id: &str,
) -> sqlx::Result<Option<JobRow>> {
    let sql = format!(
        "SELECT {JOB_COLUMNS} FROM harvest_job WHERE source_id = $1 \
         AND status IN ('New', 'Running') LIMIT 1"
    );
    Ok(sqlx::query(&sql)
        .bind(source_id)
        .fetch_optional(&mut *conn)
        .await?
        .as_ref()
        .map(job_row))
}

/// Sets a job's status (and, for `Running`, clears nothing else).
pub(crate) async fn set_job_status(
    conn: &mut AnyConnection,
    id: &str,
    to: &str,
) -> sqlx::Result<()> {
    sqlx::query("UPDATE harvest_job SET status = $2, last_action = $3 WHERE id = $1")
        .bind(id)
        .bind(to)
        .bind(now())
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Records the start of the gather (first page) unless already recorded.
pub(crate) async fn mark_gather_started(conn: &mut AnyConnection, id: &str) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE harvest_job SET gather_started = COALESCE(gather_started, $2), last_action = $2 \
         WHERE id = $1",
    )
    .bind(id)
    .bind(now())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Stores the paging state after a page.
pub(crate) async fn save_gather_state(
    conn: &mut AnyConnection,
    id: &str,
    state: &Value,
) -> sqlx::Result<()> {
    sqlx::query("UPDATE harvest_job SET gather_state = $2, last_action = $3 WHERE id = $1")
        .bind(id)
        .bind(state.to_string())
        .bind(now())
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Records the end of the gather: `complete` when every page was read without a gather error.
pub(crate) async fn mark_gather_finished(
    conn: &mut AnyConnection,
    id: &str,
    complete: bool,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE harvest_job SET gather_finished = COALESCE(gather_finished, $2), \
         gather_complete = $3, last_action = $2 WHERE id = $1",
    )
    .bind(id)
    .bind(now())
    .bind(complete)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Ends a running job: `Finished`, with its end time.
pub(crate) async fn finish_job(conn: &mut AnyConnection, id: &str) -> sqlx::Result<bool> {
    let now = now();
    let done = sqlx::query(
        "UPDATE harvest_job SET status = $2, finished = $3, \
         gather_finished = COALESCE(gather_finished, $3), last_action = $3 \
         WHERE id = $1 AND status = $4",
    )
    .bind(id)
    .bind(status::FINISHED)
    .bind(&now)
    .bind(status::RUNNING)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Notes activity on a running job (what the job timeout is counted from).
pub(crate) async fn touch_job(conn: &mut AnyConnection, id: &str) -> sqlx::Result<()> {
    sqlx::query("UPDATE harvest_job SET last_action = $2 WHERE id = $1")
        .bind(id)
        .bind(now())
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Running jobs whose last activity is older than `before` (stuck: their worker chain died).
pub(crate) async fn stale_running_jobs(
    conn: &mut AnyConnection,
    before: &str,
) -> sqlx::Result<Vec<JobRow>> {
    let sql = format!(
        "SELECT {JOB_COLUMNS} FROM harvest_job WHERE status = 'Running' \
         AND COALESCE(last_action, created) < $1"
    );
    Ok(sqlx::query(&sql)
        .bind(before)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(job_row)
        .collect())
}

/// The newest other finished job of the source whose gather started, had no gather error
/// and no errored object: where an incremental run starts from.
pub(crate) async fn last_error_free_job(
    conn: &mut AnyConnection,
    source_id: &str,
    except: &str,
) -> sqlx::Result<Option<JobRow>> {
    let sql = format!(
        "SELECT {JOB_COLUMNS} FROM harvest_job j WHERE source_id = $1 AND id <> $2 \
         AND status = 'Finished' AND gather_started IS NOT NULL AND gather_complete = TRUE \
         AND NOT EXISTS (SELECT 1 FROM harvest_gather_error e WHERE e.harvest_job_id = j.id) \
         AND NOT EXISTS (SELECT 1 FROM harvest_object o WHERE o.harvest_job_id = j.id \
                         AND o.state = 'ERROR') \
         ORDER BY created DESC LIMIT 1"
    );
    Ok(sqlx::query(&sql)
        .bind(source_id)
        .bind(except)
        .fetch_optional(&mut *conn)
        .await?
        .as_ref()
        .map(job_row))
}
