//! The registered API surface of the default binary: every change shows up as a snapshot diff.

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
use catalog_plugin_web as _;

#[test]
fn registered_extensions() {
    let registry = catalog_framework::prelude::Registry::build().expect("no registration clash");
    insta::assert_json_snapshot!(registry.summary());
}

#[test]
fn every_action_but_the_sysadmin_only_ones_has_an_auth_function() {
    let registry = catalog_framework::prelude::Registry::build().unwrap();
    let summary = registry.summary();
    let auth: Vec<&str> = summary["auth_functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    let sysadmin_only = [
        "dataset_purge",
        "group_purge",
        "organization_purge",
        "search_index_rebuild",
        "package_owner_org_update",
        "user_delete",
        // These check the auth of the action they delegate to.
        "package_patch",
        "resource_patch",
        "package_resource_reorder",
        "group_patch",
        "organization_patch",
        "group_member_delete",
        "organization_member_delete",
        "user_patch",
    ];
    for action in summary["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
    {
        assert!(
            auth.contains(&action) || sysadmin_only.contains(&action),
            "{action} has no auth function and is not meant to be sysadmin-only"
        );
    }
}
