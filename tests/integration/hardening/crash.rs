//! `kill -9` in the middle of a write burst: after a restart every acknowledged create and
//! delete is in the store, and the search index agrees with the store. A restart whose old
//! process has not exited yet takes the embedded index over from it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::join_all;
use serde_json::json;

use super::support::{stores, Server};

const WRITERS: usize = 8;

#[derive(Default)]
struct Acked {
    created: Vec<String>,
    deleted: Vec<String>,
    /// Deletes sent but not acknowledged: they may or may not have committed.
    deleting: Vec<String>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_during_a_write_burst_loses_no_acknowledged_write() {
    for kind in stores().await {
        let mut server =
            Server::start(kind, &[("CATALOG__AUTH__CREATE_UNOWNED_DATASET", "true")]).await;
        let acked = Arc::new(Mutex::new(Acked::default()));
        let stop_at = Instant::now() + Duration::from_secs(4);
        let base = server.base.clone();
        let token = server.token.clone();
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let writers = (0..WRITERS).map(|w| {
            let (acked, base, token, client) =
                (acked.clone(), base.clone(), token.clone(), client.clone());
            tokio::spawn(async move {
                let mut mine: Vec<String> = Vec::new();
                for n in 0.. {
                    if Instant::now() > stop_at + Duration::from_secs(10) {
                        break;
                    }
                    // Every fourth write deletes one of this writer's acknowledged datasets.
                    let (action, body, name) = if n % 4 == 3 && !mine.is_empty() {
                        let victim = mine.remove(0);
                        acked.lock().unwrap().deleting.push(victim.clone());
                        ("package_delete", json!({"id": victim}), victim)
                    } else {
                        let name = format!("burst-{w}-{n}");
                        (
                            "package_create",
                            json!({"name": name, "tags": [{"name": format!("w{w}")}],
                                   "resources": [{"url": "http://example.org/x.csv"}]}),
                            name,
                        )
                    };
                    let resp = client
                        .post(format!("{base}/api/3/action/{action}"))
                        .header("Authorization", &token)
                        .json(&body)
                        .send()
                        .await;
                    let Ok(resp) = resp else { break };
                    if resp.status().as_u16() != 200 {
                        break;
                    }
                    // Acknowledged only once the whole answer arrived.
                    if resp.bytes().await.is_err() {
                        break;
                    }
                    let mut a = acked.lock().unwrap();
                    if action == "package_create" {
                        a.created.push(name.clone());
                        mine.push(name);
                    } else {
                        a.deleted.push(name);
                    }
                }
            })
        });
        let writers: Vec<_> = writers.collect();
        tokio::time::sleep_until(stop_at.into()).await;
        server.kill9();
        join_all(writers).await;
        server.restart().await;

        let acked = std::mem::take(&mut *acked.lock().unwrap());
        assert!(
            acked.created.len() > 20,
            "{kind}: only {} creates acknowledged before the kill",
            acked.created.len()
        );
        let mut lost = Vec::new();
        for name in &acked.created {
            let (status, body) = server.call("package_show", json!({"id": name})).await;
            let deleted = acked.deleted.contains(name);
            // A delete sent but never answered may or may not have committed.
            let maybe_deleted = !deleted && acked.deleting.contains(name);
            let state = body["result"]["state"].as_str().unwrap_or("");
            let ok = status == 200
                && match (deleted, maybe_deleted) {
                    (true, _) => state == "deleted",
                    (false, true) => state == "deleted" || state == "active",
                    (false, false) => state == "active",
                };
            if !ok {
                lost.push(format!("{name}: {status} {state}"));
            }
            if state == "active" {
                let (_, found) = server
                    .call(
                        "package_search",
                        json!({"fq": format!("name:{name}"), "rows": 0}),
                    )
                    .await;
                if found["result"]["count"] != json!(1) {
                    lost.push(format!("{name}: not in the search index"));
                }
            }
        }
        assert!(
            lost.is_empty(),
            "{kind}: {} of {} acknowledged writes lost: {lost:?}",
            lost.len(),
            acked.created.len() + acked.deleted.len()
        );
        // The index agrees with the store, deleted datasets included.
        let (consistent, report) = server.cli_status(&["search-index", "check"]);
        assert!(consistent, "{kind}: search-index check: {report}");
        println!(
            "{kind}: kill -9 after {} acknowledged creates and {} deletes: 0 lost, index consistent",
            acked.created.len(),
            acked.deleted.len()
        );
    }
}

/// A server started while the old one still runs (and holds the embedded index's lock) waits
/// for it to exit and then keeps the index up to date: before, it opened the index read-only
/// and never indexed a write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_before_the_old_process_exits_takes_the_index_over() {
    for kind in stores().await {
        let mut server = Server::start(
            kind,
            &[
                ("CATALOG__SEARCH__BACKEND", "tantivy"),
                ("CATALOG__AUTH__CREATE_UNOWNED_DATASET", "true"),
            ],
        )
        .await;
        server
            .ok("package_create", json!({"name": "before-restart"}))
            .await;
        // The old process's index has the dataset before it is killed (a search waits for
        // the index pass): else the new one finds an empty index beside a non-empty store,
        // builds it from the store as a new node would, and refuses searches meanwhile.
        let before = server
            .ok("package_search", json!({"q": "name:before-restart"}))
            .await;
        assert_eq!(before["count"], 1, "{kind:?}: {before}");
        server.restart_overlapping("waiting for it to exit").await;
        assert_eq!(
            server.log_count("waiting for it to exit"),
            1,
            "{kind:?}: the new process found the index held: {}",
            server.log_text()
        );
        server
            .ok("package_create", json!({"name": "after-restart"}))
            .await;
        let found = server
            .ok(
                "package_search",
                json!({"q": "name:after-restart OR name:before-restart"}),
            )
            .await;
        assert_eq!(
            found["count"],
            2,
            "{kind:?}: both datasets are searchable: {found} {}",
            server.errors()
        );
        assert_eq!(
            server.log_count("serving it read-only"),
            0,
            "{kind:?}: {}",
            server.log_text()
        );
    }
}
