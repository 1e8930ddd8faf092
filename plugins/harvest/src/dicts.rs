//! The dicts the harvest actions answer with, in ckanext-harvest's shapes: jobs with `stats`
//! and error summaries, objects with their errors, sources as the table has them, a source's
//! `status`. Their timestamps are Python's `str(datetime)`: a space between date and time,
//! microseconds only when not zero.

use catalog_framework::prelude::*;
use sqlx::AnyConnection;

use crate::store::{self, report, JobRow, ObjectRow, SourceRow};

/// A stored timestamp as ckanext-harvest's dicts print it (`2024-05-01 10:00:00.123456`).
pub(crate) fn py_time(t: &Option<String>) -> Value {
    match t {
        None => Value::Null,
        Some(t) => {
            let t = t.replacen('T', " ", 1);
            let t = t.strip_suffix(".000000").unwrap_or(&t).to_string();
            json!(t)
        }
    }
}

/// A job's `stats`: counts by report status, `errored` being the objects with errors plus the
/// gather errors (ckanext-harvest's rule); objects not processed yet are left out (CKAN shows
/// them under a `"null"` key).
pub(crate) async fn job_stats(conn: &mut AnyConnection, job_id: &str) -> CkanResult<Value> {
    let mut stats = Map::new();
    for k in [
        report::ADDED,
        report::UPDATED,
        report::NOT_MODIFIED,
        report::ERRORED,
        report::DELETED,
    ] {
        stats.insert(k.into(), json!(0));
    }
    for (status, n) in store::report_counts(conn, job_id).await? {
        if let Some(s) = status {
            stats.insert(s, json!(n));
        }
    }
    let errored = store::errored_object_count(conn, job_id).await?;
    let gather = store::gather_error_count(conn, job_id).await?;
    if errored + gather > 0 {
        stats.insert(report::ERRORED.into(), json!(errored + gather));
    }
    Ok(Value::Object(stats))
}

/// `harvest_job_dictize`: the job's columns, `stats`, and (unless `summaries` is false, as in
/// `harvest_job_list`) the object and gather error summaries.
pub(crate) async fn job_dict(
    conn: &mut AnyConnection,
    job: &JobRow,
    summaries: bool,
) -> CkanResult<Value> {
    let mut d = json!({
        "id": job.id,
        "created": py_time(&Some(job.created.clone())),
        "gather_started": py_time(&job.gather_started),
        "gather_finished": py_time(&job.gather_finished),
        "finished": py_time(&job.finished),
        "source_id": job.source_id,
        "status": job.status,
    });
    let o = d.as_object_mut().expect("an object");
    o.insert("stats".into(), job_stats(conn, &job.id).await?);
    if summaries {
        for (key, gather) in [
            ("object_error_summary", false),
            ("gather_error_summary", true),
        ] {
            let summary: Vec<Value> = store::error_summary(conn, &job.id, gather)
                .await?
                .into_iter()
                .map(|(message, n)| json!({"message": message, "error_count": n}))
                .collect();
            o.insert(key.into(), Value::Array(summary));
        }
    }
    Ok(d)
}

/// `harvest_object_dictize`: the columns, `source`, `job`, `package` (when the dataset
/// exists), the object's errors and extras (none are kept: `{}`).
pub(crate) async fn object_dict(conn: &mut AnyConnection, o: &ObjectRow) -> CkanResult<Value> {
    let errors: Vec<Value> = store::object_errors(conn, &o.id)
        .await?
        .into_iter()
        .map(|e| {
            json!({
                "id": e.id,
                "harvest_object_id": e.harvest_object_id,
                "message": e.message,
                "stage": e.stage,
                "line": e.line,
                "created": py_time(&Some(e.created)),
            })
        })
        .collect();
    let package_exists = match &o.package_id {
        Some(p) => catalog_framework::store::package_by_ref(conn, p)
            .await?
            .is_some(),
        None => false,
    };
    let mut d = json!({
        "id": o.id,
        "guid": o.guid,
        "current": o.current,
        "gathered": py_time(&Some(o.gathered.clone())),
        "fetch_started": py_time(&o.fetch_started),
        "content": o.content,
        "fetch_finished": py_time(&o.fetch_finished),
        "import_started": py_time(&o.import_started),
        "import_finished": py_time(&o.import_finished),
        "state": o.state,
        "metadata_modified_date": py_time(&o.metadata_modified_date),
        "retry_times": o.retry_times,
        "harvest_job_id": o.harvest_job_id,
        "harvest_source_id": o.harvest_source_id,
        "package_id": o.package_id,
        "report_status": o.report_status,
        "source": o.harvest_source_id,
        "job": o.harvest_job_id,
        "errors": errors,
        "extras": {},
    });
    if package_exists {
        d["package"] = json!(o.package_id);
    }
    Ok(d)
}

/// A source's `status`: its job count, its newest job (with stats and summaries) and the
/// datasets it keeps.
pub(crate) async fn source_status(conn: &mut AnyConnection, source_id: &str) -> CkanResult<Value> {
    let job_count = store::job_count(conn, source_id).await?;
    let last = store::jobs(conn, Some(source_id), None, 1).await?;
    let last_job = match last.first() {
        Some(j) => job_dict(conn, j, true).await?,
        None => Value::Null,
    };
    let total = store::total_datasets(conn, source_id).await?;
    Ok(json!({"job_count": job_count, "last_job": last_job, "total_datasets": total}))
}

/// `harvest_source_dictize` (what `harvest_source_list` lists): the table's columns, the
/// older `status` block, and, when asked, the last job.
pub(crate) async fn source_table_dict(
    conn: &mut AnyConnection,
    s: &SourceRow,
    with_last_job: bool,
    show_api_key: bool,
) -> CkanResult<Value> {
    let jobs = store::jobs(conn, Some(&s.id), None, 1_000).await?;
    let status = if jobs.is_empty() {
        json!({"job_count": 0, "next_harvest": "", "last_harvest_request": "", "msg": "No jobs yet"})
    } else {
        let next = if jobs.iter().any(|j| j.status == store::status::NEW) {
            "Scheduled"
        } else {
            "Not yet scheduled"
        };
        let last = match jobs.iter().find(|j| j.status == store::status::FINISHED) {
            Some(j) => match py_time(&j.gather_finished) {
                Value::String(t) => t,
                _ => "None".to_string(),
            },
            None => "Not yet harvested".to_string(),
        };
        json!({"job_count": store::job_count(conn, &s.id).await?, "next_harvest": next,
               "last_harvest_request": last})
    };
    let mut d = json!({
        "id": s.id,
        "url": s.url,
        "title": s.title,
        "description": s.description,
        "config": crate::source::config_for(&s.config, s.api_key.as_deref(), show_api_key),
        "created": py_time(&Some(s.created.clone())),
        "type": s.source_type,
        "active": s.active,
        "user_id": s.user_id,
        "publisher_id": s.publisher_id,
        "frequency": s.frequency,
        "next_run": py_time(&s.next_run),
        "publisher_title": "",
        "status": status,
    });
    if with_last_job {
        d["last_job_status"] = match jobs.first() {
            Some(j) => job_dict(conn, j, true).await?,
            None => Value::Null,
        };
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_print_as_python_does() {
        assert_eq!(
            py_time(&Some("2024-05-01T10:00:00.123456".into())),
            json!("2024-05-01 10:00:00.123456")
        );
        assert_eq!(
            py_time(&Some("2024-05-01T10:00:00.000000".into())),
            json!("2024-05-01 10:00:00")
        );
        assert_eq!(py_time(&None), Value::Null);
    }
}
