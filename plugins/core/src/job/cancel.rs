use catalog_framework::prelude::*;
use catalog_framework::store as q;

action_params! {
    /// Cancel a queued background job: remove it from its queue and delete it.
    ///
    /// :param id: the id of the background job
    ///
    /// A job already running is deleted too; its worker stops running it at its next
    /// heartbeat.
    pub struct JobCancelParams {}
}

pub async fn job_cancel(ctx: &mut ActionContext, p: JobCancelParams) -> CkanResult<Value> {
    let p = p.__extras;
    // CKAN checks the caller before the id.
    ctx.check_access("job_cancel", &p).await?;
    let id = req_str(&p, "id")?;
    if !q::delete_job(ctx.db().await?, &id).await? {
        return Err(not_found(""));
    }
    tracing::info!(job = %id, "cancelled background job");
    Ok(Value::Null)
}
