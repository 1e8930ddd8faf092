//! `harvest_job_create`, `harvest_send_job_to_gather_queue`, `harvest_job_create_all` and
//! `harvest_jobs_run` (the scheduler's step, which `serve` also runs on its own).

use catalog_framework::prelude::*;

use crate::dicts;
use crate::store::{self, status, SourceRow};

action_params! {
    /// Create a harvest job for a source and, unless `run` is false, start it (its first page
    /// is queued for the background workers). A source has at most one job that is new or
    /// running.
    ///
    /// :rtype: the job dict
    pub struct HarvestJobCreateParams {
        /// the source's id (or name)
        source_id: String,
        /// start the job now (default true); false leaves it `New`
        run: Value = json!(true),
        /// write every record, even those whose content has not changed
        force_all: bool = false,
        /// delete what the source no longer has even beyond `catalog.harvest.max_delete_share`
        force: bool = false,
    }
}

pub(crate) async fn harvest_job_create(
    ctx: &mut ActionContext,
    p: HarvestJobCreateParams,
) -> CkanResult<Value> {
    let pkg = crate::source::dataset_checked(ctx, &p.source_id, "harvest_job_create").await?;
    let source = store::source(ctx.db().await?, &pkg.id)
        .await?
        .ok_or_else(|| not_found(format!("Harvest source {} does not exist", p.source_id)))?;
    // ckanext-harvest: a falsy JSON value turns `run` off (the string "false" does not).
    let run = !matches!(&p.run, Value::Bool(false) | Value::Null)
        && p.run != json!(0)
        && p.run != json!("");
    let job = create_job(ctx, &source, &pkg.name, run, p.force_all, p.force).await?;
    dicts::job_dict(ctx.db().await?, &job, true).await
}

/// Creates (and with `run`, starts) a job of a source, with ckanext-harvest's refusals.
pub(crate) async fn create_job(
    ctx: &mut ActionContext,
    source: &SourceRow,
    source_name: &str,
    run: bool,
    force_all: bool,
    force_delete: bool,
) -> CkanResult<store::JobRow> {
    if !source.active {
        return Err(validation_message(
            "Can not create jobs on inactive sources",
        ));
    }
    if store::active_job(ctx.db().await?, &source.id)
        .await?
        .is_some()
    {
        return Err(validation_message(
            "There already is an unrun job for this source",
        ));
    }
    ctx.begin_write().await;
    let id = catalog_framework::store::new_id();
    let job = store::insert_job(
        ctx.db().await?,
        &id,
        &source.id,
        run,
        force_all,
        force_delete,
    )
    .await?;
    if run {
        start(ctx, source, source_name, &id).await?;
    }
    Ok(job)
}

async fn start(
    ctx: &mut ActionContext,
    source: &SourceRow,
    source_name: &str,
    job_id: &str,
) -> CkanResult<()> {
    let owner = ctx.package_row(&source.id).await?.and_then(|p| p.owner_org);
    let s = crate::source::harvester_source(source, owner);
    crate::run::start(ctx, job_id, &s, &source.source_type, source_name).await
}

action_params! {
    /// Start a job that is `New` (one created with `run` false).
    ///
    /// :rtype: the job dict
    pub struct HarvestSendJobToGatherQueueParams {
        /// the job's id
        id: String,
    }
}

pub(crate) async fn harvest_send_job_to_gather_queue(
    ctx: &mut ActionContext,
    p: HarvestSendJobToGatherQueueParams,
) -> CkanResult<Value> {
    let job = store::job(ctx.db().await?, &p.id)
        .await?
        .ok_or_else(|| not_found(""))?;
    let mut auth = Params::new();
    auth.insert("source_id".into(), json!(job.source_id));
    ctx.check_access("harvest_send_job_to_gather_queue", &auth)
        .await?;
    let source = store::source(ctx.db().await?, &job.source_id)
        .await?
        .ok_or_else(|| not_found("Harvest source not found"))?;
    if !source.active {
        return Err(validation_message("Source is not active"));
    }
    if job.status != status::NEW {
        return Err(validation_message(format!(
            "The job is {}, not New",
            job.status
        )));
    }
    ctx.begin_write().await;
    store::set_job_status(ctx.db().await?, &job.id, status::RUNNING).await?;
    let name = ctx
        .package_row(&source.id)
        .await?
        .map(|p| p.name)
        .unwrap_or_else(|| source.id.clone());
    start(ctx, &source, &name, &job.id).await?;
    let job = store::job(ctx.db().await?, &job.id)
        .await?
        .ok_or_else(|| not_found(""))?;
    dicts::job_dict(ctx.db().await?, &job, true).await
}

action_params! {
    /// Create (and start) a job for every active source that has none new or running.
    /// Sysadmins only.
    ///
    /// :rtype: list of job dicts
    pub struct HarvestJobCreateAllParams {
        /// start the jobs now (default true)
        run: bool = true,
    }
}

