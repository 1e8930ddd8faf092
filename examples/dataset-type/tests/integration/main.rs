//! The `survey` dataset type through the core actions, in-process.

// Every plugin crate the test needs must be named, or the linker drops its registrations.
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_tantivy as _;
use example_dataset_type as _;

use catalog_framework::prelude::ErrorKind;
use catalog_host::testkit::{StoreKind, TestApp};
use serde_json::{json, Value};

/// An app on SQLite in a temporary directory, with no HTTP server (actions are called through
/// `ActionContext::run_top`, as the HTTP handler calls them), and the organization the
/// surveys belong to.
async fn start() -> TestApp {
    let t = TestApp::start(StoreKind::Sqlite).await;
    t.ok("organization_create", json!({"name": "statistics-office"}))
        .await;
    t
}

fn extra_keys(dataset: &Value) -> Vec<&str> {
    dataset["extras"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["key"].as_str())
        .collect()
}

#[tokio::test]
async fn a_valid_survey_is_created_and_shown_with_its_year() {
    let t = start().await;

    let created = t
        .ok(
            "package_create",
            json!({
                "name": "household-survey-1999",
                "title": "  Household survey 1999 ",
                "type": "survey",
                "survey_year": 1999,
                "owner_org": "statistics-office",
                "extras": [{"key": "sample_size", "value": "12000"}],
            }),
        )
        .await;
    assert_eq!(created["type"], json!("survey"));
    assert_eq!(created["survey_year"], json!(1999));
    // The default schema ran too: it trimmed the title.
    assert_eq!(created["title"], json!("Household survey 1999"));
    // The year travels as an extra internally, but is shown as a field only.
    assert_eq!(extra_keys(&created), ["sample_size"]);

    let shown = t
        .ok("package_show", json!({"id": "household-survey-1999"}))
        .await;
    assert_eq!(shown["survey_year"], json!(1999));
    assert_eq!(shown["id"], created["id"]);

    // Search results are shown dicts too.
    let found = t
        .ok("package_search", json!({"fq": "dataset_type:survey"}))
        .await;
    assert_eq!(found["count"], json!(1));
    assert_eq!(found["results"][0]["survey_year"], json!(1999));

    // A string of digits (what a form or query string sends) is an integer once stored.
    let from_form = t
        .ok(
            "package_create",
            json!({"name": "labour-survey", "type": "survey", "survey_year": "2001",
                   "owner_org": "statistics-office"}),
        )
        .await;
    assert_eq!(from_form["survey_year"], json!(2001));

    // package_patch merges the shown dict, so the year survives a patch of another field…
    let patched = t
        .ok(
            "package_patch",
            json!({"id": "labour-survey", "notes": "Quarterly."}),
        )
        .await;
    assert_eq!(patched["survey_year"], json!(2001));
    assert_eq!(patched["notes"], json!("Quarterly."));
    // …and can change it.
    let patched = t
        .ok(
            "package_patch",
            json!({"id": "labour-survey", "survey_year": 2005}),
        )
        .await;
    assert_eq!(patched["survey_year"], json!(2005));
    assert!(extra_keys(&patched).is_empty());
}

#[tokio::test]
async fn an_invalid_survey_gets_ckan_shaped_errors_and_is_not_stored() {
    let t = start().await;

    let err = t
        .fail(
            Some(&t.admin),
            "package_create",
            json!({"name": "old-survey", "type": "survey", "survey_year": 1850,
                   "owner_org": "statistics-office"}),
        )
        .await;
    assert_eq!(err.kind, ErrorKind::Validation);
    assert_eq!(err.status(), 409);
    assert_eq!(
        err.to_error_object(),
        json!({"survey_year": ["Must be a year between 1900 and 2100"], "__type": "Validation Error"})
    );

    // The default schema's errors and ours come in one answer.
    let err = t
        .fail(
            Some(&t.admin),
            "package_create",
            json!({"name": "Not A Valid Name", "type": "survey",
                   "owner_org": "statistics-office"}),
        )
        .await;
    assert_eq!(err.body["survey_year"], json!(["Missing value"]));
    assert!(err.body.contains_key("name"), "{}", err.to_error_object());

    let err = t
        .fail(
            Some(&t.admin),
            "package_create",
            json!({"name": "year-unknown", "type": "survey", "survey_year": "soon",
                   "owner_org": "statistics-office"}),
        )
        .await;
    assert_eq!(err.body["survey_year"], json!(["Invalid integer"]));

    // The year cannot be smuggled in as an extra.
    let err = t
        .fail(
            Some(&t.admin),
            "package_create",
            json!({"name": "twice", "type": "survey", "survey_year": 1999,
                   "extras": [{"key": "survey_year", "value": "1850"}],
                   "owner_org": "statistics-office"}),
        )
        .await;
    assert_eq!(
        err.body["survey_year"],
        json!(["Give survey_year as a field, not as an extra"])
    );

    // A failed create changes nothing.
    for name in ["old-survey", "year-unknown", "twice"] {
        let err = t
            .fail(Some(&t.admin), "package_show", json!({"id": name}))
            .await;
        assert_eq!(err.kind, ErrorKind::NotFound, "{name}");
    }

    // Ordinary datasets keep the default schema: no survey_year needed.
    let plain = t
        .ok(
            "package_create",
            json!({"name": "plain", "owner_org": "statistics-office"}),
        )
        .await;
    assert_eq!(plain["type"], json!("dataset"));
    assert!(plain.get("survey_year").is_none());
}
