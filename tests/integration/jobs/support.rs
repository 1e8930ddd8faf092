//! The apps the tests start (testkit's, workers off), the job handlers and the action the
//! tests use.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use catalog_framework::prelude::*;
use catalog_framework::register_action;
use catalog_framework::store::{self as q, JobRow};
use catalog_host::testkit::{StoreKind, TestApp};

/// An app on a fresh store, with workers off (tests start their own).
pub(crate) async fn start(kind: StoreKind, configure: impl FnOnce(&mut Config)) -> TestApp {
    TestApp::start_with(kind, |config| {
        config.catalog.jobs.workers = 0;
        crate::test_plugin::enable(config);
        configure(config);
    })
    .await
}

/// What the job tests ask of an app's store.
pub(crate) trait JobsApp {
    async fn job(&self, id: &str) -> Option<JobRow>;
    /// Waits (up to `within`) until the job is in `state`.
    async fn wait_for(&self, id: &str, state: &str, within: Duration) -> JobRow;
    async fn count(&self, sql: &str) -> i64;
}

impl JobsApp for TestApp {
    async fn job(&self, id: &str) -> Option<JobRow> {
        let mut conn = self.app.store.pool.acquire().await.unwrap();
        q::job_by_id(&mut conn, id).await.unwrap()
    }

    async fn wait_for(&self, id: &str, state: &str, within: Duration) -> JobRow {
        let start = Instant::now();
        loop {
            let job = self.job(id).await;
            if job.as_ref().is_some_and(|j| j.state == state) {
                return job.unwrap();
            }
            assert!(
                start.elapsed() < within,
                "job {id} not {state} after {within:?}: {job:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn count(&self, sql: &str) -> i64 {
        sqlx::query_scalar(sql)
            .fetch_one(&self.app.store.pool)
            .await
            .unwrap()
    }
}

/// Runs of `counted` jobs, by `(test, n)`.
static RUNS: Mutex<Option<HashMap<(String, u64), u32>>> = Mutex::new(None);

pub(crate) fn runs(test: &str) -> HashMap<u64, u32> {
    RUNS.lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .iter()
        .filter(|((t, _), _)| t == test)
        .map(|((_, n), c)| (*n, *c))
        .collect()
}

/// Counts its runs by the payload's `test` and `n`.
struct Counted;

#[async_trait]
impl JobHandler for Counted {
    async fn run(&self, _app: &AppState, payload: &Value) -> anyhow::Result<Value> {
        let key = (
            payload["test"].as_str().unwrap_or_default().to_string(),
            payload["n"].as_u64().unwrap_or_default(),
        );
        *RUNS
            .lock()
            .unwrap()
            .get_or_insert_with(HashMap::new)
            .entry(key)
            .or_default() += 1;
        // A little work, so that workers overlap.
        tokio::time::sleep(Duration::from_millis(2)).await;
        Ok(json!({"n": payload["n"]}))
    }
}
register_job_handler!("counted", Counted);

/// Fails every attempt, naming the attempt's start time.
struct AlwaysFails;

#[async_trait]
impl JobHandler for AlwaysFails {
    async fn run(&self, _app: &AppState, payload: &Value) -> anyhow::Result<Value> {
        anyhow::bail!("boom: {}", payload["why"].as_str().unwrap_or("no reason"))
    }
}
register_job_handler!("always_fails", AlwaysFails);

/// Fails its first attempt, then succeeds.
struct FailsOnce;

#[async_trait]
impl JobHandler for FailsOnce {
    async fn run(&self, _app: &AppState, payload: &Value) -> anyhow::Result<Value> {
        let key = (payload["test"].as_str().unwrap_or_default().to_string(), 0);
        let n = {
            let mut runs = RUNS.lock().unwrap();
            let c = runs
                .get_or_insert_with(HashMap::new)
                .entry(key)
                .or_default();
            *c += 1;
            *c
        };
        if n == 1 {
            anyhow::bail!("first attempt fails");
        }
        Ok(json!({"attempt": n}))
    }
}
register_job_handler!("fails_once", FailsOnce);

/// Runs longer than its timeout.
struct TooSlow;

#[async_trait]
impl JobHandler for TooSlow {
    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_millis(200))
    }
    async fn run(&self, _app: &AppState, _payload: &Value) -> anyhow::Result<Value> {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok(Value::Null)
    }
}
register_job_handler!("too_slow", TooSlow);

/// An action that enqueues a `counted` job in its transaction, then fails when asked to.
struct EnqueueThenMaybeFail;

#[async_trait]
impl Action for EnqueueThenMaybeFail {
    async fn run(&self, ctx: &mut ActionContext, params: Params) -> CkanResult<Value> {
        let test = params["test"].as_str().unwrap_or_default().to_string();
        let id = ctx
            .enqueue_job(
                "counted",
                json!({"test": test, "n": 0}),
                JobOptions::queue("tests").with_title("from an action"),
            )
            .await?;
        if params.get("fail").and_then(Value::as_bool) == Some(true) {
            return Err(validation_message("failing after the enqueue"));
        }
        Ok(json!(id))
    }
}
register_action!("test_enqueue_job", EnqueueThenMaybeFail);

/// A job of a lane of its own that runs for a long time (a trickling download's load).
struct SlowLane;

#[async_trait]
impl JobHandler for SlowLane {
    fn lane(&self) -> &'static str {
        "tests-slow"
    }
    async fn run(&self, _app: &AppState, _payload: &Value) -> anyhow::Result<Value> {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok(Value::Null)
    }
}
register_job_handler!("slow_lane", SlowLane);
