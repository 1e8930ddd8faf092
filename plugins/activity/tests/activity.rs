//! The activity plugin on SQLite and on PostgreSQL (a scratch database per run): what each
//! change records, the list's paging and filters with CKAN's messages, visibility of a private
//! dataset's activity, the data rebuilt exactly from patches, and what the compact storage
//! saves against a whole copy per activity.

use catalog_plugin_activity as _;
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_tantivy as _;

use catalog_framework::prelude::Config;
use catalog_framework::store::RowExt;
use catalog_host::testkit::{postgres, StoreKind, TestApp};
use serde_json::{json, Value};

async fn start(kind: StoreKind) -> TestApp {
    start_with(kind, |_| {}).await
}

async fn start_with(kind: StoreKind, configure: impl FnOnce(&mut Config)) -> TestApp {
    TestApp::start_with(kind, |config| {
        config.catalog.auth.create_unowned_dataset = true;
        configure(config);
    })
    .await
}

fn types(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|a| a["activity_type"].as_str().unwrap())
        .collect()
}

async fn scenario(kind: StoreKind) {
    let t = start(kind).await;
    let admin = Some(&t.admin);
    t.ok("organization_create", json!({"name": "office"})).await;
    let created = t
        .ok(
            "package_create",
            json!({"name": "roads", "owner_org": "office", "notes": "n".repeat(4000),
                   "resources": [{"url": "http://x/a.csv", "name": "a"}]}),
        )
        .await;
    let mut versions = vec![created.clone()];
    for i in 0..20 {
        versions.push(
            t.ok(
                "package_patch",
                json!({"id": "roads", "title": format!("Roads {i}")}),
            )
            .await,
        );
    }
    t.ok(
        "resource_create",
        json!({"package_id": "roads", "url": "http://x/b.csv", "name": "b"}),
    )
    .await;
    // An update that changes nothing records nothing.
    let same = t.ok("package_show", json!({"id": "roads"})).await;
    t.ok("package_update", same.clone()).await;

    let all = t
        .ok_as(
            None,
            "package_activity_list",
            json!({"id": "roads", "limit": 100}),
        )
        .await;
    let listed = types(&all);
    assert_eq!(listed.len(), 22, "{listed:?}");
    assert_eq!(listed.last(), Some(&"new package"));
    assert!(listed[..21].iter().all(|t| *t == "changed package"));
    let newest = &all[0];
    assert_eq!(newest["object_id"], created["id"]);
    assert_eq!(newest["user_id"], json!(t.admin.id));
    assert_eq!(newest["permission_labels"], json!(["public"]));
    assert_eq!(newest["data"]["actor"], "admin");
    // The data is package_show's dict after the change, rebuilt exactly from the patches.
    assert_eq!(newest["data"]["package"], same);
    assert_eq!(all[21]["data"]["package"], created);
    assert_eq!(all[1]["data"]["package"], versions[20]);
    assert_eq!(all[11]["data"]["package"]["title"], "Roads 9");
    let keys: Vec<&String> = newest.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "id",
            "timestamp",
            "user_id",
            "object_id",
            "activity_type",
            "data",
            "permission_labels"
        ]
    );

    // Paging, the default limit and the filters.
    let page = t
        .ok_as(
            None,
            "package_activity_list",
            json!({"id": "roads", "offset": 20, "limit": 5}),
        )
        .await;
    assert_eq!(types(&page), ["changed package", "new package"]);
    let default = t
        .ok_as(None, "package_activity_list", json!({"id": "roads"}))
        .await;
    assert_eq!(default.as_array().unwrap().len(), 22);
    let only_new = t
        .ok_as(
            None,
            "package_activity_list",
            json!({"id": "roads", "activity_types": ["new package"]}),
        )
        .await;
    assert_eq!(types(&only_new), ["new package"]);
    let not_changed = t
        .ok_as(
            None,
            "package_activity_list",
            json!({"id": "roads", "exclude_activity_types": ["changed package"]}),
        )
        .await;
    assert_eq!(types(&not_changed), ["new package"]);
    let future = t
        .ok_as(
            None,
            "package_activity_list",
            json!({"id": "roads", "after": 4102444800u64}),
        )
        .await;
    assert_eq!(future, json!([]));
    let before = t
        .ok_as(
            None,
            "package_activity_list",
            json!({"id": "roads", "before": 4102444800u64, "limit": 1}),
        )
        .await;
    assert_eq!(before[0]["id"], all[0]["id"]);

    // CKAN's messages.
    let e = t.err(None, "package_activity_list", json!({})).await;
    assert_eq!(e["id"], json!(["Missing value"]));
    let e = t
        .err(
            None,
            "package_activity_list",
            json!({"id": "roads", "limit": "x"}),
        )
        .await;
    assert_eq!(
        e["limit"],
        json!(["Invalid integer", "Please enter an integer value"])
    );
    let e = t
        .err(
            None,
            "package_activity_list",
            json!({"id": "roads", "offset": -1}),
        )
        .await;
    assert_eq!(e["offset"], json!(["Must be a natural number"]));
    let e = t
        .err(
            None,
            "package_activity_list",
            json!({"id": "roads", "before": "soon"}),
        )
        .await;
    assert_eq!(e["before"], json!(["Must be a float timestamp"]));
    let e = t
        .err(
            None,
            "package_activity_list",
            json!({"id": "roads", "activity_types": ["a"], "exclude_activity_types": ["b"]}),
        )
        .await;
    assert_eq!(
        e["activity_types"],
        json!(["Cannot be used together with `exclude_activity_types"])
    );
    let e = t
        .err(
            None,
            "package_activity_list",
            json!({"id": "no-such-dataset"}),
        )
        .await;
    assert_eq!(e["__type"], "Not Found Error");

    // A private dataset's activity: its organization's members and sysadmins only.
    let private = t
        .ok(
            "package_create",
            json!({"name": "secret", "owner_org": "office", "private": true}),
        )
        .await;
    let e = t
        .err(None, "package_activity_list", json!({"id": "secret"}))
        .await;
    assert_eq!(e["__type"], "Authorization Error");
    let listed = t.ok("package_activity_list", json!({"id": "secret"})).await;
    assert_eq!(
        listed[0]["permission_labels"],
        json!([format!("member-{}", private["owner_org"].as_str().unwrap())])
    );
    let activity_id = listed[0]["id"].as_str().unwrap();
    let e = t
        .err(None, "activity_show", json!({"id": activity_id}))
        .await;
    assert_eq!(
        e["message"],
        "Access denied: Unauthorized to view activity data"
    );
    let shown = t.ok("activity_show", json!({"id": activity_id})).await;
    assert_eq!(shown, listed[0]);

    // The organization's stream: its own and its public datasets' activities, never a
    // private dataset's (not even for a sysadmin, as in CKAN).
    let org_list = t
        .ok(
            "organization_activity_list",
            json!({"id": "office", "limit": 100}),
        )
        .await;
    let org_objects: Vec<&str> = org_list
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["object_id"].as_str().unwrap())
        .collect();
    assert_eq!(types(&org_list).last(), Some(&"new organization"));
    assert!(org_objects.contains(&created["id"].as_str().unwrap()));
    assert!(!org_objects.contains(&private["id"].as_str().unwrap()));
    let e = t
        .err(None, "group_activity_list", json!({"id": "office"}))
        .await;
    assert_eq!(
        e["__type"], "Not Found Error",
        "an organization is not a group"
    );
    let e = t
        .err(
            None,
            "organization_activity_list",
            json!({"id": "no-such-org"}),
        )
        .await;
    assert_eq!(e["__type"], "Not Found Error");

    // A group's stream: its own and its member datasets'.
    t.ok("group_create", json!({"name": "transport"})).await;
    t.ok(
        "package_patch",
        json!({"id": "roads", "groups": [{"name": "transport"}]}),
    )
    .await;
    let group_list = t
        .ok_as(
            None,
            "group_activity_list",
            json!({"id": "transport", "limit": 3}),
        )
        .await;
    assert_eq!(types(&group_list)[0], "changed package");
    assert!(types(&group_list).contains(&"new group"));

    // The user's stream and the recently changed datasets, filtered by the caller's labels.
    let by_admin_anon = t
        .ok_as(
            None,
            "user_activity_list",
            json!({"id": "admin", "limit": 100}),
        )
        .await;
    let by_admin_sys = t
        .ok("user_activity_list", json!({"id": "admin", "limit": 100}))
        .await;
    let secret_rows = |list: &Value| {
        list.as_array()
            .unwrap()
            .iter()
            .filter(|a| a["object_id"] == private["id"])
            .count()
    };
    assert_eq!(secret_rows(&by_admin_anon), 0);
    assert_eq!(secret_rows(&by_admin_sys), 1);
    assert_eq!(
        by_admin_sys.as_array().unwrap().len(),
        by_admin_anon.as_array().unwrap().len() + 1
    );
    let recent_anon = t
        .ok_as(
            None,
            "recently_changed_packages_activity_list",
            json!({"limit": 100}),
        )
        .await;
    let recent_sys = t
        .ok(
            "recently_changed_packages_activity_list",
            json!({"limit": 100}),
        )
        .await;
    assert_eq!(secret_rows(&recent_anon), 0);
    assert_eq!(secret_rows(&recent_sys), 1);
    assert!(types(&recent_sys).iter().all(|t| t.ends_with("package")));
    assert_eq!(recent_sys[0]["activity_type"], "changed package");

    // activity_show / activity_data_show on a public dataset.
    let id = all[0]["id"].as_str().unwrap();
    assert_eq!(
        t.ok_as(
            None,
            "activity_show",
            json!({"id": id, "include_data": false})
        )
        .await,
        all[0]
    );
    let bob = t.user("bob").await;
    let e = t
        .err(Some(&bob), "activity_data_show", json!({"id": id}))
        .await;
    assert_eq!(e["__type"], "Authorization Error");
    assert_eq!(
        t.ok(
            "activity_data_show",
            json!({"id": id, "object_type": "package"})
        )
        .await,
        same
    );
    let e = t
        .err(
            admin,
            "activity_data_show",
            json!({"id": id, "object_type": "group"}),
        )
        .await;
    assert_eq!(
        e["message"],
        "Not found: Could not find that object_type in the activity"
    );
    let e = t.err(admin, "activity_show", json!({"id": "nope"})).await;
    assert_eq!(e["__type"], "Not Found Error");

    // Groups, organizations and users record their own activities.
    t.ok(
        "user_create",
        json!({"name": "carol", "email": "carol@example.org", "password": "pass12345"}),
    )
    .await;
    let rows = sqlx::query("SELECT activity_type FROM activity ORDER BY seq")
        .fetch_all(&t.app.store.pool)
        .await
        .unwrap();
    let recorded: Vec<String> = rows.iter().map(|r| r.s("activity_type")).collect();
    assert_eq!(
        recorded.iter().filter(|t| *t == "new organization").count(),
        1,
        "{recorded:?}"
    );
    assert_eq!(
        recorded.iter().filter(|t| *t == "new user").count(),
        3,
        "admin, bob and carol: {recorded:?}"
    );

    // Followers.
    let f = t
        .ok_as(Some(&bob), "follow_dataset", json!({"id": "roads"}))
        .await;
    assert_eq!(f["follower_id"], json!(bob.id));
    assert_eq!(f["object_id"], created["id"]);
    let again = t
        .ok_as(Some(&bob), "follow_dataset", json!({"id": "roads"}))
        .await;
    assert_eq!(again, f, "following again returns the same record");
    assert_eq!(
        t.ok_as(None, "dataset_follower_count", json!({"id": "roads"}))
            .await,
        json!(1)
    );
    assert_eq!(
        t.ok_as(Some(&bob), "am_following_dataset", json!({"id": "roads"}))
            .await,
        json!(true)
    );
    assert_eq!(
        t.ok("am_following_dataset", json!({"id": "roads"})).await,
        json!(false)
    );
    let e = t.err(None, "follow_dataset", json!({"id": "roads"})).await;
    assert_eq!(
        e["message"],
        "Access denied: You must be logged in to follow datasets"
    );
    let e = t
        .err(Some(&bob), "follow_dataset", json!({"id": "secret"}))
        .await;
    assert_eq!(
        e["__type"], "Authorization Error",
        "a private dataset bob may not read"
    );
    let e = t
        .err(Some(&bob), "follow_dataset", json!({"id": "no-such"}))
        .await;
    assert_eq!(e["__type"], "Not Found Error");
    let e = t.err(Some(&bob), "follow_user", json!({"id": "bob"})).await;
    assert_eq!(e["message"], "You cannot follow yourself");
    let e = t
        .err(Some(&bob), "follow_user", json!({"id": "no-such"}))
        .await;
    assert_eq!(
        e["message"],
        "Error validating the schema of the user to follow."
    );
    t.ok_as(Some(&bob), "follow_user", json!({"id": "admin"}))
        .await;
    t.ok_as(Some(&bob), "follow_group", json!({"id": "office"}))
        .await;
    assert_eq!(
        t.ok_as(None, "user_follower_count", json!({"id": "admin"}))
            .await,
        json!(1)
    );
    assert_eq!(
        t.ok_as(None, "organization_follower_count", json!({"id": "office"}))
            .await,
        json!(1)
    );
    let followers = t.ok("user_follower_list", json!({"id": "admin"})).await;
    assert_eq!(followers.as_array().unwrap().len(), 1);
    assert_eq!(followers[0]["name"], "bob");
    let keys: Vec<&String> = followers[0].as_object().unwrap().keys().collect();
    assert_eq!(keys.first().map(|k| k.as_str()), Some("id"));
    assert_eq!(keys.len(), 14);
    let e = t
        .err(Some(&bob), "dataset_follower_list", json!({"id": "roads"}))
        .await;
    assert_eq!(e["message"], "Access denied: Not authorized");
    let e = t
        .err(admin, "group_follower_list", json!({"id": "no-such"}))
        .await;
    assert_eq!(e["id"], json!(["Not found: Group"]));
    // Bob follows roads, admin and office: one of each kind but groups.
    for (action, n) in [
        ("followee_count", 3),
        ("dataset_followee_count", 1),
        ("user_followee_count", 1),
        ("organization_followee_count", 1),
        ("group_followee_count", 0),
    ] {
        assert_eq!(
            t.ok_as(None, action, json!({"id": "bob"})).await,
            json!(n),
            "{action}"
        );
    }
    let e = t
        .err(None, "followee_count", json!({"id": "no-such"}))
        .await;
    assert_eq!(e["id"], json!(["Not found: User"]));
    let e = t
        .err(None, "user_follower_count", json!({"id": "no-such"}))
        .await;
    assert_eq!(e["id"], json!(["Not found: User"]));
    let e = t
        .err(None, "am_following_user", json!({"id": "admin"}))
        .await;
    assert_eq!(e["message"], "Access denied");
    assert_eq!(
        t.ok_as(Some(&bob), "unfollow_dataset", json!({"id": "roads"}))
            .await,
        Value::Null
    );
    assert_eq!(
        t.ok_as(Some(&bob), "unfollow_dataset", json!({"id": "roads"}))
            .await,
        Value::Null,
        "unfollowing what one does not follow is not an error"
    );
    assert_eq!(
        t.ok_as(None, "dataset_follower_count", json!({"id": "roads"}))
            .await,
        json!(0)
    );
    let e = t
        .err(Some(&bob), "unfollow_group", json!({"id": "no-such"}))
        .await;
    assert_eq!(
        e["message"],
        "Error validating the schema of the object to unfollow."
    );

    // Bob's dashboard: his own stream and that of admin and office, whom he follows.
    t.ok(
        "package_patch",
        json!({"id": "roads", "title": "Seen by bob"}),
    )
    .await;
    let dash = t
        .ok_as(Some(&bob), "dashboard_activity_list", json!({"limit": 100}))
        .await;
    assert_eq!(dash[0]["activity_type"], "changed package");
    assert_eq!(dash[0]["data"]["package"]["title"], "Seen by bob");
    assert_eq!(dash[0]["is_new"], true);
    assert_eq!(
        dash[0]
            .as_object()
            .unwrap()
            .keys()
            .next_back()
            .map(String::as_str),
        Some("is_new")
    );
    assert_eq!(secret_rows(&dash), 0, "a private dataset bob may not read");
    let own = dash
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["object_id"] == json!(bob.id))
        .expect("bob's own new user activity");
    assert_eq!(own["is_new"], false);
    assert_eq!(
        t.ok_as(Some(&bob), "dashboard_new_activities_count", json!({}))
            .await,
        json!(1)
    );
    assert_eq!(
        t.ok_as(Some(&bob), "dashboard_mark_activities_old", json!({}))
            .await,
        Value::Null
    );
    assert_eq!(
        t.ok_as(Some(&bob), "dashboard_new_activities_count", json!({}))
            .await,
        json!(0)
    );
    let e = t.err(None, "dashboard_activity_list", json!({})).await;
    assert_eq!(
        e["message"],
        "Access denied: You must be logged in to access your dashboard."
    );

    // A deleted dataset's last activity.
    t.ok("package_delete", json!({"id": "roads"})).await;
    let after_delete = t
        .ok("package_activity_list", json!({"id": "roads", "limit": 1}))
        .await;
    assert_eq!(types(&after_delete), ["deleted package"]);

    // What the compact storage saves: the stored bytes of the dataset's activities against a
    // whole copy of their data each.
    let stored: i64 = sqlx::query_scalar(
        "SELECT CAST(SUM(LENGTH(data)) AS BIGINT) FROM activity WHERE object_id = $1",
    )
    .bind(created["id"].as_str().unwrap())
    .fetch_one(&t.app.store.pool)
    .await
    .unwrap();
    let history = t
        .ok(
            "package_activity_list",
            json!({"id": "roads", "limit": 100}),
        )
        .await;
    let history = history.as_array().unwrap();
    let whole: usize = history
        .iter()
        .map(|a| serde_json::to_string(&a["data"]).unwrap().len())
        .sum();
    println!(
        "activity data of one dataset ({} activities): {stored} bytes stored, {whole} bytes as whole copies ({:.1}x smaller)",
        history.len(),
        whole as f64 / stored as f64
    );
    assert!((stored as usize) * 4 < whole, "{stored} vs {whole}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn activities_on_sqlite() {
    scenario(StoreKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn activities_on_postgres() {
    if let Some(kind) = postgres().await {
        scenario(kind).await;
    }
}

/// Each activity's id and data, newest first.
async fn history(t: &TestApp, id: &str) -> Vec<(String, Value)> {
    let list = t
        .ok("package_activity_list", json!({"id": id, "limit": 100}))
        .await;
    list.as_array()
        .unwrap()
        .iter()
        .map(|a| (a["id"].as_str().unwrap().to_string(), a["data"].clone()))
        .collect()
}

/// activity_delete, activity_delete_all and activity_delete_counts: sysadmins only, CKAN's
/// checks and messages, and every activity that stays reads back exactly as before, whatever
/// was deleted from under its chain of patches.
async fn deletion(kind: StoreKind) {
    let t = start(kind).await;
    let admin = Some(&t.admin);
    let bob = t.user("bob").await;
    t.ok("package_create", json!({"name": "hist", "title": "t0"}))
        .await;
    for i in 1..40 {
        t.ok(
            "package_patch",
            json!({"id": "hist", "title": format!("t{i}"), "notes": format!("n{}", i % 7)}),
        )
        .await;
    }
    let all = history(&t, "hist").await;
    assert_eq!(all.len(), 40);
    let same_as_before = |now: &[(String, Value)], gone: &[&str]| {
        let expected: Vec<&(String, Value)> = all
            .iter()
            .filter(|(id, _)| !gone.contains(&id.as_str()))
            .collect();
        assert_eq!(now.len(), expected.len());
        for (a, b) in now.iter().zip(expected) {
            assert_eq!(a, b, "activity {} reads back changed", a.0);
        }
    };

    // Who may, and CKAN's messages.
    for who in [None, Some(&bob)] {
        let e = t.err(who, "activity_delete", json!({"id": all[0].0})).await;
        assert_eq!(e["message"], "Access denied");
        let e = t.err(who, "activity_delete_counts", json!({})).await;
        assert_eq!(e["message"], "Access denied");
        let e = t.err(who, "activity_delete_all", json!({})).await;
        assert_eq!(e["message"], "Access denied");
    }
    let e = t.err(admin, "activity_delete", json!({})).await;
    assert_eq!(
        e["__before"],
        json!(["Either both start_date and end_date must be specified, or offset_days must be provided."])
    );
    let e = t
        .err(admin, "activity_delete", json!({"offset_days": 0}))
        .await;
    assert!(e.get("__before").is_some(), "{e}");
    let e = t
        .err(
            admin,
            "activity_delete",
            json!({"start_date": "yesterday", "end_date": "2030-01-01"}),
        )
        .await;
    assert_eq!(e["start_date"], json!(["Date format incorrect"]));
    let e = t
        .err(admin, "activity_delete", json!({"offset_days": -1}))
        .await;
    assert_eq!(e["offset_days"], json!(["Must be a natural number"]));
    let e = t
        .err(
            admin,
            "activity_delete",
            json!({"start_date": "2030-01-02", "end_date": "2030-01-01"}),
        )
        .await;
    assert_eq!(e["message"], "start_date cannot be greater than end_date.");
    let e = t
        .err(
            admin,
            "activity_delete",
            json!({"id": "00000000-0000-0000-0000-000000000000"}),
        )
        .await;
    assert_eq!(e["message"], "Not found: Activity not found");
    let r = t.ok("activity_delete", json!({"offset_days": 1})).await;
    assert_eq!(
        r["message"],
        "No activities found matching the specified criteria."
    );
    let counts = t.ok("activity_delete_counts", json!({})).await;
    assert_eq!(counts["older_than_1_day"], 0);
    let total_before = counts["total"].as_i64().unwrap();
    assert!(total_before >= 40, "{counts}");

    // One activity in the middle of a chain of patches (the 30th newest: later ones are
    // patches against it).
    let victim = all[30].0.clone();
    let r = t.ok("activity_delete", json!({"id": victim})).await;
    assert_eq!(r["message"], "Activity purged");
    same_as_before(&history(&t, "hist").await, &[&victim]);

    // A range by timestamp: the 20th to the 10th newest.
    let list = t
        .ok("package_activity_list", json!({"id": "hist", "limit": 100}))
        .await;
    let stamp = |id: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"] == json!(id))
            .map(|a| a["timestamp"].as_str().unwrap().to_string())
            .unwrap()
    };
    let (from, to) = (stamp(&all[20].0), stamp(&all[10].0));
    let r = t
        .ok(
            "activity_delete",
            json!({"start_date": from, "end_date": to}),
        )
        .await;
    assert_eq!(r["message"], "Deleted 11 rows from the activity table.");
    let gone: Vec<&str> = std::iter::once(victim.as_str())
        .chain(all[10..=20].iter().map(|(id, _)| id.as_str()))
        .collect();
    same_as_before(&history(&t, "hist").await, &gone);

    // keep: each object's 3 newest stay.
    let r = t
        .ok(
            "activity_delete",
            json!({"start_date": "2000-01-01", "end_date": "2100-01-01", "keep": 3}),
        )
        .await;
    assert!(
        r["message"].as_str().unwrap().starts_with("Deleted "),
        "{r}"
    );
    let kept = history(&t, "hist").await;
    assert_eq!(kept.len(), 3);
    same_as_before(
        &kept,
        &all[3..]
            .iter()
            .map(|(id, _)| id.as_str())
            .collect::<Vec<_>>(),
    );

    // Recording goes on over what remains.
    t.ok("package_patch", json!({"id": "hist", "title": "after"}))
        .await;
    let newest = history(&t, "hist").await;
    assert_eq!(newest.len(), 4);
    assert_eq!(newest[0].1["package"]["title"], "after");
    assert_eq!(newest[1..], kept[..]);

    let r = t.ok("activity_delete_all", json!({})).await;
    assert!(
        r["message"].as_str().unwrap().starts_with("Deleted "),
        "{r}"
    );
    let counts = t.ok("activity_delete_counts", json!({})).await;
    assert_eq!(counts["total"], 0);
    let r = t.ok("activity_delete_all", json!({})).await;
    assert_eq!(
        r["message"],
        "No activities found matching the specified criteria."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletion_on_sqlite() {
    deletion(StoreKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletion_on_postgres() {
    if let Some(kind) = postgres().await {
        deletion(kind).await;
    }
}

/// The recorder keeps the last activity it wrote of a dataset to store the next one as a patch
/// against it; once that activity is gone from the store (deleted here; rolled back, or
/// followed by another node's, elsewhere), the next one is stored against the one that is last
/// now, and every activity reads back as the dataset was.
async fn last_activity_gone(kind: StoreKind) {
    let t = start(kind).await;
    t.ok("package_create", json!({"name": "kept", "title": "t0"}))
        .await;
    for i in 1..4 {
        t.ok(
            "package_patch",
            json!({"id": "kept", "title": format!("t{i}")}),
        )
        .await;
    }
    let newest = history(&t, "kept").await[0].0.clone();
    t.ok("activity_delete", json!({"id": newest})).await;
    t.ok("package_patch", json!({"id": "kept", "title": "after"}))
        .await;
    let shown = t.ok("package_show", json!({"id": "kept"})).await;
    let all = history(&t, "kept").await;
    let titles: Vec<&str> = all
        .iter()
        .map(|(_, d)| d["package"]["title"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(titles, ["after", "t2", "t1", "t0"], "{kind:?}");
    assert_eq!(all[0].1["package"], shown, "{kind:?}");
    let stored = &t.ok("activity_data_show", json!({"id": all[0].0})).await;
    assert_eq!(stored["package"], shown, "{kind:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_activity_gone_on_sqlite() {
    last_activity_gone(StoreKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_activity_gone_on_postgres() {
    if let Some(kind) = postgres().await {
        last_activity_gone(kind).await;
    }
}

/// The older release's actions answered from the activity records: activity details, the
/// HTML snippets and the revisions.
async fn older_release(kind: StoreKind) {
    let t = start(kind).await;
    let org = t
        .ok("organization_create", json!({"name": "old-org"}))
        .await;
    t.ok(
        "group_create",
        json!({"name": "old-group", "title": "Old <group>"}),
    )
    .await;
    let ds = t
        .ok(
            "package_create",
            json!({"name": "old", "title": "Old <b>data</b>", "owner_org": org["id"],
                   "tags": [{"name": "alpha"}], "extras": [{"key": "k", "value": "v"}]}),
        )
        .await;
    let res = t
        .ok(
            "resource_create",
            json!({"package_id": "old", "url": "http://example.org/x.csv", "name": "x & y"}),
        )
        .await;
    t.ok("package_patch", json!({"id": "old", "notes": "changed"}))
        .await;
    t.ok(
        "package_patch",
        json!({"id": "old", "extras": [{"key": "k", "value": "w"}, {"key": "n", "value": "1"}]}),
    )
    .await;
    t.ok(
        "package_patch",
        json!({"id": "old", "tags": [{"name": "alpha"}, {"name": "beta"}]}),
    )
    .await;
    t.ok(
        "package_create",
        json!({"name": "old-private", "owner_org": org["id"], "private": true}),
    )
    .await;
    let list = t.ok("package_activity_list", json!({"id": "old"})).await;
    let ids: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 5, "{list}");

    // Details, newest first: tags, extras, notes, resource, creation.
    let details = |v: &Value| -> Vec<(String, String)> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["activity_type"].as_str().unwrap().to_string(),
                    d["object_type"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    let d = t
        .ok_as(None, "activity_detail_list", json!({"id": ids[0]}))
        .await;
    assert_eq!(details(&d), [pair("added", "tag")]);
    assert_eq!(d[0]["data"]["tag"]["name"], "beta");
    let keys: Vec<&String> = d[0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "id",
            "activity_id",
            "object_id",
            "object_type",
            "activity_type",
            "data"
        ]
    );
    assert_eq!(d[0]["activity_id"], json!(ids[0]));
    let again = t
        .ok_as(None, "activity_detail_list", json!({"id": ids[0]}))
        .await;
    assert_eq!(again[0]["id"], d[0]["id"], "detail ids are stable");
    let d = t
        .ok_as(None, "activity_detail_list", json!({"id": ids[1]}))
        .await;
    assert_eq!(
        details(&d),
        [pair("changed", "PackageExtra"), pair("new", "PackageExtra")],
        "{d}"
    );
    let d = t
        .ok_as(None, "activity_detail_list", json!({"id": ids[2]}))
        .await;
    assert_eq!(details(&d), [pair("changed", "Package")]);
    let d = t
        .ok_as(None, "activity_detail_list", json!({"id": ids[3]}))
        .await;
    assert_eq!(details(&d), [pair("new", "Resource")]);
    assert_eq!(d[0]["object_id"], res["id"]);
    let d = t
        .ok_as(None, "activity_detail_list", json!({"id": ids[4]}))
        .await;
    assert_eq!(details(&d), [pair("new", "Package")]);
    let e = t
        .err(None, "activity_detail_list", json!({"id": "no-such"}))
        .await;
    assert_eq!(e["__type"], "Not Found Error");

    // The HTML snippet: each sentence linked, every text escaped.
    let html = t
        .ok_as(None, "package_activity_list_html", json!({"id": "old"}))
        .await;
    let html = html.as_str().unwrap();
    assert!(
        html.starts_with("<ul class=\"activity\" data-module=\"activity-stream\" data-module-more=\"False\" data-module-context=\"package\" data-module-id=\"old\" data-module-offset=\"0\">"),
        "{html}"
    );
    assert!(html.ends_with("</ul>"), "{html}");
    assert_eq!(html.matches("<li class=\"item ").count(), 5);
    assert!(html.contains("<li class=\"item added-tag\">"), "{html}");
    assert!(html.contains("added the tag <a href=\"/dataset/?tags=beta\">beta</a> to the dataset <span><a href=\"/dataset/old\">Old &lt;b&gt;data&lt;/b&gt;</a></span>"), "{html}");
    assert!(
        html.contains(&format!(
            "added the resource <a href=\"/dataset/{}/resource/{}\">x &amp; y</a> to the dataset",
            ds["id"].as_str().unwrap(),
            res["id"].as_str().unwrap()
        )),
        "{html}"
    );
    assert!(
        html.contains(
            "<span class=\"actor\"><a href=\"/user/admin\">admin</a></span> created the dataset"
        ),
        "{html}"
    );
    assert!(!html.contains("<b>"), "{html}");
    let empty = t
        .ok_as(
            None,
            "package_activity_list_html",
            json!({"id": "old", "offset": 50}),
        )
        .await;
    assert_eq!(
        empty,
        "<p class=\"empty\">No activities are within this activity stream</p>"
    );
    let paged = t
        .ok_as(
            None,
            "package_activity_list_html",
            json!({"id": "old", "offset": 1, "limit": 1}),
        )
        .await;
    assert!(
        paged
            .as_str()
            .unwrap()
            .contains("<li class=\"load-less\"><a href=\"/dataset/activity/old?offset=0\""),
        "{paged}"
    );
    let html = t
        .ok_as(None, "group_activity_list_html", json!({"id": "old-group"}))
        .await;
    assert!(
        html.as_str().unwrap().contains(
            "created the group <span><a href=\"/group/old-group\">Old &lt;group&gt;</a></span>"
        ),
        "{html}"
    );
    // The plain action decides who may see it.
    let e = t
        .err(
            None,
            "package_activity_list_html",
            json!({"id": "old-private"}),
        )
        .await;
    assert_eq!(e["__type"], "Authorization Error");
    let e = t.err(None, "dashboard_activity_list_html", json!({})).await;
    assert_eq!(e["__type"], "Authorization Error");
    let html = t.ok("dashboard_activity_list_html", json!({})).await;
    assert!(
        html.as_str()
            .unwrap()
            .contains("data-module-context=\"dashboard\" data-module-id=\"admin\""),
        "{html}"
    );

    // Revisions.
    let all = t.ok("revision_list", json!({})).await;
    let all: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let public = t.ok_as(None, "revision_list", json!({})).await;
    assert_eq!(
        public.as_array().unwrap().len() + 1,
        all.len(),
        "the private dataset's creation is left out"
    );
    assert_eq!(
        public
            .as_array()
            .unwrap()
            .iter()
            .position(|v| v == &json!(ids[0])),
        all.iter().position(|v| *v == ids[0]).map(|p| p - 1)
    );
    let asc = t.ok("revision_list", json!({"sort": "time_asc"})).await;
    let mut reversed = all.clone();
    reversed.reverse();
    assert_eq!(asc, json!(reversed));
    let since = t.ok("revision_list", json!({"since_id": ids[1]})).await;
    assert_eq!(
        since,
        json!(all[..all.iter().position(|v| *v == ids[1]).unwrap()])
    );
    let e = t.err(None, "revision_list", json!({"sort": "name"})).await;
    assert_eq!(
        e["message"],
        "Invalid sort value. Allowable values: ['time_asc', 'time_desc']"
    );
    let e = t
        .err(None, "revision_list", json!({"since_time": "yesterday"}))
        .await;
    assert_eq!(e["message"], "Timestamp did not parse");
    let r = t.ok_as(None, "revision_show", json!({"id": ids[3]})).await;
    let keys: Vec<&String> = r.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "id",
            "timestamp",
            "message",
            "author",
            "approved_timestamp",
            "packages",
            "groups"
        ]
    );
    assert_eq!(r["packages"], json!(["old"]));
    assert_eq!(r["author"], "admin");
    let revs = t
        .ok_as(None, "package_revision_list", json!({"id": "old"}))
        .await;
    assert_eq!(revs.as_array().unwrap().len(), 5);
    assert_eq!(revs[0]["id"], json!(ids[0]));
    assert!(revs[0].get("packages").is_none());
    let e = t
        .err(None, "package_revision_list", json!({"id": "old-private"}))
        .await;
    assert_eq!(e["__type"], "Authorization Error");
    let revs = t
        .ok_as(None, "group_revision_list", json!({"id": "old-group"}))
        .await;
    assert_eq!(revs.as_array().unwrap().len(), 1);
    let revs = t
        .ok_as(None, "organization_revision_list", json!({"id": "old-org"}))
        .await;
    assert_eq!(revs.as_array().unwrap().len(), 1);
    let e = t
        .err(None, "organization_revision_list", json!({"id": "no-such"}))
        .await;
    assert_eq!(e["__type"], "Not Found Error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn older_release_on_sqlite() {
    older_release(StoreKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn older_release_on_postgres() {
    if let Some(kind) = postgres().await {
        older_release(kind).await;
    }
}

/// `catalog.hide_activity_from_users`: the lists leave those users' activity out; a sysadmin's
/// `include_hidden_activity` brings it back in the dataset, group and organization lists (and
/// nobody else's); the user, dashboard and recently-changed lists always leave it out.
async fn hidden_activity(kind: StoreKind) {
    let t = start_with(kind, |c| {
        c.catalog
            .other
            .insert("hide_activity_from_users".into(), json!("bot robot"));
    })
    .await;
    let admin = Some(&t.admin);
    let bot = t.sysadmin("bot").await;
    let alice = t.user("alice").await;
    let org = t
        .ok("organization_create", json!({"name": "hid-org"}))
        .await;
    t.ok(
        "package_create",
        json!({"name": "hid", "owner_org": org["id"]}),
    )
    .await;
    t.ok_as(
        Some(&bot),
        "package_patch",
        json!({"id": "hid", "notes": "by the bot"}),
    )
    .await;
    t.ok_as(Some(&alice), "follow_dataset", json!({"id": "hid"}))
        .await;
    let types_of = |v: &Value| types(v).into_iter().map(str::to_string).collect::<Vec<_>>();
    let shown = |v: &Value| {
        v.as_array()
            .unwrap()
            .iter()
            .filter(|a| a["user_id"] == json!(bot.id))
            .count()
    };
    for (who, include, expect) in [
        (None, None, 0),
        (None, Some(true), 0),
        (Some(&alice), Some(true), 0),
        (admin, None, 0),
        (admin, Some(false), 0),
        (admin, Some(true), 1),
    ] {
        let mut p = json!({"id": "hid"});
        if let Some(i) = include {
            p["include_hidden_activity"] = json!(i);
        }
        let list = t.ok_as(who, "package_activity_list", p.clone()).await;
        assert_eq!(
            shown(&list),
            expect,
            "{p} as {:?}: {:?}",
            who.map(|w| &w.name),
            types_of(&list)
        );
        p["id"] = json!("hid-org");
        let list = t.ok_as(who, "organization_activity_list", p).await;
        assert_eq!(
            shown(&list),
            expect,
            "organization list as {:?}",
            who.map(|w| &w.name)
        );
    }
    let list = t
        .ok(
            "package_activity_list",
            json!({"id": "hid", "include_hidden_activity": "true"}),
        )
        .await;
    assert_eq!(shown(&list), 1, "a query-string true");
    for (action, p) in [
        (
            "recently_changed_packages_activity_list",
            json!({"include_hidden_activity": true}),
        ),
        (
            "user_activity_list",
            json!({"id": "bot", "include_hidden_activity": true}),
        ),
    ] {
        let list = t.ok(action, p).await;
        assert_eq!(shown(&list), 0, "{action} always leaves it out");
    }
    let dash = t
        .ok_as(Some(&alice), "dashboard_activity_list", json!({}))
        .await;
    assert_eq!(shown(&dash), 0, "the dashboard leaves it out");
    assert!(types(&dash).contains(&"new package"), "{:?}", types(&dash));

    // Following more objects than the dashboard's query names one by one: the same page.
    for i in 0..5_001 {
        sqlx::query(
            "INSERT INTO follower (follower_id, object_id, object_type, datetime) VALUES ($1, $2, 'dataset', $3)",
        )
        .bind(&alice.id)
        .bind(format!("00000000-0000-0000-0000-{i:012}"))
        .bind("2026-01-01T00:00:00")
        .execute(&t.app.store.pool)
        .await
        .unwrap();
    }
    let many = t
        .ok_as(Some(&alice), "dashboard_activity_list", json!({}))
        .await;
    assert_eq!(
        many, dash,
        "5,001 more (unknown) objects followed change nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_activity_on_sqlite() {
    hidden_activity(StoreKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_activity_on_postgres() {
    if let Some(kind) = postgres().await {
        hidden_activity(kind).await;
    }
}
