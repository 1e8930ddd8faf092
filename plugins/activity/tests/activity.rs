//! The activity plugin on SQLite and on PostgreSQL (a scratch database per run): what each
//! change records, the list's paging and filters with CKAN's messages, visibility of a private
//! dataset's activity, the data rebuilt exactly from patches, and what the compact storage
//! saves against a whole copy per activity.

use catalog_plugin_activity as _;
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_tantivy as _;

use catalog_framework::prelude::{ActionContext, AppState, CkanError, Config, Principal, RowExt};
use catalog_framework::testkit::ScratchDb;
use serde_json::{json, Value};

struct TestApp {
    app: AppState,
    admin: Principal,
    _dir: tempfile::TempDir,
    _db: Option<ScratchDb>,
}

impl TestApp {
    async fn start(postgres: bool) -> TestApp {
        let dir = tempfile::tempdir().unwrap();
        let (url, db) = if postgres {
            let db = ScratchDb::create("catalog_activity")
                .await
                .expect("PostgreSQL at 127.0.0.1:5432");
            (db.url.clone(), Some(db))
        } else {
            (
                catalog_framework::host::Store::sqlite_url_in(dir.path()),
                None,
            )
        };
        let mut config = Config::default();
        config.catalog.auth.create_unowned_dataset = true;
        let app = catalog_framework::host::build_app(config, &url, dir.path().into())
            .await
            .unwrap();
        let admin = user(&app, "admin", true).await;
        TestApp {
            app,
            admin,
            _dir: dir,
            _db: db,
        }
    }

    async fn call(
        &self,
        who: Option<&Principal>,
        action: &str,
        p: Value,
    ) -> Result<Value, CkanError> {
        ActionContext::new(self.app.clone(), who.cloned())
            .run_top(action, p.as_object().cloned().unwrap_or_default())
            .await
    }

    async fn ok(&self, who: Option<&Principal>, action: &str, p: Value) -> Value {
        self.call(who, action, p)
            .await
            .unwrap_or_else(|e| panic!("{action}: {}", e.to_error_object()))
    }

    async fn err(&self, who: Option<&Principal>, action: &str, p: Value) -> Value {
        match self.call(who, action, p).await {
            Ok(v) => panic!("{action} succeeded: {v}"),
            Err(e) => e.to_error_object(),
        }
    }
}

async fn user(app: &AppState, name: &str, sysadmin: bool) -> Principal {
    let u = catalog_plugin_core::admin::create_user(
        app,
        name,
        &format!("{name}@example.org"),
        "pass1234",
        sysadmin,
    )
    .await
    .unwrap();
    Principal {
        id: u["id"].as_str().unwrap().to_string(),
        name: name.into(),
        sysadmin,
        state: "active".into(),
    }
}

fn types(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|a| a["activity_type"].as_str().unwrap())
        .collect()
}

