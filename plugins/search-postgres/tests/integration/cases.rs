//! Runs the shared search-backend cases (`conformance-tests/search-backend-cases.json`).

use std::path::PathBuf;

use catalog_framework::search::testkit::run_cases;
use catalog_plugin_search_postgres::PostgresBackend;

use crate::scratch::with_store;

pub(crate) fn cases_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance-tests/search-backend-cases.json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_search_backend_cases() {
    let text = std::fs::read_to_string(cases_path()).expect("reading the cases");
    with_store(|store, _| async move {
        let b = PostgresBackend::open(store.pool.clone(), store.backend)
            .await
            .expect("opening the backend");
        let report = run_cases(&b, "postgres", &text).await;
        println!(
            "search backend cases: {} passed, {} failed",
            report.passed,
            report.failures.len()
        );
        assert!(
            report.failures.is_empty(),
            "failing cases:\n{}",
            report.failures.join("\n")
        );
    })
    .await;
}
