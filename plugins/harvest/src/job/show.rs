//! `harvest_job_show`, `harvest_job_list`, `harvest_job_report`: for those who may edit the
//! job's source.

use catalog_framework::prelude::*;

use crate::dicts;
use crate::store::{self, JobRow};

/// The job of an id, once the caller may see its source's jobs.
async fn readable_job(ctx: &mut ActionContext, id: &str, auth: &str) -> CkanResult<JobRow> {
    let job = store::job(ctx.db().await?, id)
        .await?
        .ok_or_else(|| not_found(""))?;
    let mut p = Params::new();
    p.insert("source_id".into(), json!(job.source_id));
    ctx.check_access(auth, &p).await?;
    Ok(job)
}

action_params! {
    /// Show a harvest job: its times, status, statistics and error summaries.
    ///
    /// :rtype: dictionary
    pub struct HarvestJobShowParams {
        /// the job's id
        id: String,
    }
}

pub(crate) async fn harvest_job_show(
    ctx: &mut ActionContext,
    p: HarvestJobShowParams,
) -> CkanResult<Value> {
    let job = readable_job(ctx, &p.id, "harvest_job_show").await?;
    dicts::job_dict(ctx.db().await?, &job, true).await
}

action_params! {
    /// List harvest jobs, newest first (statistics without error summaries). Only sysadmins
    /// may leave out `source_id`.
    ///
    /// :rtype: list of dictionaries
    pub struct HarvestJobListParams {
        /// the source's id (or name)
        source_id: Option<String>,
        /// only jobs of this status: New, Running, Finished or Aborted
        status: Option<String>,
        /// at most this many (default 1000)
        limit: Option<Positive> ,
    }
}

pub(crate) async fn harvest_job_list(
    ctx: &mut ActionContext,
    p: HarvestJobListParams,
) -> CkanResult<Value> {
    let source = match &p.source_id {
        Some(s) => Some(crate::source::dataset(ctx, s).await?.id),
        None => None,
    };
    let mut auth = Params::new();
    auth.insert(
        "source_id".into(),
        json!(source.clone().unwrap_or_default()),
    );
    ctx.check_access("harvest_job_list", &auth).await?;
    let limit = p.limit.map_or(1000, |l| l.0.min(10_000));
    let jobs = store::jobs(
        ctx.db().await?,
        source.as_deref(),
        p.status.as_deref(),
        limit,
    )
    .await?;
    let mut out = Vec::with_capacity(jobs.len());
    for j in &jobs {
        out.push(dicts::job_dict(ctx.db().await?, j, false).await?);
    }
    Ok(Value::Array(out))
}

action_params! {
    /// A harvest job's report: its gather errors (newest first) and, per object, the errors
    /// with the object's guid.
    ///
    /// :rtype: dictionary with `gather_errors` and `object_errors`
    pub struct HarvestJobReportParams {
        /// the job's id
        id: String,
    }
}

pub(crate) async fn harvest_job_report(
    ctx: &mut ActionContext,
    p: HarvestJobReportParams,
) -> CkanResult<Value> {
    let job = readable_job(ctx, &p.id, "harvest_job_report").await?;
    let gather: Vec<Value> = store::gather_errors(ctx.db().await?, &job.id)
        .await?
        .into_iter()
        .map(|m| json!({"message": m}))
        .collect();
    let mut objects = Map::new();
    for (e, guid) in store::job_object_errors(ctx.db().await?, &job.id, 10_000).await? {
        let entry = objects
            .entry(e.harvest_object_id.clone())
            .or_insert_with(|| json!({"guid": guid, "errors": []}));
        if let Some(list) = entry["errors"].as_array_mut() {
            list.push(json!({"message": e.message, "line": e.line, "type": e.stage}));
        }
    }
    Ok(json!({"gather_errors": gather, "object_errors": objects}))
}
