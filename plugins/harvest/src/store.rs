//! The harvest tables (`harvest_source`, `harvest_job`, `harvest_object` and the two error
//! tables): one function per query, rows as plain structs. Timestamps are written fixed-width
//! (`job_time`), so text order is time order on both stores.

use catalog_framework::store::Backend;
use catalog_framework::store::RowExt;
use catalog_framework::store::{job_now, job_time};
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::AnyConnection;

/// Now, as the harvest tables store it.
pub(crate) fn now() -> String {
    job_time(job_now())
}

/// Job statuses (ckanext-harvest's).
pub(crate) mod status {
    pub(crate) const NEW: &str = "New";
    pub(crate) const RUNNING: &str = "Running";
    pub(crate) const FINISHED: &str = "Finished";
    pub(crate) const ABORTED: &str = "Aborted";
}

/// Object states (ckanext-harvest's).
pub(crate) mod state {
    pub(crate) const WAITING: &str = "WAITING";
    pub(crate) const COMPLETE: &str = "COMPLETE";
    pub(crate) const ERROR: &str = "ERROR";
}

/// `report_status` values (ckanext-harvest's).
pub(crate) mod report {
    pub(crate) const ADDED: &str = "added";
    pub(crate) const UPDATED: &str = "updated";
    pub(crate) const NOT_MODIFIED: &str = "not modified";
    pub(crate) const DELETED: &str = "deleted";
    pub(crate) const ERRORED: &str = "errored";
}

// ---------------------------------------------------------------------------------------------
// Sources

/// One row of `harvest_source`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SourceRow {
    pub(crate) id: String,
    pub(crate) url: String,
    pub(crate) title: String,
    pub(crate) description: String,
    pub(crate) config: String,
    pub(crate) created: String,
    pub(crate) source_type: String,
    pub(crate) active: bool,
    pub(crate) user_id: String,
    pub(crate) publisher_id: String,
    pub(crate) frequency: String,
    pub(crate) next_run: Option<String>,
    pub(crate) api_key: Option<String>,
}

const SOURCE_COLUMNS: &str = "id, url, title, description, config, created, type, active, \
     user_id, publisher_id, frequency, next_run, api_key";

fn source_row(r: &AnyRow) -> SourceRow {
    SourceRow {
        id: r.s("id"),
        url: r.s("url"),
        title: r.s("title"),
        description: r.s("description"),
        config: r.s("config"),
        created: r.s("created"),
        source_type: r.s("type"),
        active: r.b("active"),
        user_id: r.s("user_id"),
        publisher_id: r.s("publisher_id"),
        frequency: r.s("frequency"),
        next_run: r.os("next_run"),
        api_key: r.os("api_key").filter(|k| !k.is_empty()),
    }
}

/// The source of this id.
pub(crate) async fn source(conn: &mut AnyConnection, id: &str) -> sqlx::Result<Option<SourceRow>> {
    let sql = format!("SELECT {SOURCE_COLUMNS} FROM harvest_source WHERE id = $1");
    Ok(sqlx::query(&sql)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
        .as_ref()
        .map(source_row))
}

/// The newest source whose url is exactly this one (`harvest_source_show?url=`).
pub(crate) async fn source_by_url(
    conn: &mut AnyConnection,
    url: &str,
) -> sqlx::Result<Option<SourceRow>> {
    let sql = format!(
        "SELECT {SOURCE_COLUMNS} FROM harvest_source WHERE url = $1 ORDER BY created DESC LIMIT 1"
    );
    Ok(sqlx::query(&sql)
        .bind(url)
        .fetch_optional(&mut *conn)
        .await?
        .as_ref()
        .map(source_row))
}

/// Every source, newest first, at most `limit`; only active ones when asked, only one
/// organization's when given.
pub(crate) async fn sources(
    conn: &mut AnyConnection,
    only_active: bool,
    organization: Option<&str>,
    limit: i64,
) -> sqlx::Result<Vec<SourceRow>> {
    let sql = format!(
        "SELECT {SOURCE_COLUMNS} FROM harvest_source WHERE ($1 = FALSE OR active = TRUE) \
         AND ($2 = '' OR publisher_id = $2) ORDER BY created DESC LIMIT $3"
    );
    Ok(sqlx::query(&sql)
        .bind(only_active)
        .bind(organization.unwrap_or(""))
        .bind(limit)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(source_row)
        .collect())
}

