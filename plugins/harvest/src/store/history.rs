//! Forgetting a source's history: its jobs, objects and errors deleted together (never its
//! datasets).

use sqlx::AnyConnection;

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
