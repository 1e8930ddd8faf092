//! CKAN's `test_job`: what `catalog jobs test` enqueues, to see that workers run jobs.

use std::time::Duration;

use catalog_framework::jobs::enqueue_job;
use catalog_framework::prelude::*;

/// The job kind of [`TestJob`].
pub(crate) const KIND: &str = "test_job";

/// Longest pause a test job may ask for, in seconds.
pub(crate) const MAX_SLEEP_SECS: u64 = 3600;

/// Prints its `args` (as CKAN's `test_job` does) after pausing `sleep_secs` seconds (0 when
/// absent; a stand-in for work, to watch a worker heartbeat, be stopped or be killed), and
/// returns `{"args": …}`.
pub(crate) struct TestJob;

#[async_trait]
impl JobHandler for TestJob {
    async fn run(&self, _app: &AppState, payload: &Value) -> anyhow::Result<Value> {
        let args = payload.get("args").cloned().unwrap_or_else(|| json!([]));
        let sleep = match payload.get("sleep_secs") {
            None | Some(Value::Null) => 0,
            Some(v) => v.as_u64().filter(|s| *s <= MAX_SLEEP_SECS).ok_or_else(|| {
                anyhow::anyhow!(
                    "sleep_secs must be a whole number of seconds up to {MAX_SLEEP_SECS}"
                )
            })?,
        };
        if sleep > 0 {
            tokio::time::sleep(Duration::from_secs(sleep)).await;
        }
        println!("{args}");
        tracing::info!(%args, "test job ran");
        Ok(json!({"args": args}))
    }
}

register_job_handler!(KIND, TestJob);

/// Enqueues a test job titled `A test job` with the args `["A test job"]` on `queue`, as
/// `ckan jobs test` does; returns its id.
pub(crate) async fn enqueue(app: &AppState, queue: &str, sleep_secs: u64) -> CkanResult<String> {
    let mut payload = json!({"args": ["A test job"]});
    if sleep_secs > 0 {
        payload["sleep_secs"] = json!(sleep_secs);
    }
    let job = enqueue_job(
        app,
        KIND,
        payload,
        JobOptions::queue(queue).with_title("A test job"),
    )
    .await?;
    Ok(job.id)
}
