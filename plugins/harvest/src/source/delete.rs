//! `harvest_source_delete`, `harvest_source_clear`, `harvest_source_job_history_clear`: the
//! organization's editors may delete a source (its dataset; the source becomes inactive),
//! purge what it harvested, or forget its jobs.

use catalog_framework::prelude::*;

use crate::run::{self, clear::purge_datasets};
use crate::store;

action_params! {
    /// Delete a harvest source (its dataset is deleted, the source stops running and its jobs
    /// that have not started are aborted). With `clear`, its harvested datasets are purged
    /// first (what the web page's "delete and clear" does in CKAN).
    ///
    /// :rtype: None
    pub struct HarvestSourceDeleteParams {
        /// the source's id or name
        id: String,
        /// also purge the datasets it harvested, and its jobs
        clear: bool = false,
    }
}

pub(crate) async fn harvest_source_delete(
    ctx: &mut ActionContext,
    p: HarvestSourceDeleteParams,
) -> CkanResult<Value> {
    let (pkg, _) = super::load(ctx, &p.id).await?;
    let mut auth = Params::new();
    auth.insert("id".into(), json!(pkg.id));
    ctx.check_access("harvest_source_delete", &auth).await?;
    if p.clear {
        clear(ctx, &pkg.id).await?;
    }
    ctx.call("package_delete", auth).await?;
    Ok(Value::Null)
}

action_params! {
    /// Clear a harvest source: purge every dataset it ever harvested, and its jobs, objects
    /// and errors. The source itself stays. A source with more than
    /// `catalog.harvest.clear_inline_max` datasets (1,000) is cleared by a background job (its
    /// datasets go a batch at a time).
    ///
    /// :rtype: dictionary with the source's `id`
    pub struct HarvestSourceClearParams {
        /// the source's id (or name)
        id: String,
    }
}

pub(crate) async fn harvest_source_clear(
    ctx: &mut ActionContext,
    p: HarvestSourceClearParams,
) -> CkanResult<Value> {
    let pkg = super::dataset_checked(ctx, &p.id, "harvest_source_clear").await?;
    clear(ctx, &pkg.id).await?;
    Ok(json!({"id": pkg.id}))
}

/// Purges the source's datasets, then its history (in the background for a big source).
async fn clear(ctx: &mut ActionContext, source_id: &str) -> CkanResult<()> {
    if store::active_job(ctx.db().await?, source_id)
        .await?
        .is_some_and(|j| j.status == store::status::RUNNING)
    {
        return Err(validation_message(
            "The source has a running job: abort it (harvest_job_abort) before clearing",
        ));
    }
    let ids = store::source_package_ids(ctx.db().await?, source_id).await?;
    // One request must not hold the store's writer for minutes: a big source is cleared by a
    // background job, a batch per transaction.
    if ids.len() > crate::settings(&ctx.app).clear_inline_max {
        ctx.enqueue_job(
            run::CLEAR_JOB,
            json!({"source_id": source_id}),
            JobOptions::queue(run::QUEUE).with_title(format!("Clear harvest source {source_id}")),
        )
        .await?;
        return Ok(());
    }
    purge_datasets(ctx, &ids).await?;
    store::clear_history(ctx.db().await?, source_id, false).await?;
    Ok(())
}

action_params! {
    /// Forget a harvest source's jobs, objects and errors, keeping its datasets. With
    /// `keep_current`, the objects of the datasets it keeps (and their jobs) stay, and so does
    /// a running job.
    ///
    /// :rtype: dictionary with the source's `id`
    pub struct HarvestSourceJobHistoryClearParams {
        /// the source's id (or name)
        id: String,
        /// keep what the source's current datasets need
        keep_current: bool = false,
    }
}

pub(crate) async fn harvest_source_job_history_clear(
    ctx: &mut ActionContext,
    p: HarvestSourceJobHistoryClearParams,
) -> CkanResult<Value> {
    let pkg = ctx
        .package_row(&p.id)
        .await?
        .filter(|r| r.dataset_type == super::SOURCE_TYPE)
        .ok_or_else(|| not_found(format!("Harvest source {} does not exist", p.id)))?;
    let mut auth = Params::new();
    auth.insert("id".into(), json!(pkg.id));
    ctx.check_access("harvest_source_job_history_clear", &auth)
        .await?;
    if !p.keep_current
        && store::active_job(ctx.db().await?, &pkg.id)
            .await?
            .is_some_and(|j| j.status == store::status::RUNNING)
    {
        return Err(validation_message(
            "The source has a running job: abort it (harvest_job_abort), or keep_current",
        ));
    }
    store::clear_history(ctx.db().await?, &pkg.id, p.keep_current).await?;
    Ok(json!({"id": pkg.id}))
}