pub(crate) async fn harvest_job_create_all(
    ctx: &mut ActionContext,
    p: HarvestJobCreateAllParams,
) -> CkanResult<Value> {
    ctx.check_access("harvest_job_create_all", &p.__extras)
        .await?;
    let sources = store::sources(ctx.db().await?, true, None, 100_000).await?;
    let mut out = Vec::new();
    for s in sources {
        if store::active_job(ctx.db().await?, &s.id).await?.is_some() {
            continue;
        }
        let Some(pkg) = ctx.package_row(&s.id).await? else {
            continue;
        };
        let job = create_job(ctx, &s, &pkg.name, p.run, false, false).await?;
        out.push(dicts::job_dict(ctx.db().await?, &job, false).await?);
    }
    Ok(Value::Array(out))
}

action_params! {
    /// Run the harvest schedule once: create and start jobs for the sources whose frequency
    /// makes them due, and end running jobs that show no activity for `catalog.harvest.timeout`
    /// minutes. `catalog serve` does this every `catalog.harvest.schedule_interval_secs`, so
    /// no cron job is needed. Sysadmins only.
    ///
    /// :rtype: list (empty)
    pub struct HarvestJobsRunParams {
        /// only this source: nothing is scheduled, its stuck job is ended
        source_id: Option<String>,
    }
}

pub(crate) async fn harvest_jobs_run(
    ctx: &mut ActionContext,
    p: HarvestJobsRunParams,
) -> CkanResult<Value> {
    ctx.check_access("harvest_jobs_run", &p.__extras).await?;
    if p.source_id.is_none() {
        schedule_due(ctx).await?;
    }
    let source = match &p.source_id {
        Some(s) => Some(
            ctx.package_row(s)
                .await?
                .map(|r| r.id)
                .unwrap_or_else(|| s.clone()),
        ),
        None => None,
    };
    let minutes = crate::settings(&ctx.app).timeout_minutes;
    ctx.begin_write().await;
    crate::run::finish::time_out_stuck_jobs(ctx.db().await?, minutes, source.as_deref()).await?;
    Ok(json!([]))
}

/// Creates jobs for the due sources and moves their next run on (whether or not a job could
/// be made, as ckanext-harvest does). Conditional updates make it safe on several nodes.
pub(crate) async fn schedule_due(ctx: &mut ActionContext) -> CkanResult<usize> {
    let now_text = store::now();
    let due = store::due_sources(ctx.db().await?, &now_text).await?;
    let mut created = 0;
    for s in due {
        let next = next_run(&s.frequency, chrono::Utc::now().naive_utc());
        ctx.begin_write().await;
        let moved =
            store::advance_next_run(ctx.db().await?, &s.id, s.next_run.as_deref(), &next).await?;
        if !moved {
            continue;
        }
        if store::active_job(ctx.db().await?, &s.id).await?.is_some() {
            continue;
        }
        let Some(pkg) = ctx.package_row(&s.id).await? else {
            continue;
        };
        if create_job(ctx, &s, &pkg.name, true, false, false)
            .await
            .is_ok()
        {
            created += 1;
        }
    }
    Ok(created)
}

/// When a source of this frequency runs next, counted from `now` (ckanext-harvest's
/// intervals: MONTHLY is the current month's length).
pub(crate) fn next_run(frequency: &str, now: chrono::NaiveDateTime) -> String {
    use chrono::Datelike;
    let days = match frequency {
        "DAILY" => 1,
        "WEEKLY" => 7,
        "BIWEEKLY" => 14,
        "MONTHLY" => {
            let (y, m) = (now.year(), now.month());
            let first = chrono::NaiveDate::from_ymd_opt(y, m, 1).expect("a date");
            let next = if m == 12 {
                chrono::NaiveDate::from_ymd_opt(y + 1, 1, 1)
            } else {
                chrono::NaiveDate::from_ymd_opt(y, m + 1, 1)
            }
            .expect("a date");
            (next - first).num_days()
        }
        _ => 0,
    };
    catalog_framework::store::job_time(now + chrono::Duration::days(days))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frequencies_give_ckans_intervals() {
        let t = chrono::NaiveDate::from_ymd_opt(2024, 2, 10)
            .unwrap()
            .and_hms_opt(12, 0, 0)
            .unwrap();
        assert!(next_run("DAILY", t).starts_with("2024-02-11T12:00:00"));
        assert!(next_run("WEEKLY", t).starts_with("2024-02-17"));
        assert!(next_run("BIWEEKLY", t).starts_with("2024-02-24"));
        assert!(next_run("MONTHLY", t).starts_with("2024-03-10"));
        assert!(next_run("ALWAYS", t).starts_with("2024-02-10T12:00:00"));
    }
}
