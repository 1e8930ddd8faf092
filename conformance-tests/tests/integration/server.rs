//! Our server, started in-process on an ephemeral port, on SQLite or PostgreSQL.

// The plugins register their actions through inventory; naming the crates keeps them linked.
use catalog_plugin_activity as _;
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_datastore as _;
use catalog_plugin_dcat as _;
use catalog_plugin_harvest as _;
use catalog_plugin_legacy_api as _;
use catalog_plugin_related as _;
use catalog_plugin_schema as _;
use catalog_plugin_scheming as _;
use catalog_plugin_search_postgres as _;
use catalog_plugin_search_tantivy as _;
use catalog_plugin_views as _;
use catalog_plugin_web as _;

use catalog_conformance::{Assumptions, RunOptions, Runner};
use catalog_host::testkit::{StoreKind, TestServer};

const ADMIN_NAME: &str = "conformance_admin";

/// The settings [`start`] gives the server, as the run's assumptions.
pub(crate) fn test_config_assumptions() -> Assumptions {
    let mut a = Assumptions::new();
    for kv in [
        "catalog.auth.create_unowned_dataset=true",
        "catalog.auth.user_create_organizations=true",
        "catalog.auth.allow_dataset_collaborators=true",
        "catalogext.dcat.enable_content_negotiation=true",
        "catalogext.dcat.datasets_per_page=2",
        "catalog.datastore.sqlsearch.enabled=true",
        "scheming.type.conformance_sensor=true",
    ] {
        a.add_arg(kv).expect("key=value");
    }
    a
}

/// Starts the server on `kind` in its default configuration (what an operator gets with no
/// settings), with the sysadmin and token.
pub(crate) async fn start_default(kind: StoreKind) -> (TestServer, String) {
    let server = TestServer::start(kind, ADMIN_NAME, |_| {}).await;
    let token = server.token(ADMIN_NAME, "conformance").await;
    (server, token)
}

/// Starts the server on `kind` with the CKAN test-config options the cases assume; the
/// sysadmin the cases run as and its token.
pub(crate) async fn start(kind: StoreKind) -> (TestServer, String) {
    let server = TestServer::start(kind, ADMIN_NAME, |config| {
        // CKAN's own test configuration turns these on, and the cases follow it (spec §7.3).
        config.catalog.auth.create_unowned_dataset = true;
        config.catalog.auth.user_create_organizations = true;
        config.catalog.auth.allow_dataset_collaborators = true;
        // ckanext-dcat's test configuration turns content negotiation on; a small page size
        // lets the DCAT case page through a few datasets.
        config.catalogext.values.insert(
            "dcat".into(),
            serde_json::json!({"enable_content_negotiation": true, "datasets_per_page": 2}),
        );
        // The DataStore's SQL search is off by default, as in CKAN; the cases cover it.
        config.catalog.other.insert(
            "datastore".into(),
            serde_json::json!({"sqlsearch": {"enabled": true}}),
        );
        // A dataset type from a schema file, for the scheming scenario (type `dataset` keeps
        // the default schema).
        config.catalog.other.insert(
            "scheming".into(),
            serde_json::json!({
                "dataset_schemas": [concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/conformance_sensor.yaml")],
                "presets": "ckanext.scheming:presets.json ckanext.dcat.schemas:presets.yaml",
            }),
        );
        // Each store runs with its own search backend (testkit's choice): tantivy beside
        // SQLite, PostgreSQL full-text search beside PostgreSQL (the multi-node set-up).
    })
    .await;
    let token = server.token(ADMIN_NAME, "conformance").await;
    (server, token)
}

/// A runner for `server` that has asked its `status_show` (so its extensions are assumed).
pub(crate) async fn runner(server: &TestServer, opts: RunOptions) -> Runner {
    let mut runner = Runner::with_options(&server.base_url, opts).expect("building the runner");
    runner
        .probe()
        .await
        .expect("the server answers status_show");
    runner
}

/// The shipped cases and known-failures list.
pub(crate) fn shipped_suite() -> (
    Vec<catalog_conformance::Scenario>,
    catalog_conformance::KnownFailures,
) {
    catalog_conformance::load_suite(&catalog_conformance::default_cases_dir(), None)
        .expect("loading the cases")
}
