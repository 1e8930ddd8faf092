//! `--read-only` against a portal with content: it passes, sends nothing but GET requests of
//! paths and read actions, and leaves every list and the activity stream as they were (checked
//! from outside, through the API, before and after). Against an empty portal the steps that
//! need content are skipped with the reason, and nothing fails.

use catalog_conformance::{Outcome, RunOptions, Runner};
use catalog_host::testkit::{stores, StoreKind, TestServer};
use serde_json::{json, Value};

use crate::server;

/// What a read-only run must not change, read through the API as the sysadmin.
async fn state(server: &TestServer) -> Value {
    let mut out = serde_json::Map::new();
    for (action, params) in [
        ("package_list", json!({})),
        ("organization_list", json!({"all_fields": true})),
        ("group_list", json!({"all_fields": true})),
        ("user_list", json!({})),
        ("tag_list", json!({})),
        (
            "package_search",
            json!({"include_private": true, "rows": 1000, "fl": "id,name,metadata_modified"}),
        ),
        (
            "recently_changed_packages_activity_list",
            json!({"limit": 100}),
        ),
        ("api_token_list", json!({"user_id": "conformance_admin"})),
    ] {
        let mut v = server.ok(action, params).await;
        // Using a token records when it was last used; that is not the portal's content.
        if let Some(tokens) = v.as_array_mut() {
            for t in tokens {
                if let Some(t) = t.as_object_mut() {
                    t.remove("last_access");
                }
            }
        }
        out.insert(action.into(), v);
    }
    Value::Object(out)
}

/// A small portal: two organizations, a group, public datasets with resources, a private one.
async fn fill(server: &TestServer) {
    server
        .ok("organization_create", json!({"name": "ro-org-a"}))
        .await;
    server
        .ok("organization_create", json!({"name": "ro-org-b"}))
        .await;
    server.ok("group_create", json!({"name": "ro-group"})).await;
    for i in 0..4 {
        server
            .ok(
                "package_create",
                json!({"name": format!("ro-dataset-{i}"), "title": format!("Read-only dataset {i}"),
                       "owner_org": if i % 2 == 0 { "ro-org-a" } else { "ro-org-b" },
                       "license_id": "cc-by", "tags": [{"name": "economy"}],
                       "groups": [{"name": "ro-group"}],
                       "resources": [{"url": "http://example.org/data.csv", "format": "CSV"}]}),
            )
            .await;
    }
    server
        .ok(
            "package_create",
            json!({"name": "ro-private", "owner_org": "ro-org-a", "private": true}),
        )
        .await;
}

fn assert_reads_only(runner: &Runner) {
    let sent = runner.requests();
    assert!(!sent.is_empty(), "the run sent requests");
    for (method, url) in &sent {
        assert_eq!(method, "GET", "{url}");
        if let Some(action) = url.split("/api/3/action/").nth(1) {
            let name = action.split('?').next().unwrap_or_default();
            assert!(
                catalog_conformance::is_read_action(name) || name == "conformance_no_such_action",
                "a read-only run called {name}"
            );
        }
    }
}

fn assert_no_failures(kind: StoreKind, report: &catalog_conformance::Report) {
    let failed: Vec<String> = report
        .steps
        .iter()
        .filter(|s| s.outcome.is_failure())
        .map(|s| format!("{}: {:?}", s.key(), s.outcome))
        .collect();
    assert!(failed.is_empty(), "{kind:?}:\n{}", failed.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_runs_read_and_change_nothing() {
    let (scenarios, known) = server::shipped_suite();
    for kind in stores().await {
        let (server, token) = server::start_default(kind).await;

        // An empty portal: nothing to show, so the steps about a dataset, an organization or
        // a group are skipped, with the reason; nothing fails.
        let empty = server::runner(
            &server,
            RunOptions {
                read_only: true,
                ..RunOptions::default()
            },
        )
        .await;
        let report = empty.run_all(&scenarios, &known).await;
        assert_no_failures(kind, &report);
        assert!(
            report.steps.iter().all(|s| s.scenario == "read-only"),
            "only the read-only scenarios run"
        );
        let skipped = report
            .steps
            .iter()
            .find(|s| s.step == "dataset_show")
            .map(|s| s.outcome.clone());
        assert!(
            matches!(&skipped, Some(Outcome::Skipped(w)) if w.contains("has nothing at result.0")),
            "{kind:?}: {skipped:?}"
        );
        assert_reads_only(&empty);

        fill(&server).await;
        let before = state(&server).await;
        // Anonymous, then with the sysadmin's token (which only widens what is read), at a
        // bounded rate.
        for token in [None, Some(token.clone())] {
            let runner = server::runner(
                &server,
                RunOptions {
                    token,
                    read_only: true,
                    rate: Some(200.0),
                    max_requests: Some(1000),
                    ..RunOptions::default()
                },
            )
            .await;
            let report = runner.run_all(&scenarios, &known).await;
            println!("=== read-only, {kind:?} ===\n{report}\n");
            assert_no_failures(kind, &report);
            assert_reads_only(&runner);
            let skipped: Vec<String> = report
                .steps
                .iter()
                .filter_map(|s| match &s.outcome {
                    Outcome::Skipped(w) => Some(format!("{}: {w}", s.key())),
                    _ => None,
                })
                .collect();
            // Content negotiation is off by default: its two steps are the only skips.
            assert_eq!(skipped.len(), 2, "{kind:?}: {skipped:?}");
            assert!(skipped
                .iter()
                .all(|s| s.contains("enable_content_negotiation")));
        }
        let after = state(&server).await;
        assert_eq!(
            before, after,
            "{kind:?}: a read-only run changed the portal"
        );

        // The request budget: after it is spent, the remaining steps are skipped.
        let capped = server::runner(
            &server,
            RunOptions {
                read_only: true,
                max_requests: Some(6),
                ..RunOptions::default()
            },
        )
        .await;
        let report = capped.run_all(&scenarios, &known).await;
        assert_eq!(capped.requests().len(), 6, "{kind:?}");
        assert_no_failures(kind, &report);
        assert!(report
            .steps
            .iter()
            .any(|s| matches!(&s.outcome, Outcome::Skipped(w) if w.contains("--max-requests 6"))));
    }
}

/// The runner refuses to send a write in a read-only run even when a case asks for one (a case
/// file's read_only flag is checked when it loads; this is the second wall).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_runner_refuses_writes_before_sending() {
    let (server, _) = server::start_default(StoreKind::Sqlite).await;
    let sc: catalog_conformance::Scenario = serde_json::from_value(json!({
        "name": "sneaky", "steps": [
            {"name": "create", "action": "organization_create", "params": {"name": "sneaky-org"},
             "expect_status": 200},
            {"name": "get_create", "method": "GET", "action": "organization_create",
             "params": {"name": "sneaky-org"}, "expect_status": 200}
        ]
    }))
    .expect("a scenario");
    let mut sc = sc;
    sc.read_only = true; // as if the load-time check were bypassed
    let runner = Runner::with_options(
        &server.base_url,
        RunOptions {
            read_only: true,
            ..RunOptions::default()
        },
    )
    .expect("runner");
    let report = runner
        .run_all(&[sc], &catalog_conformance::KnownFailures::default())
        .await;
    assert!(runner.requests().is_empty(), "{:?}", runner.requests());
    for s in &report.steps {
        assert!(
            matches!(&s.outcome, Outcome::Failed(w) if w.contains("refused to send")),
            "{s:?}"
        );
    }
    let orgs = server.ok("organization_list", json!({})).await;
    assert_eq!(orgs, json!([]));
}
