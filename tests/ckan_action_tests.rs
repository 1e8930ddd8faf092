//! What CKAN 2.12's own Action API tests expect and main answered otherwise (issue 46, items
//! 15, 17, 18, 20), on SQLite and PostgreSQL.

use catalog_host::testkit::{stores, TestApp};
use serde_json::json;

use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_postgres as _;
use catalog_plugin_search_tantivy as _;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extras_ids_group_states_permissions_and_capacities_as_ckan_checks_them() {
    for kind in stores().await {
        let t =
            TestApp::start_with(kind, |c| c.catalog.auth.allow_dataset_collaborators = true).await;
        t.ok("organization_create", json!({"name": "office"})).await;
        let editor = t.user("editor").await;
        t.ok(
            "organization_member_create",
            json!({"id": "office", "username": "editor", "role": "editor"}),
        )
        .await;

        // 15: an `id` inside extras from a normal user is refused, per extra.
        let e = t
            .err(
                Some(&editor),
                "package_create",
                json!({"name": "with-extra-id", "owner_org": "office",
                       "extras": [{"key": "a", "value": "1", "id": "x"}]}),
            )
            .await;
        assert_eq!(
            e,
            json!({"__type": "Validation Error",
                   "extras": [{"id": ["The input field id was not expected."]}]}),
            "{kind}"
        );
        assert!(
            t.call(None, "package_show", json!({"id": "with-extra-id"}))
                .await
                .is_err(),
            "{kind}: nothing was made"
        );

        // 17: a sysadmin may create a group already deleted.
        let g = t
            .ok(
                "group_create",
                json!({"name": "gone-group", "state": "deleted"}),
            )
            .await;
        assert_eq!(g["state"], "deleted", "{kind}");
        let o = t
            .ok(
                "organization_create",
                json!({"name": "gone-org", "state": "deleted"}),
            )
            .await;
        assert_eq!(o["state"], "deleted", "{kind}");

        // 18: an invalid permission, null included, lists nothing.
        for permission in [json!(null), json!(7), json!("no_such_permission")] {
            let r = t
                .ok_as(
                    Some(&editor),
                    "organization_list_for_user",
                    json!({"permission": permission}),
                )
                .await;
            assert_eq!(r, json!([]), "{kind}: {permission}");
        }
        let r = t
            .ok_as(Some(&editor), "organization_list_for_user", json!({}))
            .await;
        assert_eq!(r.as_array().map(Vec::len), Some(1), "{kind}: manage_group");

        // 20: an unknown capacity is a validation error.
        let e = t
            .err(
                Some(&editor),
                "package_collaborator_list_for_user",
                json!({"id": editor.id, "capacity": "owner"}),
            )
            .await;
        assert_eq!(e["__type"], "Validation Error", "{kind}: {e}");
        assert!(
            e.to_string().contains("Capacity must be one of"),
            "{kind}: {e}"
        );
    }
}
