//! How many statements an action sends to the store, counted from sqlx's own statement log
//! (the `sqlx::query` tracing target), on SQLite and on PostgreSQL.
//!
//! One test function: the counting subscriber is process-global (SQLite runs its statements
//! on threads of its own), so nothing else may run in this binary meanwhile. The server's own
//! background work (the search sync every 2 s, the job workers' poll every second) can still
//! send a statement while a call is measured; such a statement only adds, so each figure is the
//! fewest statements of three tries, and a failure lists what was sent.

use std::sync::{Arc, Mutex};

use catalog_host::testkit::{stores, StoreKind, TestApp};
use serde_json::{json, Value};
use tracing_subscriber::layer::SubscriberExt;

/// The statements sqlx has logged, in order.
type Log = Arc<Mutex<Vec<String>>>;

/// Records the statements sqlx logs (their `summary` field, else the whole event).
struct Recorder(Log);

struct Summary(Option<String>);

impl tracing::field::Visit for Summary {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "summary" {
            self.0 = Some(value.to_string());
        }
    }
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "summary" {
            self.0 = Some(format!("{value:?}"));
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Recorder {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().target() == "sqlx::query" {
            let mut summary = Summary(None);
            event.record(&mut summary);
            let text = summary.0.unwrap_or_else(|| format!("{event:?}"));
            self.0.lock().unwrap().push(text);
        }
    }
}

fn logged(log: &Log) -> usize {
    log.lock().unwrap().len()
}

/// Waits until the background work of earlier writes (the search sync after a commit) has
/// sent its statements: nothing logged for 200 ms, or 5 s at most.
async fn settle(log: &Log) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let seen = logged(log);
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        if logged(log) == seen || std::time::Instant::now() > deadline {
            return;
        }
    }
}

/// The statements of the try of `call` that sent the fewest, of three, and that try's answer;
/// `before` runs ahead of each try (to empty a cache).
async fn fewest<F, Fut>(log: &Log, before: impl Fn(), call: F) -> (Vec<String>, Value)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let mut best: Option<(Vec<String>, Value)> = None;
    for _ in 0..3 {
        before();
        settle(log).await;
        let start = logged(log);
        let answer = call().await;
        let sent = log.lock().unwrap()[start..].to_vec();
        if best.as_ref().is_none_or(|(b, _)| sent.len() < b.len()) {
            best = Some((sent, answer));
        }
    }
    best.unwrap()
}

async fn check(kind: StoreKind, log: &Log) {
    let t = TestApp::start(kind).await;
    t.ok("organization_create", json!({"name": "office"})).await;
    t.ok("group_create", json!({"name": "roads-group"})).await;
    let created = t
        .ok(
            "package_create",
            json!({"name": "roads", "owner_org": "office", "groups": [{"name": "roads-group"}],
                   "tags": [{"name": "asphalt"}], "resources": [{"url": "http://x/a.csv"}]}),
        )
        .await;

    // Nothing read so far filled the cache (the indexer does not); make sure of it for the miss.
    let id = created["id"].as_str().unwrap().to_string();
    assert!(
        logged(log) > 10,
        "the statements of the set-up were logged ({kind})"
    );
    // A cache miss: the dataset, its organization and its groups in one statement.
    let show = || t.ok_as(None, "package_show", json!({"id": "roads"}));
    let (reads, shown) = fewest(log, || t.app.package_cache.invalidate([&id]), show).await;
    assert_eq!(shown["organization"]["name"], "office", "{kind}");
    assert_eq!(shown["groups"][0]["name"], "roads-group", "{kind}");
    assert_eq!(shown["resources"].as_array().unwrap().len(), 1, "{kind}");
    assert_eq!(
        reads.len(),
        1,
        "package_show on a cache miss reads the store once ({kind}): {reads:#?}"
    );

    // A hit (embedded deployment only): no statement at all.
    if kind == StoreKind::Sqlite {
        let (reads, again) = fewest(log, || {}, show).await;
        assert_eq!(again, shown, "{kind}");
        assert!(
            reads.is_empty(),
            "package_show on a cache hit reads nothing ({kind}): {reads:#?}"
        );
    }

    // A write's activity reads the changed dataset once: its `package_show` finds the dataset
    // in the bundle the activity read (SQLite; on PostgreSQL a write call's row read takes a
    // row lock, so `package_show` reads the row again). Counted between the dataset's write
    // and the activity's insert: reads of the dataset by id or name, whole (`WITH p AS …`,
    // the bundle) or its row alone (`SELECT id, name, type, …`).
    if kind == StoreKind::Sqlite {
        // Each try a real change (a change that changes nothing records no activity).
        let take = std::sync::atomic::AtomicUsize::new(0);
        let patch = || {
            let n = take.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            t.ok(
                "package_patch",
                json!({"id": "roads", "notes": format!("take {n}")}),
            )
        };
        let (sent, patched) = fewest(log, || {}, patch).await;
        assert!(
            patched["notes"]
                .as_str()
                .is_some_and(|n| n.starts_with("take ")),
            "{kind}"
        );
        let position = |prefix: &str| sent.iter().position(|s| s.starts_with(prefix));
        let (Some(written), Some(recorded)) = (
            position("UPDATE package SET"),
            position("INSERT INTO activity"),
        ) else {
            panic!("package_patch writes the dataset and an activity ({kind}): {sent:#?}");
        };
        let reads = sent[written..recorded]
            .iter()
            .filter(|s| s.starts_with("WITH p AS") || s.starts_with("SELECT id, name, type"))
            .count();
        assert_eq!(
            reads, 1,
            "the activity of package_patch reads the dataset once ({kind}): {sent:#?}"
        );
        // The answer, built after the commit, takes the row from the bundle its dictization
        // reads: no read of the row alone. (The indexer's reads of the written datasets come
        // after the commit too, as bundles, so the bundles are not counted here.)
        let row_reads = sent[recorded..]
            .iter()
            .filter(|s| s.starts_with("SELECT id, name, type"))
            .count();
        assert_eq!(
            row_reads, 0,
            "package_patch's answer reads the dataset's row with its bundle ({kind}): {sent:#?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn package_show_reads_the_store_once_on_a_miss() {
    // The subscriber is the process's: alone in a process, it sees this test's queries only.
    if !crate::test_plugin::alone("store_reads::package_show_reads_the_store_once_on_a_miss") {
        return;
    }
    let log: Log = Arc::default();
    let subscriber = tracing_subscriber::registry()
        .with(
            tracing_subscriber::filter::Targets::new()
                .with_target("sqlx::query", tracing::Level::TRACE),
        )
        .with(Recorder(log.clone()));
    tracing::subscriber::set_global_default(subscriber).unwrap();

    for kind in stores().await {
        check(kind, &log).await;
    }
}
