//! The OpenAPI description of the default binary's Action API: its whole text is a snapshot,
//! so any change of the API surface (an action, a parameter, a help text) shows as a diff.

use catalog_plugin_activity as _;
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_datastore as _;
use catalog_plugin_dcat as _;
use catalog_plugin_harvest as _;
use catalog_plugin_legacy_api as _;
use catalog_plugin_related as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_postgres as _;
use catalog_plugin_search_tantivy as _;
use catalog_plugin_views as _;

use catalog_framework::prelude::Config;
use catalog_framework::prelude::Registry;

#[test]
fn openapi_document() {
    let registry = Registry::build().expect("no registration clash");
    let doc = catalog_host::openapi_document(&registry, &Config::default());
    insta::assert_json_snapshot!(doc);
}

#[test]
fn every_action_has_a_path_and_typed_actions_have_their_schema() {
    let registry = Registry::build().unwrap();
    let doc = catalog_host::openapi_document(&registry, &Config::default());
    let paths = doc["paths"].as_object().unwrap();
    assert_eq!(paths.len(), registry.actions().count());
    let show = &doc["paths"]["/api/3/action/package_show"];
    assert!(show["get"].is_object(), "read actions answer GET");
    let schema = &show["post"]["requestBody"]["content"]["application/json"]["schema"];
    assert!(schema["properties"]["id"].is_object(), "{schema}");
    assert!(doc["paths"]["/api/3/action/package_create"]["get"].is_null());
}
