//! `harvest_object`: one row per record of a job; the current object of a source and guid
//! says which dataset it is.

use catalog_framework::store::{subquery, RowExt};
use sqlx::any::AnyRow;
use sqlx::AnyConnection;

use super::values::{now, state};

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
    let sql = format!(
        "SELECT COUNT(DISTINCT package_id) FROM harvest_object WHERE harvest_source_id = $1 \
         AND current = TRUE AND package_id IN ({})",
        subquery::PUBLIC_ACTIVE_PACKAGES
    );
    let n: i64 = sqlx::query_scalar(&sql)
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
