//! The schedule, run by `catalog serve` itself (no cron job): every
//! `catalog.harvest.schedule_interval_secs`, `harvest_jobs_run` as the site — due sources get
//! a job, stuck jobs are ended. Several nodes may run it at once: a source's next run is moved
//! on by a conditional update, and a source has at most one job new or running (a unique key).

use std::time::Duration;

use catalog_framework::prelude::*;
use catalog_framework::services::Service;
use tokio::sync::watch;

/// The scheduler service.
pub(crate) struct Scheduler;

#[async_trait]
impl Service for Scheduler {
    async fn run(&self, app: AppState, mut stop: watch::Receiver<bool>) {
        let every = Duration::from_secs(crate::settings(&app).schedule_interval_secs);
        // The first look soon after start, then at the interval.
        let mut wait = Duration::from_secs(2).min(every);
        loop {
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = stop.changed() => return,
            }
            wait = every;
            let mut ctx = ActionContext::new(app.clone(), None);
            ctx.ignore_auth = true;
            if let Err(e) = ctx.run_top("harvest_jobs_run", Params::new()).await {
                tracing::warn!(error = %e.to_error_object(), "the harvest schedule failed; it runs again at the next interval");
            }
        }
    }
}
