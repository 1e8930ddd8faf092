//! The `catalog-conformance` binary: its reports and its exit codes (docs/CONFORMANCE-REPORT.md).

use std::process::Command;

use catalog_host::testkit::StoreKind;
use serde_json::Value;

use crate::server;

const BIN: &str = env!("CARGO_BIN_EXE_catalog-conformance");

fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(BIN)
        .args(args)
        .env_remove("CATALOG_BASE_URL")
        .env_remove("CATALOG_TOKEN")
        .output()
        .expect("running catalog-conformance");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// Runs the binary on a directory of cases with a token, off the server's runtime threads.
async fn run_cases(
    base: &str,
    token: &str,
    cases: &std::path::Path,
    extra: &[&str],
) -> (i32, String) {
    let mut args: Vec<String> = ["--base-url", base, "--token", token, "--cases"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.push(cases.to_string_lossy().into_owned());
    args.extend(extra.iter().map(|s| s.to_string()));
    tokio::task::spawn_blocking(move || run(&args.iter().map(String::as_str).collect::<Vec<_>>()))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_writes_its_reports_and_exits_as_documented() {
    let (server, token) = server::start_default(StoreKind::Sqlite).await;
    let base = server.base_url.clone();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (json_path, junit_path, html_path) = (
        dir.path().join("r.json"),
        dir.path().join("r.xml"),
        dir.path().join("r.html"),
    );
    // Blocking child processes: run them off the server's runtime threads.
    let args: Vec<String> = [
        "--base-url",
        &base,
        "--read-only",
        "--rate",
        "100",
        "--json",
        json_path.to_str().unwrap(),
        "--junit",
        junit_path.to_str().unwrap(),
        "--html",
        html_path.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (code, out) = tokio::task::spawn_blocking(move || {
        run(&args.iter().map(String::as_str).collect::<Vec<_>>())
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("(profile catalog, read-only;"), "{out}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(report["schema"], "catalog-conformance-report/1");
    assert_eq!(report["read_only"], true);
    assert_eq!(report["success"], true);
    assert_eq!(report["totals"]["failed"], 0);
    assert!(report["assumptions"]
        .as_array()
        .unwrap()
        .contains(&Value::from("extension.dcat=true")));
    let junit = std::fs::read_to_string(&junit_path).unwrap();
    assert!(junit.starts_with("<?xml"), "{junit}");
    assert!(
        junit.contains("<testsuite id=\"0\" name=\"read-only\""),
        "{junit}"
    );
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.contains("class=\"verdict passed\""), "{html}");

    // A failing case: exit 1. Cases of one's own with --cases.
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    std::fs::write(
        cases.join("01-mine.json"),
        r#"{"name": "mine", "steps": [{"name": "wrong", "method": "GET", "action": "site_read", "expect_status": 500}]}"#,
    )
    .unwrap();
    let (code, out) = run_cases(&base, &token, &cases, &[]).await;
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAIL  mine/wrong"), "{out}");

    // A profile's override of a step that then cannot save a value: the steps using the value
    // are skipped with the override's reason, not failed.
    std::fs::write(
        cases.join("01-mine.json"),
        r#"{"name": "mine", "steps": [
            {"name": "make", "action": "package_show", "params": {"id": "none-{{run}}"}, "expect_status": 200, "save": {"x": "result.id"}},
            {"name": "use", "action": "package_show", "params": {"id": "{{x}}"}, "expect_status": 200}]}"#,
    )
    .unwrap();
    std::fs::create_dir(cases.join("profiles")).unwrap();
    std::fs::write(
        cases.join("profiles/other.json"),
        r#"{"overrides": {"mine/make": {"reason": "this product has no such dataset", "expect_status": 404}}}"#,
    )
    .unwrap();
    let (code, out) = run_cases(&base, &token, &cases, &["--profile", "other"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("skip  mine/use (package_show): profile other: step make answers otherwise: this product has no such dataset"),
        "{out}"
    );

    // A wrong invocation: exit 2.
    let b = base.clone();
    let (code, out) =
        tokio::task::spawn_blocking(move || run(&["--base-url", &b, "--profile", "nope"]))
            .await
            .unwrap();
    assert_eq!(code, 2, "no token without --read-only: {out}");
    let (b, t) = (base.clone(), token.clone());
    let (code, out) = tokio::task::spawn_blocking(move || {
        run(&["--base-url", &b, "--token", &t, "--profile", "nope"])
    })
    .await
    .unwrap();
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("no profile \"nope\""), "{out}");

    // Nothing listening: exit 3.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (code, out) = tokio::task::spawn_blocking(move || {
        run(&[
            "--base-url",
            &format!("http://127.0.0.1:{closed}"),
            "--read-only",
        ])
    })
    .await
    .unwrap();
    assert_eq!(code, 3, "{out}");

    let (code, out) = run(&["--base-url", "x", "--list-profiles"]);
    assert_eq!((code, out.trim()), (0, "catalog\nckan-2.12"));
}