/// Writes a source row from its dataset (insert or replace what the dataset carries); the
/// api key and the schedule are kept.
pub(crate) async fn save_source(conn: &mut AnyConnection, s: &SourceRow) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO harvest_source (id, url, title, description, config, created, type, active, \
         user_id, publisher_id, frequency) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
         ON CONFLICT (id) DO UPDATE SET url = excluded.url, title = excluded.title, \
         config = excluded.config, type = excluded.type, active = excluded.active, \
         publisher_id = excluded.publisher_id, frequency = excluded.frequency",
    )
    .bind(&s.id)
    .bind(&s.url)
    .bind(&s.title)
    .bind(&s.description)
    .bind(&s.config)
    .bind(&s.created)
    .bind(&s.source_type)
    .bind(s.active)
    .bind(&s.user_id)
    .bind(&s.publisher_id)
    .bind(&s.frequency)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Sets (or, with `None`, clears) the source's api key, which only the source row keeps. The
/// row may not exist yet (the dataset's events write it when the call commits): then a row is
/// started with the key, and the dataset's values complete it.
pub(crate) async fn set_api_key(
    conn: &mut AnyConnection,
    id: &str,
    url: &str,
    source_type: &str,
    key: Option<&str>,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO harvest_source (id, url, created, type, api_key) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (id) DO UPDATE SET api_key = excluded.api_key",
    )
    .bind(id)
    .bind(url)
    .bind(now())
    .bind(source_type)
    .bind(key)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Marks the source inactive (its dataset was deleted) and aborts its jobs that have not
