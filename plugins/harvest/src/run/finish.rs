//! `harvest_finish`, the end of a run: the datasets a complete, error-free walk did not see
//! deleted (or marked), the derived state caught up, the job `Finished`. Also the timeout of
//! jobs whose chain of page jobs died.

use std::collections::HashSet;
use std::time::Duration;

use catalog_framework::prelude::*;

use super::gather::PagingState;
use super::{end_with_error_on, gather_error, harvest_user, write, Missing, Run};
use crate::store::{self, report, state, JobRow, ObjectRow};

/// `harvest_finish`: deletions after a complete walk, then the job ends.
pub(crate) struct FinishRun;

#[async_trait]
impl JobHandler for FinishRun {
    fn lane(&self) -> &'static str {
        catalog_framework::jobs::HARVEST_LANE
    }

    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_secs(3600))
    }

    async fn run(&self, app: &AppState, payload: &Value) -> anyhow::Result<Value> {
        let job_id = payload["job_id"].as_str().unwrap_or_default();
        let Some(run) = Run::load(app, job_id).await? else {
            return Ok(json!({"skipped": "the harvest job is not running"}));
        };
        let deleted = delete_missing(&run).await?;
        // The run's datasets are searchable when its job says Finished.
        catch_up_derived_state(app).await;
        let id = run.job.id.clone();
        write(app, move |c| {
            Box::pin(async move { store::finish_job(c, &id).await })
        })
        .await?;
        tracing::info!(job = %run.job.id, source = %run.source_name, deleted, "harvest job finished");
        Ok(json!({"deleted": deleted}))
    }
}

/// Runs the commit hooks the run's background writes skipped (the search index's sync).
pub(crate) async fn catch_up_derived_state(app: &AppState) {
    // Searches from now on wait for the index to have the run's writes.
    app.index_lag.note_commit();
    for hook in app.commit_hooks.iter().filter(|h| h.read_your_writes()) {
        if let Err(e) = hook.after_write_commit(app).await {
            tracing::warn!(hook = hook.name(), error = %e, "catching up after a harvest failed; the background sync retries");
        }
    }
}

/// Deletes (or marks) what a complete, error-free walk did not see; answers how many.
async fn delete_missing(run: &Run) -> anyhow::Result<usize> {
    let app = &run.app;
    let policy = run.missing_policy();
    let (job, total, missing) = {
        let mut conn = app.store.pool.acquire().await?;
        let Some(job) = store::job(&mut conn, &run.job.id).await? else {
            return Ok(0);
        };
        let errors = store::gather_error_count(&mut conn, &job.id).await?;
        if !job.gather_complete || errors > 0 || policy == Missing::Keep {
            return Ok(0);
        }
        let total = store::current_count(&mut conn, &run.source.id).await?;
        let missing = store::missing_current(&mut conn, &run.source.id, &job.id, total + 1).await?;
        (job, total, missing)
    };
    if missing.is_empty() {
        return Ok(0);
    }
    let share = run.settings.max_delete_share;
    if missing.len() as f64 > share * total as f64 && !job.force_delete && policy == Missing::Delete
    {
        let msg = format!(
            "Not deleting {} of the source's {} datasets: more than {}% of them would go \
             (catalog.harvest.max_delete_share). Run a job with force to delete them.",
            missing.len(),
            total,
            (share * 100.0).round()
        );
        let id = job.id.clone();
        write(app, move |c| {
            Box::pin(async move { store::add_gather_error(c, &id, &msg).await })
        })
        .await?;
        return Ok(0);
    }
    let paging = PagingState::from_value(&job.gather_state);
    let cx = run.context(paging.since.as_deref());
    let guids: Vec<String> = missing.iter().map(|o| o.guid.clone()).collect();
    let gone: HashSet<String> = match run.harvester.confirm_missing(&cx, guids).await {
        Ok(g) => g.into_iter().collect(),
        Err(e) => {
            let msg = format!("Datasets missing from the source could not be checked: {e}");
            gather_error(app, &job.id, msg).await?;
            return Ok(0);
        }
    };
    let doomed: Vec<&ObjectRow> = missing.iter().filter(|o| gone.contains(&o.guid)).collect();
    let user = harvest_user(app)
        .await
        .map_err(|e| anyhow::anyhow!("{}", e.to_error_object()))?;
    let mut done = 0;
    for batch in doomed.chunks(run.settings.batch_size) {
        let mut ctx = ActionContext::new(app.clone(), Some(user.clone()));
        ctx.ignore_auth = true;
        ctx.background = true;
        let batch: Vec<ObjectRow> = batch.iter().map(|o| (*o).clone()).collect();
        let n = batch.len();
        let job_id = job.id.clone();
        let source_id = run.source.id.clone();
        ctx.run_write("harvest_delete", |ctx| {
            Box::pin(async move {
                for o in &batch {
                    remove_one(ctx, &job_id, &source_id, o, policy).await?;
                }
                Ok(Value::Null)
            })
        })
        .await
        .map_err(|e| anyhow::anyhow!("{}", e.to_error_object()))?;
        done += n;
    }
    Ok(done)
}

