//! The audit-log plugin on SQLite and on PostgreSQL (a scratch database per test): its
//! migrations, its event subscriber in the changing transaction, its config section, its
//! chained action, and switching it off with `catalog.plugins`.

// Every plugin crate the test needs must be named, or the linker drops its registrations.
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_tantivy as _;
use example_audit_log as _;

mod book;

use catalog_framework::prelude::{Config, ErrorKind};
use catalog_host::testkit::{stores, StoreKind, TestApp};
use serde_json::json;

/// The log as (entity, change, action) triples, oldest first.
async fn log(t: &TestApp, object_id: Option<&str>) -> Vec<(String, String, String)> {
    let mut params = json!({"limit": 1000});
    if let Some(id) = object_id {
        params["object_id"] = json!(id);
    }
    let rows = t.ok("audit_log_list", params).await;
    let mut out: Vec<_> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["entity"].as_str().unwrap().to_string(),
                r["change"].as_str().unwrap().to_string(),
                r["action"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.reverse();
    out
}

fn triple(e: &str, c: &str, a: &str) -> (String, String, String) {
    (e.into(), c.into(), a.into())
}

#[tokio::test]
async fn every_change_writes_one_event_in_its_transaction() {
    for kind in stores().await {
        let t = TestApp::start(kind).await;
        let org = t.ok("organization_create", json!({"name": "office"})).await;
        let org_id = org["id"].as_str().unwrap().to_string();
        let ds = t
            .ok(
                "package_create",
                json!({"name": "roads", "title": "Roads", "owner_org": "office"}),
            )
            .await;
        let id = ds["id"].as_str().unwrap().to_string();
        t.ok("package_patch", json!({"id": id, "title": "Roads 2"}))
            .await;
        let res = t
            .ok(
                "resource_create",
                json!({"package_id": id, "url": "http://x/a.csv"}),
            )
            .await;
        t.ok("package_delete", json!({"id": id})).await;

        assert_eq!(
            log(&t, Some(&id)).await,
            [
                triple("package", "created", "package_create"),
                triple("package", "updated", "package_patch"),
                triple("package", "updated", "resource_create"),
                triple("package", "deleted", "package_delete"),
            ],
            "{kind:?}"
        );
        let res_id = res["id"].as_str().unwrap();
        assert_eq!(
            log(&t, Some(res_id)).await,
            [triple("resource", "created", "resource_create")],
            "{kind:?}"
        );
        assert_eq!(
            log(&t, Some(&org_id)).await,
            [
                triple("organization", "created", "organization_create"),
                // The creator becomes its admin.
                triple("member", "created", "organization_create"),
            ],
            "{kind:?}"
        );
        let full = t.ok("audit_log_list", json!({"limit": 1})).await;
        assert_eq!(full[0]["actor"], json!(t.admin.id), "{kind:?}");
        assert_eq!(full[0]["title"], json!("Roads 2"), "{kind:?}");

        // A call that fails writes nothing: its events go with its transaction.
        let before = log(&t, None).await.len();
        let err = t
            .fail(
                Some(&t.admin),
                "package_create",
                json!({"name": "Not A Name!"}),
            )
            .await;
        assert_eq!(err.kind, ErrorKind::Validation);
        assert_eq!(log(&t, None).await.len(), before, "{kind:?}");

        // A subscriber that refuses rolls the whole call back.
        let err = t
            .fail(
                Some(&t.admin),
                "package_create",
                json!({"name": "forbidden-x", "owner_org": "office"}),
            )
            .await;
        assert_eq!(err.kind, ErrorKind::Validation, "{kind:?}");
        assert!(err.to_error_object().to_string().contains("forbidden-*"));
        let gone = t
            .fail(Some(&t.admin), "package_show", json!({"id": "forbidden-x"}))
            .await;
        assert_eq!(gone.kind, ErrorKind::NotFound, "{kind:?}");
        assert_eq!(log(&t, None).await.len(), before, "{kind:?}");
    }
}

#[tokio::test]
async fn the_chained_package_show_calls_the_one_it_wraps() {
    for kind in stores().await {
        let t = TestApp::start(kind).await;
        t.ok("organization_create", json!({"name": "office"})).await;
        t.ok(
            "package_create",
            json!({"name": "roads", "owner_org": "office"}),
        )
        .await;
        t.ok("package_patch", json!({"id": "roads", "notes": "n"}))
            .await;
        let shown = t.ok("package_show", json!({"id": "roads"})).await;
        assert_eq!(shown["name"], "roads", "{kind:?}");
        assert_eq!(shown["notes"], "n", "{kind:?}");
        assert_eq!(shown["audit_event_count"], 2, "{kind:?}");
        let missing = t
            .fail(Some(&t.admin), "package_show", json!({"id": "nothing"}))
            .await;
        assert_eq!(missing.kind, ErrorKind::NotFound, "{kind:?}");
    }
}

#[tokio::test]
async fn migrations_run_once_and_are_recorded_per_plugin() {
    for kind in stores().await {
        let t = TestApp::start(kind).await;
        t.ok("organization_create", json!({"name": "office"})).await;
        let versions: Vec<(String,)> = sqlx::query_as(
            "SELECT version FROM plugin_migration WHERE plugin = 'audit_log' ORDER BY version",
        )
        .fetch_all(&t.app.store.pool)
        .await
        .unwrap();
        assert_eq!(
            versions,
            [
                ("0001_audit_event".to_string(),),
                ("0002_audit_event_title".to_string(),)
            ],
            "{kind:?}"
        );
        let (before,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM audit_event")
            .fetch_one(&t.app.store.pool)
            .await
            .unwrap();
        assert_eq!(
            before, 3,
            "the sysadmin's creation, the organization's and its admin membership: {kind:?}"
        );
        // A second start on the same store applies nothing again and keeps the rows.
        let again = t.another(|_| {}).await;
        let (rows,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM audit_event")
            .fetch_one(&again.app.store.pool)
            .await
            .unwrap();
        assert_eq!(rows, before, "{kind:?}");
    }
}

#[tokio::test]
async fn catalog_plugins_switches_the_plugin_off() {
    for kind in stores().await {
        let t = TestApp::start_with(kind, |config| {
            config.catalog.plugins = Some(catalog_host::PluginList(
                [
                    "core",
                    "default-auth",
                    "default_dataset_schema",
                    "search_tantivy",
                ]
                .map(String::from)
                .to_vec(),
            ));
        })
        .await;
        let status = t.ok("status_show", json!({})).await;
        assert_eq!(
            status["extensions"],
            json!([
                "core",
                "default_auth",
                "default_dataset_schema",
                "search_tantivy"
            ]),
            "{kind:?}"
        );
        let err = t.fail(Some(&t.admin), "audit_log_list", json!({})).await;
        assert_eq!(err.kind, ErrorKind::NotFound, "{kind:?}");
        t.ok("organization_create", json!({"name": "office"})).await;
        t.ok(
            "package_create",
            json!({"name": "forbidden-ok", "owner_org": "office"}),
        )
        .await;
        let shown = t.ok("package_show", json!({"id": "forbidden-ok"})).await;
        assert!(shown.get("audit_event_count").is_none(), "{kind:?}");
        let tables: Vec<(String,)> =
            sqlx::query_as("SELECT plugin FROM plugin_migration WHERE plugin = 'audit_log'")
                .fetch_all(&t.app.store.pool)
                .await
                .unwrap();
        assert!(tables.is_empty(), "{kind:?}");
    }
}

#[tokio::test]
async fn default_plugins_and_start_up_errors() {
    let t = TestApp::start(StoreKind::Sqlite).await;
    let status = t.ok("status_show", json!({})).await;
    assert_eq!(
        status["extensions"],
        json!([
            "audit_log",
            "core",
            "default_auth",
            "default_dataset_schema",
            "search_tantivy"
        ]),
        "the search backend not in use is not enabled by default"
    );

    let start = |config: Config| async move {
        let dir = tempfile::tempdir().unwrap();
        let url = catalog_framework::store::Store::sqlite_url_in(dir.path());
        catalog_host::build_app(config, &url, dir.path().into())
            .await
            .err()
            .map(|e| format!("{e:#}"))
            .unwrap_or_default()
    };
    let mut config = Config::default();
    config.catalog.plugins = Some(catalog_host::PluginList(vec![
        "core".into(),
        "no_such_plugin".into(),
    ]));
    let message = start(config).await;
    assert!(message.contains("no_such_plugin"), "{message}");
    assert!(message.contains("registered: audit_log, core"), "{message}");

    let mut config = Config::default();
    config
        .catalogext
        .values
        .insert("audit_log".into(), json!({"limit_max": -3}));
    let message = start(config).await;
    assert!(
        message.contains("catalogext.audit_log.limit_max must be a positive integer"),
        "{message}"
    );
}

#[tokio::test]
async fn the_chained_auth_function_runs_after_the_one_it_wraps() {
    for kind in stores().await {
        let t = TestApp::start_with(kind, |config| {
            config
                .catalogext
                .values
                .insert("freeze".into(), json!({"enabled": true}));
        })
        .await;
        t.ok("organization_create", json!({"name": "office"})).await;
        let editor = t.user("editor").await;
        t.ok(
            "organization_member_create",
            json!({"id": "office", "username": "editor", "role": "editor"}),
        )
        .await;
        let dataset = json!({"name": "roads", "owner_org": "office"});
        // The wrapped rule passes an editor of the organization; the wrapper then refuses.
        let err = t
            .fail(Some(&editor), "package_create", dataset.clone())
            .await;
        assert_eq!(err.kind, ErrorKind::Authorization, "{kind:?}");
        let message = err.to_error_object().to_string();
        assert!(
            message.contains("while the portal is frozen"),
            "{kind:?}: {message}"
        );
        // The wrapped rule refuses first, with its own message, a user of no organization.
        let outsider = t.user("outsider").await;
        let err = t
            .fail(Some(&outsider), "package_create", dataset.clone())
            .await;
        assert_eq!(err.kind, ErrorKind::Authorization, "{kind:?}");
        let message = err.to_error_object().to_string();
        assert!(!message.contains("frozen"), "{kind:?}: {message}");
        // Sysadmins never reach an auth function.
        t.ok("package_create", dataset).await;
    }
}

#[tokio::test]
async fn memberships_are_created_updated_and_deleted_once_each() {
    for kind in stores().await {
        let t = TestApp::start(kind).await;
        let org = t.ok("organization_create", json!({"name": "office"})).await;
        let org_id = org["id"].as_str().unwrap().to_string();
        t.user("ed").await;
        for role in ["editor", "admin", "admin"] {
            t.ok(
                "organization_member_create",
                json!({"id": "office", "username": "ed", "role": role}),
            )
            .await;
        }
        t.ok(
            "organization_member_delete",
            json!({"id": "office", "username": "ed"}),
        )
        .await;
        assert_eq!(
            log(&t, Some(&org_id)).await,
            [
                triple("organization", "created", "organization_create"),
                // The creator becomes the organization's admin.
                triple("member", "created", "organization_create"),
                triple("member", "created", "organization_member_create"),
                triple("member", "updated", "organization_member_create"),
                // The same role again changes nothing and records nothing.
                triple("member", "deleted", "organization_member_delete"),
            ],
            "{kind:?}"
        );
    }
}
