use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::Later;

action_params! {
    /// Cancel a queued background job: remove it from its queue and delete it.
    ///
    /// :param id: the id of the background job
    ///
    /// A job already running is deleted too; its worker stops running it at its next
    /// heartbeat.
    pub struct JobCancelParams {
        /// the id of the background job (required; checked after the access check, as CKAN
        /// does)
        id: Later<String>,
    }
}

pub(crate) async fn job_cancel(ctx: &mut ActionContext, p: JobCancelParams) -> CkanResult<Value> {
    // CKAN checks the caller before the id.
    ctx.check_access("job_cancel", &p.to_params()).await?;
    let id = p.id.require()?;
    if !q::delete_job(ctx.db().await?, &id).await? {
        return Err(not_found(""));
    }
    tracing::info!(job = %id, "cancelled background job");
    Ok(Value::Null)
}
