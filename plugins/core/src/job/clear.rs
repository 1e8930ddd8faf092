use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::Later;

use super::{queues_param, QueueList};

action_params! {
    /// Clear background job queues: delete their queued jobs. Jobs that are already running
    /// are not affected.
    ///
    /// :param queues: the queues to clear; every queue of the site when not given
    /// :returns: the cleared queues
    /// :rtype: list
    pub struct JobClearParams {
        /// a list of queue names
        queues: Later<QueueList>,
    }
}

pub(crate) async fn job_clear(ctx: &mut ActionContext, p: JobClearParams) -> CkanResult<Value> {
    // `@validate(job_clear_schema)`: the parameters are checked before the caller is.
    let queues = queues_param(&p.queues)?;
    ctx.check_access("job_clear", &p.__extras).await?;
    let names = if queues.is_empty() {
        q::job_queues(ctx.db().await?).await?
    } else {
        queues
    };
    for name in &names {
        let n = q::clear_queued_jobs(ctx.db().await?, name).await?;
        tracing::info!(queue = %name, jobs = n, "cleared background job queue");
    }
    Ok(json!(names))
}
