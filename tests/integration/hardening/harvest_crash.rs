//! `kill -9` while a harvest runs (the `ckan` harvester reading another catalog, page by page):
//! after a restart the run resumes where it stopped and ends as an uninterrupted run would —
//! every remote dataset once, none twice, no errors — and a second run writes nothing.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::support::{stores, Server};

const DATASETS: usize = 300;

async fn job(server: &Server, id: &str) -> Value {
    server.ok("harvest_job_show", json!({"id": id})).await
}

async fn finished(server: &Server, id: &str) -> Value {
    let started = Instant::now();
    loop {
        let j = job(server, id).await;
        if j["status"] == "Finished" {
            return j;
        }
        assert!(
            started.elapsed() < Duration::from_secs(240),
            "the job did not finish: {j}\n{}",
            server.errors()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_during_a_harvest_resumes_without_duplicates() {
    for kind in stores().await {
        let t0 = Instant::now();
        let a = Server::start(kind, &[]).await;
        a.ok("organization_create", json!({"name": "remote-org"}))
            .await;
        for i in 0..DATASETS {
            a.ok(
                "package_create",
                json!({"name": format!("src-{i:03}"), "title": format!("Source {i}"),
                       "owner_org": "remote-org", "tags": [{"name": "harvested"}],
                       "resources": [{"url": format!("https://example.org/{i}.csv"), "format": "CSV"}]}),
            )
            .await;
        }
        eprintln!("{kind}: source filled after {:?}", t0.elapsed());
        let mut b = Server::start(
            kind,
            &[
                ("CATALOG__HARVEST__ALLOW_HOSTS", "[127.0.0.1]"),
                ("CATALOG__HARVEST__BATCH_SIZE", "5"),
                ("CATALOG__JOBS__STALE_AFTER_SECS", "2"),
                ("CATALOG__JOBS__POLL_INTERVAL_MS", "100"),
            ],
        )
        .await;
        b.ok("organization_create", json!({"name": "mirror"})).await;
        let src = b
            .ok(
                "harvest_source_create",
                json!({"name": "remote", "url": a.base, "source_type": "ckan",
                       "owner_org": "mirror", "config": "{\"rows\": 10}"}),
            )
            .await["id"]
            .as_str()
            .unwrap()
            .to_string();
        let id = b.ok("harvest_job_create", json!({"source_id": src})).await["id"]
            .as_str()
            .unwrap()
            .to_string();
        // Killed once part of the datasets are written.
        let started = Instant::now();
        loop {
            let j = job(&b, &id).await;
            assert_ne!(
                j["status"], "Finished",
                "{kind}: the run ended before the kill: {j}"
            );
            if j["stats"]["added"].as_u64().unwrap_or(0) >= 40 {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(120), "{kind}: {j}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        eprintln!("{kind}: killed after {:?}", t0.elapsed());
        b.kill9();
        b.restart().await;
        let j = finished(&b, &id).await;
        eprintln!("{kind}: finished after {:?}", t0.elapsed());
        assert_eq!(j["stats"]["added"], DATASETS, "{kind}: {j}");
        assert_eq!(j["stats"]["errored"], 0, "{kind}: {j}");
        assert_eq!(j["gather_error_summary"], json!([]), "{kind}: {j}");
        let found = b
            .ok(
                "package_search",
                json!({"fq": format!("harvest_source_id:{src}"), "rows": 0}),
            )
            .await;
        assert_eq!(found["count"], DATASETS, "{kind}: {found}");
        let all = b.ok("package_search", json!({"rows": 0})).await;
        assert_eq!(all["count"], DATASETS, "{kind}: no dataset twice");
        for i in [0, 150, DATASETS - 1] {
            let d = b
                .ok("package_show", json!({"id": format!("src-{i:03}")}))
                .await;
            assert_eq!(d["state"], "active", "{kind}");
        }
        let objects = b.ok("harvest_object_list", json!({"source_id": src})).await;
        assert_eq!(objects.as_array().unwrap().len(), DATASETS, "{kind}");
        // The same source again: nothing to write.
        let again = b.ok("harvest_job_create", json!({"source_id": src})).await["id"]
            .as_str()
            .unwrap()
            .to_string();
        let j = finished(&b, &again).await;
        eprintln!("{kind}: second run finished after {:?}", t0.elapsed());
        assert_eq!(j["stats"]["added"], 0, "{kind}: {j}");
        assert_eq!(j["stats"]["updated"], 0, "{kind}: {j}");
    }
}

/// `catalog harvest …` beside a running server: a dry run says what a run would do and writes
/// nothing, `run --source` runs the job in the foreground to its end, `sources` and `jobs` list
/// them, `abort` and `purge-history` answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_harvest_command_runs_sources_in_the_foreground() {
    for kind in stores().await {
        let a = Server::start(kind, &[]).await;
        a.ok("organization_create", json!({"name": "remote-org"}))
            .await;
        for i in 0..30 {
            a.ok(
                "package_create",
                json!({"name": format!("cli-{i:02}"), "owner_org": "remote-org"}),
            )
            .await;
        }
        let b = Server::start(kind, &[("CATALOG__HARVEST__ALLOW_HOSTS", "[127.0.0.1]")]).await;
        b.ok("organization_create", json!({"name": "mirror"})).await;
        b.ok(
            "harvest_source_create",
            json!({"name": "remote", "url": a.base, "source_type": "ckan",
                   "owner_org": "mirror", "config": "{\"rows\": 7}"}),
        )
        .await;
        let dry = b.cli(&["harvest", "run", "--source", "remote", "--dry-run"]);
        let report: serde_json::Value = serde_json::from_str(&dry).expect("a JSON report");
        assert_eq!(report["would_add"], 30, "{kind}: {dry}");
        assert_eq!(
            report["pages"], 6,
            "{kind}: five pages of datasets, then an empty one: {dry}"
        );
        let count = b.ok("package_search", json!({"rows": 0})).await;
        assert_eq!(count["count"], 0, "{kind}: a dry run writes nothing");

        let (ok, out) = b.cli_status(&["harvest", "run", "--source", "remote"]);
        assert!(ok, "{kind}: {out}");
        let jobs = b
            .ok("harvest_job_list", json!({"source_id": "remote"}))
            .await;
        assert_eq!(jobs[0]["status"], "Finished", "{kind}: {jobs}");
        assert_eq!(jobs[0]["stats"]["added"], 30, "{kind}: {jobs}");
        // The command is another process: the server applies its writes from the change feed
        // within its poll (a quarter second), as another node's.
        let mut found = json!(null);
        for _ in 0..40 {
            found = b.ok("package_search", json!({"rows": 0})).await;
            if found["count"] == 30 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_eq!(found["count"], 30, "{kind}: the index caught up: {found}");

        let sources = b.cli(&["harvest", "sources"]);
        assert!(
            sources.contains("remote\tckan\tMANUAL\tactive"),
            "{kind}: {sources}"
        );
        let listed = b.cli(&["harvest", "jobs", "--source", "remote"]);
        assert!(listed.contains("Finished"), "{kind}: {listed}");
        let (ok, out) = b.cli_status(&["harvest", "abort", "remote"]);
        assert!(ok && out.contains("Finished"), "{kind}: {out}");
        let purged = b.cli(&["harvest", "purge-history", "--older-than-days", "0"]);
        assert!(purged.starts_with("Purged "), "{kind}: {purged}");
        let (ok, out) = b.cli_status(&["harvest", "run", "--source", "no-such-source"]);
        assert!(!ok && out.contains("no-such-source"), "{kind}: {out}");
    }
}
