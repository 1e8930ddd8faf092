use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::Later;

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
    pub struct JobShowParams {
        /// the id of the background job (required; checked after the access check, as CKAN
        /// does)
        id: Later<String>,
    }
}

pub(crate) async fn job_show(ctx: &mut ActionContext, p: JobShowParams) -> CkanResult<Value> {
    // CKAN checks the caller before the id.
    ctx.check_access("job_show", &p.to_params()).await?;
    let id = p.id.require()?;
    let job = q::job_by_id(ctx.db().await?, &id)
        .await?
        .ok_or_else(|| not_found(""))?;
    Ok(job_detail(&job))
}
