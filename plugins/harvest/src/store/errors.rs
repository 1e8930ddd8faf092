//! `harvest_gather_error` and `harvest_object_error`: a job's gather errors and its objects'
//! errors.

use catalog_framework::store::RowExt;
use sqlx::any::AnyRow;
use sqlx::AnyConnection;

use super::values::now;

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
