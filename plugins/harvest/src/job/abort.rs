//! `harvest_job_abort`: stop a job (sysadmins only). As ckanext-harvest, the job becomes
//! `Finished` and its unfinished objects `ERROR`; its queued pages then do nothing, and the
//! run deletes nothing.

use catalog_framework::prelude::*;

use crate::dicts;
use crate::store::{self, status};

action_params! {
    /// Abort a harvest job: by its id, or a source's newest job by the source's id or name.
    ///
    /// :rtype: the job dict
    pub struct HarvestJobAbortParams {
        /// the job's id, or a source's id or name
        id: Option<String>,
        /// a source's id or name
        source_id: Option<String>,
    }
}

pub(crate) async fn harvest_job_abort(
    ctx: &mut ActionContext,
    p: HarvestJobAbortParams,
) -> CkanResult<Value> {
    ctx.check_access("harvest_job_abort", &p.__extras).await?;
    let Some(key) = p.source_id.clone().or(p.id.clone()) else {
        return Err(validation().field("id", "Missing value").build());
    };
    let source = ctx
        .package_row(&key)
        .await?
        .filter(|r| r.dataset_type == crate::source::SOURCE_TYPE);
    let job = match source {
        Some(s) => store::jobs(ctx.db().await?, Some(&s.id), None, 1)
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| not_found("Error: source has no jobs"))?,
        None if p.source_id.is_some() => return Err(not_found("Harvest source not found")),
        None => store::job(ctx.db().await?, &key)
            .await?
            .ok_or_else(|| not_found(""))?,
    };
    if job.status != status::FINISHED {
        store::set_job_status(ctx.db().await?, &job.id, status::FINISHED).await?;
        store::mark_gather_finished(ctx.db().await?, &job.id, false).await?;
        store::error_unfinished_objects(ctx.db().await?, &job.id).await?;
    }
    let job = store::job(ctx.db().await?, &job.id)
        .await?
        .ok_or_else(|| not_found(""))?;
    dicts::job_dict(ctx.db().await?, &job, true).await
}
