use catalog_framework::prelude::*;
use catalog_framework::store as q;

use super::job_detail;

action_params! {
    /// Show details for a background job.
    ///
    /// :param id: the id of the background job
    /// :rtype: dict
    ///
    /// Besides CKAN's `id`, `title`, `created` and `queue`: `kind`, `state` (`queued`,
    /// `running`, `finished`, `failed`), `attempts`, `max_attempts`, `run_after`, `started`,
    /// `finished`, `error` (the last attempt's) and `result`.
    pub struct JobShowParams {}
}

pub async fn job_show(ctx: &mut ActionContext, p: JobShowParams) -> CkanResult<Value> {
    let p = p.__extras;
    // CKAN checks the caller before the id.
    ctx.check_access("job_show", &p).await?;
    let id = req_str(&p, "id")?;
    let job = q::job_by_id(ctx.db().await?, &id)
        .await?
        .ok_or_else(|| not_found(""))?;
    Ok(job_detail(&job))
}
