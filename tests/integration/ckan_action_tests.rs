//! What CKAN 2.12's own Action API tests expect and main answered otherwise (issue 46, items
//! 12-20), on SQLite and PostgreSQL.

use catalog_host::testkit::{stores, TestApp};
use serde_json::json;

/// The organization `office` with the user `editor` as its editor (returned as a caller).
async fn office_with_editor(t: &TestApp) -> catalog_framework::context::Principal {
    t.ok("organization_create", json!({"name": "office"})).await;
    let editor = t.user("editor").await;
    t.ok(
        "organization_member_create",
        json!({"id": "office", "username": "editor", "role": "editor"}),
    )
    .await;
    editor
}

/// 14: each value of `key` in alice's own user_patch is refused with `messages`.
async fn refused_user_values(
    t: &TestApp,
    alice: &catalog_framework::context::Principal,
    key: &str,
    values: &[serde_json::Value],
    messages: serde_json::Value,
) {
    for v in values {
        let e = t
            .err(Some(alice), "user_patch", json!({"id": "alice", key: v}))
            .await;
        assert_eq!(e[key], messages, "{key}: {v}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extras_ids_group_states_permissions_and_capacities_as_ckan_checks_them() {
    for kind in stores().await {
        let t =
            TestApp::start_with(kind, |c| c.catalog.auth.allow_dataset_collaborators = true).await;
        let editor = office_with_editor(&t).await;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_site_user_plugin_extras_and_user_update_types_as_ckan_checks_them() {
    for kind in stores().await {
        let t = TestApp::start(kind).await;
        // 12: another sysadmin cannot demote the site user.
        let site = t.ignoring_auth("get_site_user", json!({})).await.unwrap();
        let other = t.sysadmin("other-admin").await;
        let e = t
            .err(
                Some(&other),
                "user_patch",
                json!({"id": site["name"], "sysadmin": false}),
            )
            .await;
        // (The site user has no e-mail address, so CKAN's answer also holds
        // `"email": ["Missing value"]`.)
        assert_eq!(
            e["sysadmin"],
            json!(["Cannot modify sysadmin privileges for system user"]),
            "{kind}: {e}"
        );
        let shown = t.ok("user_show", json!({"id": site["name"]})).await;
        assert_eq!(shown["sysadmin"], true, "{kind}: still a sysadmin");
        // Another user's flag still changes.
        let alice = t.user("alice").await;
        let r = t
            .ok_as(
                Some(&other),
                "user_patch",
                json!({"id": "alice", "sysadmin": true}),
            )
            .await;
        assert_eq!(r["sysadmin"], true, "{kind}");
        t.ok("user_patch", json!({"id": "alice", "sysadmin": false}))
            .await;

        // 13: plugin_extras are stored for a sysadmin, nested values replaced, and returned.
        let u = t
            .ok(
                "user_create",
                json!({"name": "bob", "email": "bob@example.org", "password": "bob-password",
                       "plugin_extras": {"plugin1": {"key1": "value1"}}}),
            )
            .await;
        assert_eq!(
            u["plugin_extras"],
            json!({"plugin1": {"key1": "value1"}}),
            "{kind}"
        );
        let r = t
            .ok(
                "user_patch",
                json!({"id": "bob",
                       "plugin_extras": {"plugin1": {"key1": "value1.2", "key2": "value2"}}}),
            )
            .await;
        assert_eq!(
            r["plugin_extras"],
            json!({"plugin1": {"key1": "value1.2", "key2": "value2"}}),
            "{kind}"
        );
        let shown = t
            .ok(
                "user_show",
                json!({"id": "bob", "include_plugin_extras": true}),
            )
            .await;
        assert_eq!(
            shown["plugin_extras"]["plugin1"]["key2"], "value2",
            "{kind}"
        );
        // A normal user's own plugin_extras are ignored, and not shown back.
        let r = t
            .ok_as(
                Some(&alice),
                "user_patch",
                json!({"id": "alice", "plugin_extras": {"mine": true}}),
            )
            .await;
        assert!(r.get("plugin_extras").is_none(), "{kind}: {r}");
        let shown = t
            .ok(
                "user_show",
                json!({"id": "alice", "include_plugin_extras": true}),
            )
            .await;
        assert_eq!(shown["plugin_extras"], json!(null), "{kind}");
        let e = t
            .err(
                None,
                "user_patch",
                json!({"id": "bob", "plugin_extras": [1]}),
            )
            .await;
        assert_eq!(e["__type"], "Authorization Error", "{kind}: {e}");
        let e = t
            .err(
                Some(&other),
                "user_patch",
                json!({"id": "bob", "plugin_extras": [1]}),
            )
            .await;
        assert_eq!(
            e["plugin_extras"],
            json!(["The value should be a valid JSON object"]),
            "{kind}"
        );

        // 14: a name that is no string, a password that is no string (null included).
        refused_user_values(
            &t,
            &alice,
            "name",
            &[json!(12), json!(true)],
            json!(["Names must be strings", "User names must be strings"]),
        )
        .await;
        refused_user_values(
            &t,
            &alice,
            "password",
            &[json!(null), json!(12345678)],
            json!(["Passwords must be strings"]),
        )
        .await;
        let e = t
            .err(
                Some(&other),
                "user_create",
                json!({"name": "carol", "email": "carol@example.org", "password": null}),
            )
            .await;
        assert_eq!(
            e["password"],
            json!(["Passwords must be strings", "Missing value"]),
            "{kind}"
        );
        // An empty password on update leaves it as it was.
        t.ok_as(
            Some(&alice),
            "user_patch",
            json!({"id": "alice", "password": ""}),
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_that_changes_nothing_keeps_metadata_modified() {
    for kind in stores().await {
        let t = TestApp::start(kind).await;
        let editor = office_with_editor(&t).await;
        let d = t
            .ok(
                "package_create",
                json!({"name": "steady", "owner_org": "office",
                       "metadata_modified": "2020-02-25T12:00:00"}),
            )
            .await;
        assert_eq!(d["metadata_modified"], "2020-02-25T12:00:00", "{kind}");
        // 19: the dict as shown, sent back by a sysadmin without its metadata_modified, and by
        // a normal user with another one (which only a sysadmin may set), changes nothing.
        let mut same = d.clone();
        same.as_object_mut().unwrap().remove("metadata_modified");
        let r = t.ok("package_update", same).await;
        assert_eq!(
            r["metadata_modified"], "2020-02-25T12:00:00",
            "{kind}: sysadmin"
        );
        let mut same = d.clone();
        same["metadata_modified"] = json!("2021-01-01T11:01:00");
        let r = t.ok_as(Some(&editor), "package_update", same).await;
        assert_eq!(
            r["metadata_modified"], "2020-02-25T12:00:00",
            "{kind}: editor"
        );
        // Without the keys a package_show adds (owner_org, tags, resources): still no change.
        let mut fewer = d.clone();
        for k in ["owner_org", "tags", "resources", "metadata_modified"] {
            fewer.as_object_mut().unwrap().remove(k);
        }
        let r = t.ok_as(Some(&editor), "package_update", fewer).await;
        assert_eq!(
            r["metadata_modified"], "2020-02-25T12:00:00",
            "{kind}: fewer keys"
        );
        // A real change is dated now.
        let r = t
            .ok_as(
                Some(&editor),
                "package_patch",
                json!({"id": "steady", "title": "Changed"}),
            )
            .await;
        assert_ne!(
            r["metadata_modified"], "2020-02-25T12:00:00",
            "{kind}: changed"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_organization_with_datasets_is_purged_only_where_datasets_may_be_unowned() {
    for kind in stores().await {
        // 21: as CKAN, by the create_unowned_dataset setting.
        for unowned in [false, true] {
            let t = TestApp::start_with(kind, |c| {
                c.catalog.auth.create_unowned_dataset = unowned;
            })
            .await;
            t.ok("organization_create", json!({"name": "office"})).await;
            t.ok(
                "package_create",
                json!({"name": "kept", "owner_org": "office", "private": true}),
            )
            .await;
            let r = t
                .call(
                    Some(&t.admin),
                    "organization_purge",
                    json!({"id": "office"}),
                )
                .await;
            if unowned {
                assert!(
                    r.is_ok(),
                    "{kind}: {:?}",
                    r.err().map(|e| e.to_error_object())
                );
                let d = t.ok("package_show", json!({"id": "kept"})).await;
                assert_eq!(d["owner_org"], json!(null), "{kind}");
                assert_eq!(d["private"], false, "{kind}");
            } else {
                let e = r.unwrap_err().to_error_object();
                assert_eq!(
                    e["message"], "Organization cannot be purged while it still has datasets",
                    "{kind}"
                );
                t.ok("organization_show", json!({"id": "office"})).await;
            }
        }
    }
}