/// started, as ckanext-harvest does.
pub(crate) async fn deactivate_source(conn: &mut AnyConnection, id: &str) -> sqlx::Result<()> {
    sqlx::query("UPDATE harvest_source SET active = FALSE WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("UPDATE harvest_job SET status = $2 WHERE source_id = $1 AND status = $3")
        .bind(id)
        .bind(status::ABORTED)
        .bind(status::NEW)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Removes the source row itself (its dataset was purged).
pub(crate) async fn delete_source(conn: &mut AnyConnection, id: &str) -> sqlx::Result<()> {
    sqlx::query("DELETE FROM harvest_source WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Active, scheduled sources whose next run is due at `now`.
pub(crate) async fn due_sources(
    conn: &mut AnyConnection,
    now: &str,
) -> sqlx::Result<Vec<SourceRow>> {
    let sql = format!(
        "SELECT {SOURCE_COLUMNS} FROM harvest_source WHERE active = TRUE \
         AND frequency <> 'MANUAL' AND (next_run IS NULL OR next_run <= $1) ORDER BY created"
    );
    Ok(sqlx::query(&sql)
        .bind(now)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(source_row)
        .collect())
}

/// Moves a source's next run on, only if it still is `seen` (another node's scheduler may
/// have moved it meanwhile): true when this call did.
pub(crate) async fn advance_next_run(
    conn: &mut AnyConnection,
    id: &str,
    seen: Option<&str>,
    next: &str,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE harvest_source SET next_run = $2 WHERE id = $1 \
         AND ((next_run IS NULL AND $3 = '') OR next_run = $3)",
    )
    .bind(id)
    .bind(next)
    .bind(seen.unwrap_or(""))
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Every source's url and config but `except`'s: the url-uniqueness check compares them
/// normalised. Deleted sources count, as in ckanext-harvest.
pub(crate) async fn source_urls(
    conn: &mut AnyConnection,
    except: Option<&str>,
) -> sqlx::Result<Vec<(String, String)>> {
    let rows = sqlx::query("SELECT url, config FROM harvest_source WHERE id <> $1")
        .bind(except.unwrap_or(""))
        .fetch_all(&mut *conn)
        .await?;
    Ok(rows.iter().map(|r| (r.s("url"), r.s("config"))).collect())
}

// ---------------------------------------------------------------------------------------------
// Jobs

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

// ---------------------------------------------------------------------------------------------
// Objects

/// One row of `harvest_object`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ObjectRow {
    pub(crate) id: String,
    pub(crate) guid: String,
    pub(crate) current: bool,
    pub(crate) gathered: String,
    pub(crate) fetch_started: Option<String>,
    pub(crate) content: Option<String>,
    pub(crate) fetch_finished: Option<String>,
    pub(crate) import_started: Option<String>,
    pub(crate) import_finished: Option<String>,
    pub(crate) state: String,
    pub(crate) metadata_modified_date: Option<String>,
    pub(crate) retry_times: i64,
    pub(crate) harvest_job_id: String,
    pub(crate) harvest_source_id: String,
    pub(crate) package_id: Option<String>,
    pub(crate) report_status: Option<String>,
    pub(crate) content_hash: Option<String>,
}

const OBJECT_COLUMNS: &str = "id, guid, current, gathered, fetch_started, content, \
     fetch_finished, import_started, import_finished, state, metadata_modified_date, \
     retry_times, harvest_job_id, harvest_source_id, package_id, report_status, content_hash";

fn object_row(r: &AnyRow) -> ObjectRow {
    ObjectRow {
        id: r.s("id"),
        guid: r.s("guid"),
        current: r.b("current"),
        gathered: r.s("gathered"),
        fetch_started: r.os("fetch_started"),
        content: r.os("content"),
        fetch_finished: r.os("fetch_finished"),
        import_started: r.os("import_started"),
        import_finished: r.os("import_finished"),
        state: r.s("state"),
        metadata_modified_date: r.os("metadata_modified_date"),
        retry_times: r.i("retry_times"),
        harvest_job_id: r.s("harvest_job_id"),
        harvest_source_id: r.s("harvest_source_id"),
        package_id: r.os("package_id"),
        report_status: r.os("report_status"),
        content_hash: r.os("content_hash"),
    }
}

/// The object of this id.
pub(crate) async fn object(conn: &mut AnyConnection, id: &str) -> sqlx::Result<Option<ObjectRow>> {
    let sql = format!("SELECT {OBJECT_COLUMNS} FROM harvest_object WHERE id = $1");
    Ok(sqlx::query(&sql)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
        .as_ref()
        .map(object_row))
}

/// The newest current object of a dataset (`harvest_object_show?dataset_id=`).
pub(crate) async fn current_object_of_package(
    conn: &mut AnyConnection,
    package_id: &str,
) -> sqlx::Result<Option<ObjectRow>> {
    let sql = format!(
        "SELECT {OBJECT_COLUMNS} FROM harvest_object WHERE package_id = $1 AND current = TRUE \
         ORDER BY import_finished DESC LIMIT 1"
    );
    Ok(sqlx::query(&sql)
        .bind(package_id)
        .fetch_optional(&mut *conn)
        .await?
        .as_ref()
        .map(object_row))
}

/// The objects of a job with these guids.
pub(crate) async fn job_objects_by_guid(
    conn: &mut AnyConnection,
    job_id: &str,
    guids: &[String],
) -> sqlx::Result<Vec<ObjectRow>> {
    let mut out = Vec::new();
    for chunk in guids.chunks(500) {
        let marks = catalog_framework::store::placeholders_from(2, chunk.len());
        let sql = format!(
            "SELECT {OBJECT_COLUMNS} FROM harvest_object WHERE harvest_job_id = $1 \
             AND guid IN ({marks})"
        );
        let mut q = sqlx::query(&sql).bind(job_id);
        for g in chunk {
            q = q.bind(g);
        }
        out.extend(q.fetch_all(&mut *conn).await?.iter().map(object_row));
    }
    Ok(out)
}

/// The current objects of a source with these guids.
pub(crate) async fn current_objects_by_guid(
    conn: &mut AnyConnection,
    source_id: &str,
    guids: &[String],
) -> sqlx::Result<Vec<ObjectRow>> {
    let mut out = Vec::new();
    for chunk in guids.chunks(500) {
        let marks = catalog_framework::store::placeholders_from(2, chunk.len());
        let sql = format!(
            "SELECT {OBJECT_COLUMNS} FROM harvest_object WHERE harvest_source_id = $1 \
             AND current = TRUE AND guid IN ({marks})"
        );
        let mut q = sqlx::query(&sql).bind(source_id);
        for g in chunk {
            q = q.bind(g);
        }
        out.extend(q.fetch_all(&mut *conn).await?.iter().map(object_row));
    }
    Ok(out)
}

/// A new object of a job (state `WAITING`) unless the job already has one of this guid (a
/// page read again after a crash): answers whether it was inserted.
pub(crate) async fn insert_object(conn: &mut AnyConnection, o: &ObjectRow) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "INSERT INTO harvest_object (id, guid, current, gathered, content, state, \
         harvest_job_id, harvest_source_id, package_id, report_status, content_hash, \
         metadata_modified_date) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
         ON CONFLICT (harvest_job_id, guid) DO NOTHING",
    )
    .bind(&o.id)
    .bind(&o.guid)
    .bind(o.current)
    .bind(&o.gathered)
    .bind(&o.content)
    .bind(&o.state)
    .bind(&o.harvest_job_id)
    .bind(&o.harvest_source_id)
    .bind(&o.package_id)
    .bind(&o.report_status)
    .bind(&o.content_hash)
    .bind(&o.metadata_modified_date)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Makes `object_id` the current object of its source and guid, for `package_id`, with its
/// import result (the previous current object of that guid stops being current first).
pub(crate) async fn complete_import(
    conn: &mut AnyConnection,
    object_id: &str,
    source_id: &str,
    guid: &str,
    package_id: &str,
    report_status: &str,
    started: &str,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE harvest_object SET current = FALSE WHERE harvest_source_id = $1 AND guid = $2 \
         AND current = TRUE AND id <> $3",
    )
    .bind(source_id)
    .bind(guid)
    .bind(object_id)
    .execute(&mut *conn)
    .await?;
    let now = now();
    sqlx::query(
        "UPDATE harvest_object SET current = TRUE, package_id = $2, report_status = $3, \
         state = $4, fetch_started = COALESCE(fetch_started, $5), \
         fetch_finished = COALESCE(fetch_finished, $5), import_started = $5, \
         import_finished = $6 WHERE id = $1",
    )
    .bind(object_id)
    .bind(package_id)
    .bind(report_status)
    .bind(state::COMPLETE)
    .bind(started)
    .bind(&now)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Ends an object without making it current: `not modified`, `deleted` or `errored`.
pub(crate) async fn close_object(
    conn: &mut AnyConnection,
    object_id: &str,
    object_state: &str,
    report_status: &str,
) -> sqlx::Result<()> {
    let now = now();
    sqlx::query(
        "UPDATE harvest_object SET state = $2, report_status = $3, \
         import_started = COALESCE(import_started, $4), import_finished = $4 WHERE id = $1",
    )
    .bind(object_id)
    .bind(object_state)
    .bind(report_status)
    .bind(&now)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Ends the current objects of a source and guid (the dataset was deleted at the source).
pub(crate) async fn uncurrent(
    conn: &mut AnyConnection,
    source_id: &str,
    guid: &str,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE harvest_object SET current = FALSE WHERE harvest_source_id = $1 AND guid = $2 \
         AND current = TRUE",
    )
    .bind(source_id)
    .bind(guid)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The objects of a job still waiting (not imported, not errored), aborted with the job.
pub(crate) async fn error_unfinished_objects(
    conn: &mut AnyConnection,
    job_id: &str,
) -> sqlx::Result<u64> {
    let done = sqlx::query(
        "UPDATE harvest_object SET state = 'ERROR' WHERE harvest_job_id = $1 \
         AND state NOT IN ('COMPLETE', 'ERROR')",
    )
    .bind(job_id)
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected())
}

/// The current objects of a source whose guid no object of `job_id` has: what the source no
/// longer lists. At most `limit`.
pub(crate) async fn missing_current(
    conn: &mut AnyConnection,
    source_id: &str,
    job_id: &str,
    limit: i64,
) -> sqlx::Result<Vec<ObjectRow>> {
    let sql = format!(
        "SELECT {OBJECT_COLUMNS} FROM harvest_object o WHERE harvest_source_id = $1 \
         AND current = TRUE AND NOT EXISTS (SELECT 1 FROM harvest_object n \
         WHERE n.harvest_job_id = $2 AND n.guid = o.guid) ORDER BY guid LIMIT $3"
    );
    Ok(sqlx::query(&sql)
        .bind(source_id)
        .bind(job_id)
        .bind(limit)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(object_row)
        .collect())
}

/// How many current objects a source has (the datasets it keeps).
pub(crate) async fn current_count(conn: &mut AnyConnection, source_id: &str) -> sqlx::Result<i64> {
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM harvest_object WHERE harvest_source_id = $1 AND current = TRUE",
    )
    .bind(source_id)
    .fetch_one(&mut *conn)
    .await?;
    Ok(n)
}

/// The guids of a source's current objects.
pub(crate) async fn current_guids(
    conn: &mut AnyConnection,
    source_id: &str,
) -> sqlx::Result<Vec<String>> {
    sqlx::query_scalar(
        "SELECT guid FROM harvest_object WHERE harvest_source_id = $1 AND current = TRUE",
    )
    .bind(source_id)
    .fetch_all(&mut *conn)
    .await
}

/// The ids of a source's objects (only current ones when asked), at most `limit`.
pub(crate) async fn object_ids(
    conn: &mut AnyConnection,
    source_id: &str,
    only_current: bool,
    limit: i64,
) -> sqlx::Result<Vec<String>> {
    sqlx::query_scalar(
        "SELECT id FROM harvest_object WHERE harvest_source_id = $1 \
         AND ($2 = FALSE OR current = TRUE) ORDER BY gathered, id LIMIT $3",
    )
    .bind(source_id)
    .bind(only_current)
    .bind(limit)
    .fetch_all(&mut *conn)
    .await
}

/// Active, public datasets a source keeps (`total_datasets` of its status).
pub(crate) async fn total_datasets(conn: &mut AnyConnection, source_id: &str) -> sqlx::Result<i64> {
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(DISTINCT o.package_id) FROM harvest_object o JOIN package p \
         ON p.id = o.package_id WHERE o.harvest_source_id = $1 AND o.current = TRUE \
         AND p.state = 'active' AND p.private = FALSE",
    )
    .bind(source_id)
    .fetch_one(&mut *conn)
    .await?;
    Ok(n)
}

