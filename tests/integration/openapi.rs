//! The OpenAPI description of the default binary's Action API: its whole text is a snapshot,
//! so any change of the API surface (an action, a parameter, a help text) shows as a diff.

use catalog_framework::prelude::Config;

#[test]
fn openapi_document() {
    let registry = crate::test_plugin::shipped_registry();
    let doc = catalog_host::openapi_document(&registry, &Config::default());
    insta::assert_json_snapshot!(doc);
}

#[test]
fn every_action_has_a_path_and_typed_actions_have_their_schema() {
    let registry = crate::test_plugin::shipped_registry();
    let doc = catalog_host::openapi_document(&registry, &Config::default());
    let paths = doc["paths"].as_object().unwrap();
    assert_eq!(paths.len(), registry.actions().count());
    let show = &doc["paths"]["/api/3/action/package_show"];
    assert!(show["get"].is_object(), "read actions answer GET");
    let schema = &show["post"]["requestBody"]["content"]["application/json"]["schema"];
    assert!(schema["properties"]["id"].is_object(), "{schema}");
    assert!(doc["paths"]["/api/3/action/package_create"]["get"].is_null());
}
