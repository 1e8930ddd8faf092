//! The conformance cases against our own server, on SQLite and on PostgreSQL.
//!
//! Every step must pass (or be listed in `cases/known-failures.txt`), and every step's
//! redacted response is snapshotted under one name shared by both backends: a backend that
//! answers differently shows up as a snapshot diff, and as a direct comparison failure below
//! (which also guards `INSTA_UPDATE=always` from silently accepting the second backend).

mod cli;
mod not_built_list;
mod read_only;
mod server;

use catalog_conformance::{Outcome, Redactor, Report, RunOptions};
use catalog_host::testkit::{postgres, stores, StoreKind};
use serde_json::{json, Value};

/// One backend's run: the report and each snapshotted step's redacted `{status, body}`.
struct BackendRun {
    backend: &'static str,
    report: Report,
    snapshots: Vec<(String, String, Value)>,
}

async fn run_on(
    kind: StoreKind,
    scenarios: &[catalog_conformance::Scenario],
    known: &catalog_conformance::KnownFailures,
) -> BackendRun {
    let backend = match kind {
        StoreKind::Sqlite => "sqlite",
        StoreKind::Postgres => "postgres",
    };
    let (server, token) = server::start(kind).await;
    let runner = server::runner(
        &server,
        RunOptions {
            token: Some(token),
            assumptions: server::test_config_assumptions(),
            profile: catalog_conformance::DEFAULT_PROFILE.into(),
            ..RunOptions::default()
        },
    )
    .await;
    let report = runner.run_all(scenarios, known).await;
    let skipped: Vec<String> = report
        .steps
        .iter()
        .filter_map(|s| match &s.outcome {
            Outcome::Skipped(why) => Some(format!("{}: {why}", s.key())),
            _ => None,
        })
        .collect();
    assert!(
        skipped.is_empty(),
        "with every setting the cases need assumed, nothing is skipped:\n{}",
        skipped.join("\n")
    );
    println!("=== {backend} ===\n{report}\n");

    let redactor = Redactor::new()
        .literal(runner.run_suffix(), "[run]")
        .literal(&server.base_url, "[base_url]")
        // status_show lists the plugin of the search backend in use, which differs per store.
        .literal("search_tantivy", "[search_backend]")
        .literal("search_postgres", "[search_backend]");
    let snapshots = report
        .steps
        .iter()
        .filter(|s| s.snapshot && !matches!(s.outcome, Outcome::KnownFailure(_)))
        .map(|s| {
            let body = s
                .body
                .as_ref()
                .map(|b| redactor.redact(b))
                .unwrap_or(Value::Null);
            (
                format!("{}__{}", s.scenario, s.step),
                s.action.clone(),
                json!({"status": s.status, "body": body}),
            )
        })
        .collect();
    BackendRun {
        backend,
        report,
        snapshots,
    }
}

fn assert_all_passed(run: &BackendRun) {
    let failures: Vec<String> = run
        .report
        .steps
        .iter()
        .filter(|s| s.outcome.is_failure())
        .map(|s| match &s.outcome {
            Outcome::Failed(why) => format!("{}: {why}", s.key()),
            _ => format!("{}: passed but is listed in known-failures.txt", s.key()),
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} conformance steps failed on {} ({}):\n{}",
        failures.len(),
        run.backend,
        run.report.summary(),
        failures.join("\n")
    );
}

fn assert_same_responses(a: &BackendRun, b: &BackendRun) {
    let differing: Vec<String> = a
        .snapshots
        .iter()
        .zip(&b.snapshots)
        .filter(|(x, y)| x != y)
        .map(|((name, _, x), (_, _, y))| {
            format!("{name}:\n  {}: {x}\n  {}: {y}", a.backend, b.backend)
        })
        .collect();
    assert_eq!(
        a.snapshots.len(),
        b.snapshots.len(),
        "both runs snapshot the same steps"
    );
    assert!(
        differing.is_empty(),
        "{} and {} answered differently:\n{}",
        a.backend,
        b.backend,
        differing.join("\n")
    );
}

fn assert_snapshots(run: &BackendRun) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    for (name, action, value) in &run.snapshots {
        settings.set_description(action.clone());
        settings.bind(|| insta::assert_json_snapshot!(name.as_str(), value));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_cases_pass_on_sqlite_and_postgresql() {
    let (scenarios, known) =
        catalog_conformance::load_suite(&catalog_conformance::default_cases_dir(), None)
            .expect("loading the cases");
    assert!(!scenarios.is_empty(), "no cases found");

    let sqlite = run_on(StoreKind::Sqlite, &scenarios, &known).await;
    let postgres = match postgres().await {
        Some(kind) => Some(run_on(kind, &scenarios, &known).await),
        None => None,
    };

    assert_all_passed(&sqlite);
    if let Some(pg) = &postgres {
        assert_all_passed(pg);
        assert_same_responses(&sqlite, pg);
    }
    assert_snapshots(&sqlite);
    if let Some(pg) = &postgres {
        assert_snapshots(pg);
    }
}

/// A deployment in its default configuration, run with no assumptions: every case either
/// passes or is skipped for a setting it needs ("needs <setting>"); none fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_default_configuration_has_no_failures() {
    let (scenarios, known) = server::shipped_suite();
    for kind in stores().await {
        let (server, token) = server::start_default(kind).await;
        let runner = server::runner(
            &server,
            RunOptions {
                token: Some(token),
                profile: catalog_conformance::DEFAULT_PROFILE.into(),
                ..RunOptions::default()
            },
        )
        .await;
        let report = runner.run_all(&scenarios, &known).await;
        println!("=== default configuration, {kind:?} ===\n{report}\n");
        let run = BackendRun {
            backend: "default configuration",
            report,
            snapshots: Vec::new(),
        };
        assert_all_passed(&run);
        let skipped = run.report.skipped();
        assert!(
            skipped < run.report.steps.len() / 4,
            "{kind:?}: {skipped} of {} steps skipped",
            run.report.steps.len()
        );
        for s in &run.report.steps {
            if let Outcome::Skipped(why) = &s.outcome {
                assert!(
                    why.starts_with("needs ") || why.contains("(via step "),
                    "{}: skipped for another reason: {why}",
                    s.key()
                );
            }
        }
    }
}
