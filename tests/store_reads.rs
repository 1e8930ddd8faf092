//! How many statements an action sends to the store, counted from sqlx's own statement log
//! (the `sqlx::query` tracing target), on SQLite and on PostgreSQL.
//!
//! One test function: the counting subscriber is process-global (SQLite runs its statements
//! on threads of its own), so nothing else may run in this binary meanwhile.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use catalog_host::testkit::{stores, StoreKind, TestApp};
use serde_json::{json, Value};
use tracing_subscriber::layer::SubscriberExt;

use catalog_plugin_activity as _;
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_dcat as _;
use catalog_plugin_legacy_api as _;
use catalog_plugin_related as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_postgres as _;
use catalog_plugin_search_tantivy as _;
use catalog_plugin_views as _;

/// Counts the statements sqlx logs.
struct Counter(Arc<AtomicUsize>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Counter {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().target() == "sqlx::query" {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Waits until the background work of earlier writes (the search sync after a commit) has
/// sent its statements: nothing counted for 200 ms, or 5 s at most.
async fn settle(n: &AtomicUsize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let seen = n.load(Ordering::SeqCst);
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        if n.load(Ordering::SeqCst) == seen || std::time::Instant::now() > deadline {
            return;
        }
    }
}

/// Statements sent while `f` runs.
async fn count<F: std::future::Future<Output = Value>>(n: &AtomicUsize, f: F) -> (usize, Value) {
    let before = n.load(Ordering::SeqCst);
    let v = f.await;
    (n.load(Ordering::SeqCst) - before, v)
}

async fn check(kind: StoreKind, n: &AtomicUsize) {
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
    t.app.package_cache.invalidate([&id]);
    assert!(
        n.load(Ordering::SeqCst) > 10,
        "the statements of the set-up were counted ({kind})"
    );
    // A cache miss: the dataset, its organization and its groups in one statement.
    settle(n).await;
    let (reads, shown) = count(n, t.ok_as(None, "package_show", json!({"id": "roads"}))).await;
    assert_eq!(shown["organization"]["name"], "office", "{kind}");
    assert_eq!(shown["groups"][0]["name"], "roads-group", "{kind}");
    assert_eq!(shown["resources"].as_array().unwrap().len(), 1, "{kind}");
    assert_eq!(
        reads, 1,
        "package_show on a cache miss reads the store once ({kind})"
    );

    // A hit (embedded deployment only): no statement at all.
    if kind == StoreKind::Sqlite {
        settle(n).await;
        let (reads, again) = count(n, t.ok_as(None, "package_show", json!({"id": "roads"}))).await;
        assert_eq!(again, shown, "{kind}");
        assert_eq!(
            reads, 0,
            "package_show on a cache hit reads nothing ({kind})"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn package_show_reads_the_store_once_on_a_miss() {
    let n = Arc::new(AtomicUsize::new(0));
    let subscriber = tracing_subscriber::registry()
        .with(
            tracing_subscriber::filter::Targets::new()
                .with_target("sqlx::query", tracing::Level::TRACE),
        )
        .with(Counter(n.clone()));
    tracing::subscriber::set_global_default(subscriber).unwrap();

    for kind in stores().await {
        check(kind, &n).await;
    }
}
