//! The resource actions write their dataset through `package_update` from the row they loaded
//! (no second read of it) and leave what they do not change as it was: the dataset's group and
//! organization memberships, its name. A new resource without an id gets one from
//! `package_update`. On SQLite and PostgreSQL.

use catalog_framework::prelude::*;
use catalog_host::testkit::{stores, TestApp};

/// The datasets `member_list` gives for a group or organization (ids).
async fn members(t: &TestApp, group: &str) -> Vec<String> {
    let list = t
        .ok(
            "member_list",
            json!({"id": group, "object_type": "package"}),
        )
        .await;
    let mut ids: Vec<String> = list
        .as_array()
        .expect("a list")
        .iter()
        .map(|m| m[0].as_str().expect("an id").to_string())
        .collect();
    ids.sort();
    ids
}

fn resource_ids(dataset: &Value) -> Vec<String> {
    dataset["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|r| r["id"].as_str().expect("an id").to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_writes_keep_memberships_and_answer_as_package_show() {
    for kind in stores().await {
        let t = TestApp::start(kind).await;
        t.ok("organization_create", json!({"name": "org-a"})).await;
        t.ok("organization_create", json!({"name": "org-b"})).await;
        t.ok("group_create", json!({"name": "grp"})).await;
        let ds = t
            .ok(
                "package_create",
                json!({"name": "ds", "owner_org": "org-a", "groups": [{"name": "grp"}],
                       "resources": [{"url": "https://example.org/a.csv"}]}),
            )
            .await;
        let id = ds["id"].as_str().unwrap().to_string();
        let other = t
            .ok(
                "package_create",
                json!({"name": "other", "owner_org": "org-a",
                       "resources": [{"url": "https://example.org/o.csv"}]}),
            )
            .await;

        // A new resource without an id: package_update gives it one; it is the last resource,
        // and the answer is the resource as package_show shows it.
        let created = t
            .ok(
                "resource_create",
                json!({"package_id": "ds", "name": "second", "url": "https://example.org/b.csv"}),
            )
            .await;
        let new_id = created["id"].as_str().expect("an id").to_string();
        assert_eq!(new_id.len(), 36, "{kind:?}: {created}");
        let shown = t.ok("package_show", json!({"id": "ds"})).await;
        assert_eq!(resource_ids(&shown).last(), Some(&new_id), "{kind:?}");
        assert_eq!(shown["resources"][1], created, "{kind:?}");
        assert_eq!(created["position"], 1, "{kind:?}");
        assert_ne!(
            shown["metadata_modified"], ds["metadata_modified"],
            "{kind:?}: a new resource changes the dataset"
        );

        // A given id: kept (as a UUID) when free, refused when another dataset's resource has it.
        let given = "0b8f4a3e-6c1d-4e2f-9a7b-5d3c2e1f0a9b";
        let created = t
            .ok(
                "resource_create",
                json!({"package_id": "ds", "id": given, "url": "https://example.org/c.csv"}),
            )
            .await;
        assert_eq!(created["id"], given, "{kind:?}");
        let taken = other["resources"][0]["id"].clone();
        let e = t
            .err(
                Some(&t.admin),
                "resource_create",
                json!({"package_id": "ds", "id": taken, "url": "https://example.org/d.csv"}),
            )
            .await;
        assert_eq!(e["__type"], "Validation Error", "{kind:?}: {e}");
        assert_eq!(
            resource_ids(&t.ok("package_show", json!({"id": "ds"})).await).len(),
            3,
            "{kind:?}: the refused resource was not added"
        );

        // Update, reorder and delete: the group and organization memberships stay.
        let updated = t
            .ok(
                "resource_update",
                json!({"id": new_id, "url": "https://example.org/b2.csv", "name": "renamed"}),
            )
            .await;
        assert_eq!(updated["name"], "renamed", "{kind:?}");
        let shown = t.ok("package_show", json!({"id": "ds"})).await;
        assert_eq!(shown["resources"][1], updated, "{kind:?}");
        let mut order = resource_ids(&shown);
        order.reverse();
        t.ok(
            "package_resource_reorder",
            json!({"id": "ds", "order": order}),
        )
        .await;
        assert_eq!(
            resource_ids(&t.ok("package_show", json!({"id": "ds"})).await),
            order,
            "{kind:?}"
        );
        t.ok("resource_delete", json!({"id": given})).await;
        let shown = t.ok("package_show", json!({"id": "ds"})).await;
        assert_eq!(resource_ids(&shown).len(), 2, "{kind:?}");
        let groups: Vec<&str> = shown["groups"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|g| g["name"].as_str())
            .collect();
        assert_eq!(groups, ["grp"], "{kind:?}: the group membership stays");
        assert_eq!(members(&t, "grp").await, [id.as_str()], "{kind:?}");
        let mut in_a = vec![id.clone(), other["id"].as_str().unwrap().to_string()];
        in_a.sort();
        assert_eq!(members(&t, "org-a").await, in_a, "{kind:?}");

        // A dataset moved to another organization: one membership, in the new one; moved back,
        // the old membership is active again and the other deleted.
        t.ok("package_patch", json!({"id": "ds", "owner_org": "org-b"}))
            .await;
        assert_eq!(members(&t, "org-b").await, [id.as_str()], "{kind:?}");
        assert_eq!(
            members(&t, "org-a").await,
            [other["id"].as_str().unwrap().to_string()],
            "{kind:?}"
        );
        t.ok("package_patch", json!({"id": "ds", "owner_org": "org-a"}))
            .await;
        assert!(members(&t, "org-b").await.is_empty(), "{kind:?}");
        assert_eq!(members(&t, "org-a").await, in_a, "{kind:?}");

        // The dataset's own name is no conflict; another dataset's is.
        t.ok(
            "package_patch",
            json!({"id": "ds", "name": "ds", "title": "T"}),
        )
        .await;
        let e = t
            .err(
                Some(&t.admin),
                "package_patch",
                json!({"id": "ds", "name": "other"}),
            )
            .await;
        assert_eq!(
            e["name"],
            json!(["That URL is already in use."]),
            "{kind:?}: {e}"
        );
    }
}