/// Every dataset id any object of a source ever pointed at (what `harvest_source_clear` purges).
pub(crate) async fn source_package_ids(
    conn: &mut AnyConnection,
    source_id: &str,
) -> sqlx::Result<Vec<String>> {
    sqlx::query_scalar(
        "SELECT DISTINCT package_id FROM harvest_object WHERE harvest_source_id = $1 \
         AND package_id IS NOT NULL",
    )
    .bind(source_id)
    .fetch_all(&mut *conn)
    .await
}

/// Counts of a job's objects by `report_status` (`None` for objects not processed yet).
pub(crate) async fn report_counts(
    conn: &mut AnyConnection,
    job_id: &str,
) -> sqlx::Result<Vec<(Option<String>, i64)>> {
    let rows = sqlx::query(
        "SELECT report_status, COUNT(*) AS n FROM harvest_object WHERE harvest_job_id = $1 \
         GROUP BY report_status",
    )
    .bind(job_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .iter()
        .map(|r| (r.os("report_status"), r.i("n")))
        .collect())
}

/// Objects of a job with at least one error.
pub(crate) async fn errored_object_count(
    conn: &mut AnyConnection,
    job_id: &str,
) -> sqlx::Result<i64> {
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(DISTINCT e.harvest_object_id) FROM harvest_object_error e \
         JOIN harvest_object o ON o.id = e.harvest_object_id WHERE o.harvest_job_id = $1",
    )
    .bind(job_id)
    .fetch_one(&mut *conn)
    .await?;
    Ok(n)
}

