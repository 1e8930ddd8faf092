//! The search index follower's group commit, on SQLite and on PostgreSQL: writes made one
//! after another (as `ckanapi load`'s workers make them: no other write in progress when one
//! commits) share index passes, at most one per `catalog.search.commit_delay_ms`. Passes are
//! counted from the follower's own debug event. And a read that carries a client's last write
//! position (`X-Catalog-Seq`) waits for this node's index only when it searches.
//!
//! One test function: the counting subscriber is process-global.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use catalog_framework::context::ActionContext;
use catalog_host::testkit::{stores, StoreKind, TestApp};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

/// Counts the index passes (the indexer's "search index pass" events).
struct Passes(Arc<AtomicUsize>);

struct Message(bool);

impl tracing::field::Visit for Message {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" && format!("{value:?}") == "search index pass" {
            self.0 = true;
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Passes {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut m = Message(false);
        event.record(&mut m);
        if m.0 {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

const DELAY_MS: u64 = 500;

async fn check(kind: StoreKind, passes: &AtomicUsize) {
    let t = TestApp::start_with(kind, |c| {
        c.catalog.search.backend = "tantivy".into();
        c.catalog.search.commit_delay_ms = DELAY_MS;
    })
    .await;
    t.ok("organization_create", json!({"name": "office"})).await;
    tokio::time::sleep(Duration::from_millis(2 * DELAY_MS)).await;

    t.ok(
        "package_create",
        json!({"name": "first", "owner_org": "office"}),
    )
    .await;

    // Writes one after another, after a quiet spell.
    tokio::time::sleep(Duration::from_millis(2 * DELAY_MS)).await;
    let before = passes.load(Ordering::SeqCst);
    let started = Instant::now();
    let writes = 12;
    for i in 0..writes {
        t.ok(
            "package_create",
            json!({"name": format!("one-after-another-{i}"), "owner_org": "office"}),
        )
        .await;
    }
    let took = started.elapsed();
    tokio::time::sleep(Duration::from_millis(3 * DELAY_MS)).await;
    let made = passes.load(Ordering::SeqCst) - before;
    // Without the bound every write got a pass of its own (no other write was in progress
    // when it committed). With it: the first at once, then one per delay, and on PostgreSQL
    // the node's polls of the feed may find the last rows.
    let allowed = 4 + (took.as_millis() / u128::from(DELAY_MS)) as usize;
    assert!(made >= 1, "the follower indexed the writes ({kind})");
    assert!(
        made <= allowed.min(writes / 2),
        "{made} index passes for {writes} writes in {took:?} ({kind})"
    );
    // And every one of them is searchable.
    let found = t
        .ok(
            "package_search",
            json!({"q": "name:one-after-another-*", "rows": 0}),
        )
        .await;
    assert_eq!(found["count"], writes, "{kind}");

    // A read with the position of a write this node has not applied yet (one made on
    // another node): package_show answers from the store without an index pass; a search runs
    // (or waits for) a pass that started after it arrived. Where the node follows no feed
    // there is nothing to wait for.
    let ahead = t.app.search.high() + 1_000;
    let read = |action: &'static str, params: serde_json::Value| {
        let mut ctx = ActionContext::new(t.app.clone(), Some(t.admin.clone()));
        ctx.read_after = Some((ahead, Instant::now()));
        let params = params.as_object().unwrap().clone();
        async move {
            let before = passes.load(Ordering::SeqCst);
            let v = ctx.run_top(action, params).await.unwrap();
            (v, passes.load(Ordering::SeqCst) - before)
        }
    };
    // The node's own polls of the feed also make passes: one may fall inside a call by
    // chance, not three times in a row.
    let mut show_passes = Vec::new();
    for _ in 0..3 {
        let (shown, n) = read("package_show", json!({"id": "first"})).await;
        assert_eq!(shown["name"], "first", "{kind}");
        show_passes.push(n);
        if n == 0 {
            break;
        }
    }
    assert!(
        show_passes.contains(&0),
        "package_show ran index passes for the position: {show_passes:?} ({kind})"
    );
    let (_, n) = read("package_search", json!({"q": "name:first"})).await;
    if t.app.search.follows_feed() {
        assert!(n >= 1, "package_search did not catch up ({kind})");
    } else {
        assert_eq!(n, 0, "{kind}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_one_after_another_share_index_passes() {
    // The subscriber is the process's: alone in a process, it sees this test's passes only.
    if !crate::test_plugin::alone("index_passes::writes_one_after_another_share_index_passes") {
        return;
    }
    let n = Arc::new(AtomicUsize::new(0));
    let subscriber = tracing_subscriber::registry()
        .with(
            tracing_subscriber::filter::Targets::new()
                .with_target("catalog_host::indexer", tracing::Level::DEBUG),
        )
        .with(Passes(n.clone()));
    tracing::subscriber::set_global_default(subscriber).unwrap();

    for kind in stores().await {
        check(kind, &n).await;
    }
}