async fn scenario(postgres: bool) {
    let t = TestApp::start(postgres).await;
    let admin = Some(&t.admin);
    t.ok(admin, "organization_create", json!({"name": "office"}))
        .await;
    let created = t
        .ok(
            admin,
            "package_create",
            json!({"name": "roads", "owner_org": "office", "notes": "n".repeat(4000),
                   "resources": [{"url": "http://x/a.csv", "name": "a"}]}),
        )
        .await;
    let mut versions = vec![created.clone()];
    for i in 0..20 {
        versions.push(
            t.ok(
                admin,
                "package_patch",
                json!({"id": "roads", "title": format!("Roads {i}")}),
            )
            .await,
        );
    }
    t.ok(
        admin,
        "resource_create",
        json!({"package_id": "roads", "url": "http://x/b.csv", "name": "b"}),
    )
    .await;
    // An update that changes nothing records nothing.
    let same = t.ok(admin, "package_show", json!({"id": "roads"})).await;
    t.ok(admin, "package_update", same.clone()).await;

    let all = t
        .ok(
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
        .ok(
            None,
            "package_activity_list",
            json!({"id": "roads", "offset": 20, "limit": 5}),
        )
        .await;
    assert_eq!(types(&page), ["changed package", "new package"]);
    let default = t
        .ok(None, "package_activity_list", json!({"id": "roads"}))
        .await;
    assert_eq!(default.as_array().unwrap().len(), 22);
    let only_new = t
        .ok(
            None,
            "package_activity_list",
            json!({"id": "roads", "activity_types": ["new package"]}),
        )
        .await;
    assert_eq!(types(&only_new), ["new package"]);
    let not_changed = t
        .ok(
            None,
            "package_activity_list",
            json!({"id": "roads", "exclude_activity_types": ["changed package"]}),
        )
        .await;
    assert_eq!(types(&not_changed), ["new package"]);
    let future = t
        .ok(
            None,
            "package_activity_list",
            json!({"id": "roads", "after": 4102444800u64}),
        )
        .await;
    assert_eq!(future, json!([]));
    let before = t
        .ok(
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
            admin,
            "package_create",
            json!({"name": "secret", "owner_org": "office", "private": true}),
        )
        .await;
    let e = t
        .err(None, "package_activity_list", json!({"id": "secret"}))
        .await;
    assert_eq!(e["__type"], "Authorization Error");
    let listed = t
        .ok(admin, "package_activity_list", json!({"id": "secret"}))
        .await;
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
    let shown = t
        .ok(admin, "activity_show", json!({"id": activity_id}))
        .await;
    assert_eq!(shown, listed[0]);

    // The organization's stream: its own and its public datasets' activities, never a
    // private dataset's (not even for a sysadmin, as in CKAN).
    let org_list = t
        .ok(
            admin,
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
    t.ok(admin, "group_create", json!({"name": "transport"}))
        .await;
    t.ok(
        admin,
        "package_patch",
        json!({"id": "roads", "groups": [{"name": "transport"}]}),
    )
    .await;
    let group_list = t
        .ok(
            None,
            "group_activity_list",
            json!({"id": "transport", "limit": 3}),
        )
        .await;
    assert_eq!(types(&group_list)[0], "changed package");
    assert!(types(&group_list).contains(&"new group"));

    // The user's stream and the recently changed datasets, filtered by the caller's labels.
    let by_admin_anon = t
        .ok(
            None,
            "user_activity_list",
            json!({"id": "admin", "limit": 100}),
        )
        .await;
    let by_admin_sys = t
        .ok(
            admin,
            "user_activity_list",
            json!({"id": "admin", "limit": 100}),
        )
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
        .ok(
            None,
            "recently_changed_packages_activity_list",
            json!({"limit": 100}),
        )
        .await;
    let recent_sys = t
        .ok(
            admin,
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
        t.ok(
            None,
            "activity_show",
            json!({"id": id, "include_data": false})
        )
        .await,
        all[0]
    );
    let bob = user(&t.app, "bob", false).await;
    let e = t
        .err(Some(&bob), "activity_data_show", json!({"id": id}))
        .await;
    assert_eq!(e["__type"], "Authorization Error");
    assert_eq!(
        t.ok(
            admin,
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
        admin,
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
        .ok(Some(&bob), "follow_dataset", json!({"id": "roads"}))
        .await;
    assert_eq!(f["follower_id"], json!(bob.id));
    assert_eq!(f["object_id"], created["id"]);
    let again = t
        .ok(Some(&bob), "follow_dataset", json!({"id": "roads"}))
        .await;
    assert_eq!(again, f, "following again returns the same record");
    assert_eq!(
        t.ok(None, "dataset_follower_count", json!({"id": "roads"}))
            .await,
        json!(1)
    );
    assert_eq!(
        t.ok(Some(&bob), "am_following_dataset", json!({"id": "roads"}))
            .await,
        json!(true)
    );
    assert_eq!(
        t.ok(admin, "am_following_dataset", json!({"id": "roads"}))
            .await,
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
    t.ok(Some(&bob), "follow_user", json!({"id": "admin"}))
        .await;
    t.ok(Some(&bob), "follow_group", json!({"id": "office"}))
        .await;
    assert_eq!(
        t.ok(None, "user_follower_count", json!({"id": "admin"}))
            .await,
        json!(1)
    );
    assert_eq!(
        t.ok(None, "organization_follower_count", json!({"id": "office"}))
            .await,
        json!(1)
    );
    let followers = t
        .ok(admin, "user_follower_list", json!({"id": "admin"}))
        .await;
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
            t.ok(None, action, json!({"id": "bob"})).await,
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
        t.ok(Some(&bob), "unfollow_dataset", json!({"id": "roads"}))
            .await,
        Value::Null
    );
    assert_eq!(
        t.ok(Some(&bob), "unfollow_dataset", json!({"id": "roads"}))
            .await,
        Value::Null,
        "unfollowing what one does not follow is not an error"
    );
    assert_eq!(
        t.ok(None, "dataset_follower_count", json!({"id": "roads"}))
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
        admin,
        "package_patch",
        json!({"id": "roads", "title": "Seen by bob"}),
    )
    .await;
    let dash = t
        .ok(Some(&bob), "dashboard_activity_list", json!({"limit": 100}))
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
        t.ok(Some(&bob), "dashboard_new_activities_count", json!({}))
            .await,
        json!(1)
    );
    assert_eq!(
        t.ok(Some(&bob), "dashboard_mark_activities_old", json!({}))
            .await,
        Value::Null
    );
    assert_eq!(
        t.ok(Some(&bob), "dashboard_new_activities_count", json!({}))
            .await,
        json!(0)
    );
    let e = t.err(None, "dashboard_activity_list", json!({})).await;
    assert_eq!(
        e["message"],
        "Access denied: You must be logged in to access your dashboard."
    );

    // A deleted dataset's last activity.
    t.ok(admin, "package_delete", json!({"id": "roads"})).await;
    let after_delete = t
        .ok(
            admin,
            "package_activity_list",
            json!({"id": "roads", "limit": 1}),
        )
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
            admin,
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
    scenario(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn activities_on_postgres() {
    scenario(true).await;
}