// ---------------------------------------------------------------------------------------------
// Errors

/// Records a gather error of a job.
pub(crate) async fn add_gather_error(
    conn: &mut AnyConnection,
    job_id: &str,
    message: &str,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO harvest_gather_error (id, harvest_job_id, message, created) \
         VALUES ($1, $2, $3, $4)",
    )
    .bind(uuid::Uuid::new_v4().to_string())
    .bind(job_id)
    .bind(truncate(message))
    .bind(now())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Records an error of an object, at a stage (`Fetch`, `Import`).
pub(crate) async fn add_object_error(
    conn: &mut AnyConnection,
    object_id: &str,
    message: &str,
    stage: &str,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO harvest_object_error (id, harvest_object_id, message, stage, created) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(uuid::Uuid::new_v4().to_string())
    .bind(object_id)
    .bind(truncate(message))
    .bind(stage)
    .bind(now())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Error messages are kept at a bounded length (a harvester may quote a whole document).
fn truncate(message: &str) -> String {
    const MAX: usize = 4000;
    if message.len() <= MAX {
        return message.to_string();
    }
    let mut end = MAX;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &message[..end])
}

/// A job's gather errors, newest first.
pub(crate) async fn gather_errors(
    conn: &mut AnyConnection,
    job_id: &str,
) -> sqlx::Result<Vec<String>> {
    sqlx::query_scalar(
        "SELECT message FROM harvest_gather_error WHERE harvest_job_id = $1 \
         ORDER BY created DESC LIMIT 1000",
    )
    .bind(job_id)
    .fetch_all(&mut *conn)
    .await
}

