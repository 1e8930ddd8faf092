//! A catalog app on a fresh store, the job handlers and the action the tests use.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use catalog_framework::prelude::*;
use catalog_framework::store::{self as q, JobRow};
use catalog_framework::testkit::ScratchDb;

use catalog_plugin_activity as _;
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_tantivy as _;

/// Which store a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sqlite,
    Postgres,
}

/// SQLite always, PostgreSQL when it is reachable.
pub async fn stores() -> Vec<Kind> {
    match ScratchDb::create("catalog_jobs_probe").await {
        Some(_db) => vec![Kind::Sqlite, Kind::Postgres],
        None => {
            println!("skipped on PostgreSQL: not reachable");
            vec![Kind::Sqlite]
        }
    }
}

/// An app on a fresh store, with workers off (tests start their own).
pub struct TestApp {
    pub app: AppState,
    pub url: String,
    pub dir: tempfile::TempDir,
    pub admin: Principal,
    // Dropped last: the database outlives the app.
    pub _db: Option<ScratchDb>,
}

impl TestApp {
    pub async fn start(kind: Kind, configure: impl FnOnce(&mut Config)) -> TestApp {
        let dir = tempfile::tempdir().unwrap();
        let (url, db) = match kind {
            Kind::Postgres => {
                let db = ScratchDb::create("catalog_jobs").await.expect("PostgreSQL");
                (db.url.clone(), Some(db))
            }
            Kind::Sqlite => (
                catalog_framework::host::Store::sqlite_url_in(dir.path()),
                None,
            ),
        };
        let mut config = Config::default();
        config.catalog.jobs.workers = 0;
        configure(&mut config);
        let app = catalog_framework::host::build_app(config, &url, dir.path().into())
            .await
            .unwrap();
        let u = catalog_plugin_core::admin::create_user(
            &app,
            "admin",
            "admin@example.org",
            "pass1234",
            true,
        )
        .await
        .unwrap();
        let admin = Principal {
            id: u["id"].as_str().unwrap().to_string(),
            name: "admin".into(),
            sysadmin: true,
            state: "active".into(),
        };
        TestApp {
            app,
            url,
            dir,
            admin,
            _db: db,
        }
    }

    /// Another app on the same store (what another process would be).
    pub async fn another(&self, configure: impl FnOnce(&mut Config)) -> AppState {
        let mut config = self.app.config.clone();
        configure(&mut config);
        catalog_framework::host::build_app(config, &self.url, self.dir.path().into())
            .await
            .unwrap()
    }

    pub async fn call(
        &self,
        who: Option<&Principal>,
        action: &str,
        p: Value,
    ) -> Result<Value, CkanError> {
        ActionContext::new(self.app.clone(), who.cloned())
            .run_top(action, p.as_object().cloned().unwrap_or_default())
            .await
    }

    pub async fn ok(&self, action: &str, p: Value) -> Value {
        self.call(Some(&self.admin), action, p)
            .await
            .unwrap_or_else(|e| panic!("{action}: {}", e.to_error_object()))
    }

    pub async fn job(&self, id: &str) -> Option<JobRow> {
        let mut conn = self.app.store.pool.acquire().await.unwrap();
        q::job_by_id(&mut conn, id).await.unwrap()
    }

    /// Waits (up to `within`) until the job is in `state`.
    pub async fn wait_for(&self, id: &str, state: &str, within: Duration) -> JobRow {
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

    pub async fn count(&self, sql: &str) -> i64 {
        sqlx::query_scalar(sql)
            .fetch_one(&self.app.store.pool)
            .await
            .unwrap()
    }
}

/// Runs of `counted` jobs, by `(test, n)`.
static RUNS: Mutex<Option<HashMap<(String, u64), u32>>> = Mutex::new(None);

pub fn runs(test: &str) -> HashMap<u64, u32> {
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
