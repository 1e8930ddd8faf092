//! The registered API surface of the default binary: every change shows up as a snapshot diff.

#[test]
fn registered_extensions() {
    let registry = crate::test_plugin::shipped_registry();
    insta::assert_json_snapshot!(registry.summary());
}

#[test]
fn every_action_but_the_sysadmin_only_ones_has_an_auth_function() {
    let registry = crate::test_plugin::shipped_registry();
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