/// How many gather errors a job has.
pub(crate) async fn gather_error_count(
    conn: &mut AnyConnection,
    job_id: &str,
) -> sqlx::Result<i64> {
    let n: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM harvest_gather_error WHERE harvest_job_id = $1")
            .bind(job_id)
            .fetch_one(&mut *conn)
            .await?;
    Ok(n)
}

/// The most frequent messages of a job's object errors (or gather errors), at most 20.
pub(crate) async fn error_summary(
    conn: &mut AnyConnection,
    job_id: &str,
    gather: bool,
) -> sqlx::Result<Vec<(String, i64)>> {
    let sql = if gather {
        "SELECT message, COUNT(*) AS n FROM harvest_gather_error WHERE harvest_job_id = $1 \
         GROUP BY message ORDER BY n DESC, message LIMIT 20"
    } else {
        "SELECT e.message, COUNT(*) AS n FROM harvest_object_error e JOIN harvest_object o \
         ON o.id = e.harvest_object_id WHERE o.harvest_job_id = $1 \
         GROUP BY e.message ORDER BY n DESC, e.message LIMIT 20"
    };
    let rows = sqlx::query(sql).bind(job_id).fetch_all(&mut *conn).await?;
    Ok(rows.iter().map(|r| (r.s("message"), r.i("n"))).collect())
}

/// One object error as `harvest_object_show` and the job report list them.
#[derive(Debug, Clone)]
pub(crate) struct ObjectErrorRow {
    pub(crate) id: String,
    pub(crate) harvest_object_id: String,
    pub(crate) message: String,
    pub(crate) stage: String,
    pub(crate) line: Option<i64>,
    pub(crate) created: String,
}

fn object_error_row(r: &AnyRow) -> ObjectErrorRow {
    ObjectErrorRow {
        id: r.s("id"),
        harvest_object_id: r.s("harvest_object_id"),
        message: r.s("message"),
        stage: r.s("stage"),
        line: r.oi("line"),
        created: r.s("created"),
    }
}

/// The errors of one object, oldest first.
pub(crate) async fn object_errors(
    conn: &mut AnyConnection,
    object_id: &str,
) -> sqlx::Result<Vec<ObjectErrorRow>> {
    Ok(sqlx::query(
        "SELECT id, harvest_object_id, message, stage, line, created FROM harvest_object_error \
         WHERE harvest_object_id = $1 ORDER BY created",
    )
    .bind(object_id)
    .fetch_all(&mut *conn)
    .await?
    .iter()
    .map(object_error_row)
    .collect())
}

