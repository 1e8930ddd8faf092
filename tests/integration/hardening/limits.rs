//! Bounded work per request: oversized lists are refused before they cost anything, repeated
//! DCAT profiles cost one profile, heavy RDF rendering leaves the request threads free, and the
//! server's memory stays bounded while datasets are written and read.

use std::time::{Duration, Instant};

use futures::future::join_all;
use serde_json::{json, Value};

use super::support::{stores, Server, StoreKind};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn huge_tag_lists_are_refused_quickly_and_block_no_one() {
    for kind in stores().await {
        let s = Server::start(kind, &[("CATALOG__AUTH__CREATE_UNOWNED_DATASET", "true")]).await;
        let ds = s.ok("package_create", json!({"name": "neighbour"})).await;
        for (n, message) in [
            (100_000, "Must hold at most 10000 items"),
            (5_000, "Must hold at most 1000 items"),
        ] {
            let tags: Vec<Value> = (0..n)
                .map(|i| json!({"name": format!("tag{i:06}")}))
                .collect();
            let started = Instant::now();
            let big = s.call(
                "package_create",
                json!({"name": format!("tags-{n}"), "tags": tags}),
            );
            let patch = async {
                // A concurrent write of another dataset is not held up.
                tokio::time::sleep(Duration::from_millis(50)).await;
                let t = Instant::now();
                let (status, _) = s
                    .call(
                        "package_patch",
                        json!({"id": ds["id"], "title": format!("t{n}")}),
                    )
                    .await;
                (status, t.elapsed())
            };
            let ((status, body), (patch_status, patch_took)) = tokio::join!(big, patch);
            let took = started.elapsed();
            assert_eq!(status, 409, "{kind}: {body}");
            assert_eq!(body["error"]["tags"][0], message, "{kind}: {body}");
            assert!(
                took < Duration::from_secs(5),
                "{kind}: {n} tags took {took:?}"
            );
            assert_eq!(patch_status, 200);
            assert!(
                patch_took < Duration::from_secs(3),
                "{kind}: a concurrent patch waited {patch_took:?}"
            );
        }
        // At the bound, a dataset is written in one go.
        let tags: Vec<Value> = (0..1000)
            .map(|i| json!({"name": format!("tag{i:04}")}))
            .collect();
        let started = Instant::now();
        let created = s
            .ok("package_create", json!({"name": "many-tags", "tags": tags}))
            .await;
        assert_eq!(created["num_tags"], json!(1000), "{kind}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{kind}: 1000 tags took {:?}",
            started.elapsed()
        );
    }
}

/// A catalog of datasets with many resources, rendered by many clients at once: the renders
/// queue on the blocking pool while `status_show` keeps answering at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heavy_rdf_rendering_does_not_stall_other_requests() {
    let s = Server::start(
        StoreKind::Sqlite,
        &[
            ("CATALOG__AUTH__CREATE_UNOWNED_DATASET", "true"),
            ("CATALOGEXT__DCAT__DATASETS_PER_PAGE", "100"),
        ],
    )
    .await;
    let resources: Vec<Value> = (0..40)
        .map(|i| {
            json!({"url": format!("http://example.org/{i}.csv"), "name": format!("r{i}"),
                   "description": "A resource with a description long enough to be rendered. ".repeat(5)})
        })
        .collect();
    for i in 0..40 {
        s.ok(
            "package_create",
            json!({"name": format!("heavy-{i}"), "notes": "n".repeat(2000),
                   "tags": [{"name": "heavy"}], "resources": resources}),
        )
        .await;
    }
    // The request: one profile named 3,000 times (a 39 KB URL).
    let profiles = vec!["euro_dcat_ap"; 3000].join(",");
    let started = Instant::now();
    let heavy = (0..8).map(|i| {
        let url = if i % 2 == 0 {
            format!("{}/catalog.ttl?profiles={profiles}", s.base)
        } else {
            format!("{}/catalog.jsonld", s.base)
        };
        let client = s.client.clone();
        tokio::spawn(async move {
            let r = client.get(url).send().await.unwrap();
            (r.status().as_u16(), r.bytes().await.unwrap().len())
        })
    });
    let heavy: Vec<_> = heavy.collect();
    // Meanwhile, a cheap request answers promptly, again and again.
    let mut slowest = Duration::ZERO;
    for _ in 0..20 {
        let t = Instant::now();
        let (status, _) = s.call_as(None, "status_show", json!({})).await;
        assert_eq!(status, 200);
        slowest = slowest.max(t.elapsed());
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    for h in heavy {
        let (status, len) = h.await.unwrap();
        assert_eq!(status, 200);
        assert!(len > 100_000, "a full catalog page ({len} bytes)");
    }
    println!(
        "8 catalog pages of 40 datasets × 40 resources in {:?}; slowest status_show meanwhile {slowest:?}",
        started.elapsed()
    );
    assert!(
        slowest < Duration::from_millis(1000),
        "status_show waited {slowest:?} behind RDF rendering"
    );
}

/// Writes and reads of thousands of datasets: the `package_show` cache stays within its budget
/// and the server's memory does not grow with every dataset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_stays_bounded_while_datasets_are_written_and_read() {
    let budget = 4 * 1024 * 1024;
    let s = Server::start(
        StoreKind::Sqlite,
        &[
            ("CATALOG__AUTH__CREATE_UNOWNED_DATASET", "true"),
            ("CATALOG__CACHE__PACKAGE_SHOW_BYTES", &budget.to_string()),
        ],
    )
    .await;
    let batch = |from: usize, to: usize| {
        let s = &s;
        async move {
            for chunk in (from..to).collect::<Vec<_>>().chunks(8) {
                let calls = chunk.iter().map(|i| async move {
                    let name = format!("mem-{i}");
                    s.ok(
                        "package_create",
                        json!({"name": name, "notes": "x".repeat(8000), "tags": [{"name": "mem"}],
                               "resources": [{"url": "http://example.org/a.csv"}]}),
                    )
                    .await;
                    s.ok("package_show", json!({"id": name})).await;
                });
                join_all(calls).await;
            }
        }
    };
    batch(0, 1500).await;
    let warm = s.anon_rss_kib();
    batch(1500, 4500).await;
    let after = s.anon_rss_kib();
    let per_dataset = (after.saturating_sub(warm) * 1024) / 3000;
    println!(
        "anonymous RSS {warm} KiB after 1,500 datasets, {after} KiB after 4,500: {per_dataset} bytes per dataset"
    );
    // Each cached dict holds over 8 KiB of notes: an unbounded cache adds about 100 MiB here
    // (measured). What may grow meanwhile is bounded too: SQLite's page caches (2 MiB for each
    // of the pool's 8 connections) fill as the dataset and activity tables grow.
    assert!(
        after.saturating_sub(warm) < 40 * 1024,
        "RSS grew by {} KiB for 3,000 datasets with a {budget}-byte cache",
        after - warm
    );
}
