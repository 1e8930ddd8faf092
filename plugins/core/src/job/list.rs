use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::Later;

use super::{job_dict, queues_param, QueueList};

action_params! {
    /// List enqueued background jobs.
    ///
    /// :param queues: queues to list jobs from; every queue of the site when not given
    /// :param limit: number to limit the list of jobs by (default `catalog.jobs.default_list_limit`, 200)
    /// :param ids_only: return only a list of job ids
    /// :rtype: list
    ///
    /// The list is in the order workers take the jobs: the left-most non-empty queue is
    /// emptied first.
    pub struct JobListParams {
        /// a list of queue names
        queues: Later<QueueList>,
        /// number to limit the list of jobs by
        limit: Option<i64>,
        /// return only the jobs' ids
        ids_only: bool = false,
    }
}

pub(crate) async fn job_list(ctx: &mut ActionContext, p: JobListParams) -> CkanResult<Value> {
    // `@validate(job_list_schema)`: the parameters are checked before the caller is.
    let queues = queues_param(&p.queues)?;
    ctx.check_access("job_list", &p.__extras).await?;
    let limit = p
        .limit
        .unwrap_or(ctx.config().catalog.jobs.default_list_limit);
    let names = if queues.is_empty() {
        q::job_queues(ctx.db().await?).await?
    } else {
        queues
    };
    let mut jobs: Vec<Value> = Vec::new();
    for name in &names {
        // CKAN slices each queue with `[:limit]`: a negative limit drops that many jobs from
        // its end.
        let take = if limit >= 0 {
            limit
        } else {
            q::count_queued_jobs(ctx.db().await?, name).await? + limit
        };
        for job in q::queued_jobs(ctx.db().await?, name, take).await? {
            jobs.push(if p.ids_only {
                json!(job.id)
            } else {
                job_dict(&job)
            });
        }
        if limit > 0 && jobs.len() as i64 > limit {
            jobs.truncate(limit as usize);
            break;
        }
    }
    Ok(Value::Array(jobs))
}