/// A job's object errors with their object's guid, at most `limit`.
pub(crate) async fn job_object_errors(
    conn: &mut AnyConnection,
    job_id: &str,
    limit: i64,
) -> sqlx::Result<Vec<(ObjectErrorRow, String)>> {
    let rows = sqlx::query(
        "SELECT e.id, e.harvest_object_id, e.message, e.stage, e.line, e.created, o.guid \
         FROM harvest_object_error e JOIN harvest_object o ON o.id = e.harvest_object_id \
         WHERE o.harvest_job_id = $1 ORDER BY e.created LIMIT $2",
    )
    .bind(job_id)
    .bind(limit)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .iter()
        .map(|r| (object_error_row(r), r.s("guid")))
        .collect())
}

// ---------------------------------------------------------------------------------------------
// Clearing

/// Deletes a source's jobs, objects and errors (not its datasets): `keep_current` keeps the
/// current objects, and the jobs they belong to and running jobs.
pub(crate) async fn clear_history(
    conn: &mut AnyConnection,
    source_id: &str,
    keep_current: bool,
) -> sqlx::Result<()> {
    let keep = if keep_current {
        " AND current = FALSE AND harvest_job_id NOT IN (SELECT id FROM harvest_job \
          WHERE source_id = $1 AND status IN ('New', 'Running')) AND harvest_job_id NOT IN \
          (SELECT harvest_job_id FROM harvest_object WHERE harvest_source_id = $1 AND current = TRUE)"
    } else {
        ""
    };
    let job_keep = if keep_current {
        " AND status NOT IN ('New', 'Running') AND id NOT IN \
          (SELECT harvest_job_id FROM harvest_object WHERE harvest_source_id = $1)"
    } else {
        ""
    };
    for sql in [
        format!(
            "DELETE FROM harvest_object_error WHERE harvest_object_id IN \
             (SELECT id FROM harvest_object WHERE harvest_source_id = $1{keep})"
        ),
        format!("DELETE FROM harvest_object WHERE harvest_source_id = $1{keep}"),
        format!(
            "DELETE FROM harvest_gather_error WHERE harvest_job_id IN \
             (SELECT id FROM harvest_job WHERE source_id = $1{job_keep})"
        ),
        format!("DELETE FROM harvest_job WHERE source_id = $1{job_keep}"),
    ] {
        sqlx::query(&sql)
            .bind(source_id)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Deletes the finished jobs of a source (every source when `None`) that ended before
/// `before`, with their objects and errors, keeping every job that has a current object.
pub(crate) async fn purge_history(
    conn: &mut AnyConnection,
    source_id: Option<&str>,
    before: &str,
) -> sqlx::Result<u64> {
    let jobs = "SELECT id FROM harvest_job j WHERE ($1 = '' OR source_id = $1) \
         AND status IN ('Finished', 'Aborted') AND COALESCE(finished, created) < $2 \
         AND NOT EXISTS (SELECT 1 FROM harvest_object o WHERE o.harvest_job_id = j.id \
         AND o.current = TRUE)";
    let ids: Vec<String> = sqlx::query_scalar(jobs)
        .bind(source_id.unwrap_or(""))
        .bind(before)
        .fetch_all(&mut *conn)
        .await?;
    for id in &ids {
        for sql in [
            "DELETE FROM harvest_object_error WHERE harvest_object_id IN \
             (SELECT id FROM harvest_object WHERE harvest_job_id = $1)",
            "DELETE FROM harvest_object WHERE harvest_job_id = $1",
            "DELETE FROM harvest_gather_error WHERE harvest_job_id = $1",
            "DELETE FROM harvest_job WHERE id = $1",
        ] {
            sqlx::query(sql).bind(id).execute(&mut *conn).await?;
        }
    }
    Ok(ids.len() as u64)
}