/// Deletes (or marks) one dataset the source no longer lists, with the object that says so.
async fn remove_one(
    ctx: &mut ActionContext,
    job_id: &str,
    source_id: &str,
    current: &ObjectRow,
    policy: Missing,
) -> CkanResult<()> {
    let id = catalog_framework::store::new_id();
    let report_status = if policy == Missing::Mark {
        "missing"
    } else {
        report::DELETED
    };
    let object = ObjectRow {
        id: id.clone(),
        guid: current.guid.clone(),
        current: false,
        gathered: store::now(),
        fetch_started: None,
        content: None,
        fetch_finished: None,
        import_started: None,
        import_finished: None,
        state: state::COMPLETE.into(),
        metadata_modified_date: None,
        retry_times: 0,
        harvest_job_id: job_id.to_string(),
        harvest_source_id: source_id.to_string(),
        package_id: current.package_id.clone(),
        report_status: Some(report_status.into()),
        content_hash: None,
    };
    if !store::insert_object(ctx.db().await?, &object).await? {
        return Ok(());
    }
    store::close_object(ctx.db().await?, &id, state::COMPLETE, report_status).await?;
    let Some(package_id) = current.package_id.clone() else {
        store::uncurrent(ctx.db().await?, source_id, &current.guid).await?;
        return Ok(());
    };
    if ctx.package_row(&package_id).await?.is_none() {
        store::uncurrent(ctx.db().await?, source_id, &current.guid).await?;
        return Ok(());
    }
    let mut p = Params::new();
    p.insert("id".into(), json!(package_id));
    match policy {
        Missing::Mark => {
            // The dataset stays (and its object current); it carries the date it went
            // missing, and a reappearance re-imports it (its hash is cleared).
            let shown = ctx.call("package_show", p.clone()).await?;
            let mut extras: Vec<Value> = shown["extras"].as_array().cloned().unwrap_or_default();
            if !extras
                .iter()
                .any(|e| e["key"] == json!("harvest_missing_since"))
            {
                extras.push(json!({"key": "harvest_missing_since", "value": store::now()}));
                p.insert("extras".into(), Value::Array(extras));
                ctx.call("package_patch", p).await?;
            }
            sqlx::query(
                "UPDATE harvest_object SET content_hash = NULL WHERE harvest_source_id = $1 \
                 AND guid = $2 AND current = TRUE",
            )
            .bind(source_id)
            .bind(&current.guid)
            .execute(ctx.db().await?)
            .await?;
        }
        _ => {
            store::uncurrent(ctx.db().await?, source_id, &current.guid).await?;
            ctx.call("package_delete", p).await?;
        }
    }
    Ok(())
}

/// Ends running jobs that show no activity for `minutes` (`catalog.harvest.timeout`): their
/// chain of page jobs died (retries exhausted, or every worker gone for that long).
pub(crate) async fn time_out_stuck_jobs(
    conn: &mut sqlx::AnyConnection,
    minutes: u64,
    source_id: Option<&str>,
) -> sqlx::Result<usize> {
    if minutes == 0 {
        return Ok(0);
    }
    let before = catalog_framework::store::job_time(
        catalog_framework::store::job_now() - chrono::Duration::minutes(minutes as i64),
    );
    let stuck: Vec<JobRow> = store::stale_running_jobs(conn, &before)
        .await?
        .into_iter()
        .filter(|j| source_id.is_none_or(|s| s == j.source_id))
        .collect();
    for job in &stuck {
        let msg = format!(
            "Job {} timeout ({minutes} minutes)\n\tJob created: {}\n\tJob last action time: {}\n",
            job.id,
            job.created,
            job.last_action.clone().unwrap_or_default()
        );
        end_with_error_on(conn, &job.id, &msg).await?;
    }
    Ok(stuck.len())
}
