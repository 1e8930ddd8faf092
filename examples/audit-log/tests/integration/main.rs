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

use catalog_framework::prelude::Config;
use catalog_framework::prelude::{ActionContext, AppState, Principal};
use catalog_framework::prelude::{CkanError, ErrorKind};
use catalog_framework::testkit::ScratchDb;
use serde_json::{json, Value};

#[derive(Clone, Copy, Debug)]
enum Kind {
    Sqlite,
    Postgres,
}

const STORES: [Kind; 2] = [Kind::Sqlite, Kind::Postgres];

/// An app on a fresh store, with no HTTP server: actions run through `run_top`, as the HTTP
/// handler runs them.
struct TestApp {
    app: AppState,
    sysadmin: Principal,
    database_url: String,
    data_dir: tempfile::TempDir,
    _db: Option<ScratchDb>,
}

impl TestApp {
    async fn start(kind: Kind, config: Config) -> anyhow::Result<TestApp> {
        let data_dir = tempfile::tempdir()?;
        let (database_url, db) = match kind {
            Kind::Sqlite => (
                catalog_framework::store::Store::sqlite_url_in(data_dir.path()),
                None,
            ),
            Kind::Postgres => {
                let db = ScratchDb::create("catalog_audit")
                    .await
                    .ok_or_else(|| anyhow::anyhow!("PostgreSQL at 127.0.0.1:5432 is required"))?;
                (db.url.clone(), Some(db))
            }
        };
        let app =
            catalog_framework::build_app(config, &database_url, data_dir.path().into()).await?;
        let user = catalog_plugin_core::admin::create_user(
            &app,
            "admin",
            "a@example.org",
            "pass1234",
            true,
        )
        .await?;
        let sysadmin = Principal {
            id: user["id"].as_str().unwrap_or_default().to_string(),
            name: "admin".into(),
            sysadmin: true,
            state: "active".into(),
        };
        Ok(TestApp {
            app,
            sysadmin,
            database_url,
            data_dir,
            _db: db,
        })
    }

    async fn call(&self, action: &str, params: Value) -> Result<Value, CkanError> {
        self.call_as(&self.sysadmin, action, params).await
    }

    async fn call_as(
        &self,
        who: &Principal,
        action: &str,
        params: Value,
    ) -> Result<Value, CkanError> {
        let params = params.as_object().cloned().unwrap_or_default();
        ActionContext::new(self.app.clone(), Some(who.clone()))
            .run_top(action, params)
            .await
    }

    /// A new user who is no sysadmin, as a caller.
    async fn user(&self, name: &str) -> Principal {
        let email = format!("{name}@example.org");
        let user =
            catalog_plugin_core::admin::create_user(&self.app, name, &email, "pass1234", false)
                .await
                .unwrap();
        Principal {
            id: user["id"].as_str().unwrap().to_string(),
            name: name.into(),
            sysadmin: false,
            state: "active".into(),
        }
    }

    /// The log as (entity, change, action) triples, oldest first.
    async fn log(&self, object_id: Option<&str>) -> Vec<(String, String, String)> {
        let mut params = json!({"limit": 1000});
        if let Some(id) = object_id {
            params["object_id"] = json!(id);
        }
        let rows = self.call("audit_log_list", params).await.unwrap();
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
}

fn triple(e: &str, c: &str, a: &str) -> (String, String, String) {
    (e.into(), c.into(), a.into())
}

#[tokio::test]
async fn every_change_writes_one_event_in_its_transaction() {
    for kind in STORES {
        let t = TestApp::start(kind, Config::default()).await.unwrap();
        let org = t
            .call("organization_create", json!({"name": "office"}))
            .await
            .unwrap();
        let org_id = org["id"].as_str().unwrap().to_string();
        let ds = t
            .call(
                "package_create",
                json!({"name": "roads", "title": "Roads", "owner_org": "office"}),
            )
            .await
            .unwrap();
        let id = ds["id"].as_str().unwrap().to_string();
        t.call("package_patch", json!({"id": id, "title": "Roads 2"}))
            .await
            .unwrap();
        let res = t
            .call(
                "resource_create",
                json!({"package_id": id, "url": "http://x/a.csv"}),
            )
            .await
            .unwrap();
        t.call("package_delete", json!({"id": id})).await.unwrap();

        assert_eq!(
            t.log(Some(&id)).await,
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
            t.log(Some(res_id)).await,
            [triple("resource", "created", "resource_create")],
            "{kind:?}"
        );
        assert_eq!(
            t.log(Some(&org_id)).await,
            [
                triple("organization", "created", "organization_create"),
                // The creator becomes its admin.
                triple("member", "created", "organization_create"),
            ],
            "{kind:?}"
        );
        let full = t.call("audit_log_list", json!({"limit": 1})).await.unwrap();
        assert_eq!(full[0]["actor"], json!(t.sysadmin.id), "{kind:?}");
        assert_eq!(full[0]["title"], json!("Roads 2"), "{kind:?}");

        // A call that fails writes nothing: its events go with its transaction.
        let before = t.log(None).await.len();
        let err = t
            .call("package_create", json!({"name": "Not A Name!"}))
            .await
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Validation);
        assert_eq!(t.log(None).await.len(), before, "{kind:?}");

        // A subscriber that refuses rolls the whole call back.
        let err = t
            .call(
                "package_create",
                json!({"name": "forbidden-x", "owner_org": "office"}),
            )
            .await
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Validation, "{kind:?}");
        assert!(err.to_error_object().to_string().contains("forbidden-*"));
        let gone = t
            .call("package_show", json!({"id": "forbidden-x"}))
            .await
            .unwrap_err();
        assert_eq!(gone.kind, ErrorKind::NotFound, "{kind:?}");
        assert_eq!(t.log(None).await.len(), before, "{kind:?}");
    }
}

#[tokio::test]
async fn the_chained_package_show_calls_the_one_it_wraps() {
    for kind in STORES {
        let t = TestApp::start(kind, Config::default()).await.unwrap();
        t.call("organization_create", json!({"name": "office"}))
            .await
            .unwrap();
        t.call(
            "package_create",
            json!({"name": "roads", "owner_org": "office"}),
        )
        .await
        .unwrap();
        t.call("package_patch", json!({"id": "roads", "notes": "n"}))
            .await
            .unwrap();
        let shown = t
            .call("package_show", json!({"id": "roads"}))
            .await
            .unwrap();
        assert_eq!(shown["name"], "roads", "{kind:?}");
        assert_eq!(shown["notes"], "n", "{kind:?}");
        assert_eq!(shown["audit_event_count"], 2, "{kind:?}");
        let missing = t
            .call("package_show", json!({"id": "nothing"}))
            .await
            .unwrap_err();
        assert_eq!(missing.kind, ErrorKind::NotFound, "{kind:?}");
    }
}

#[tokio::test]
async fn migrations_run_once_and_are_recorded_per_plugin() {
    for kind in STORES {
        let t = TestApp::start(kind, Config::default()).await.unwrap();
        t.call("organization_create", json!({"name": "office"}))
            .await
            .unwrap();
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
        let again = catalog_framework::build_app(
            Config::default(),
            &t.database_url,
            t.data_dir.path().join("second"),
        )
        .await
        .unwrap();
        let (rows,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM audit_event")
            .fetch_one(&again.store.pool)
            .await
            .unwrap();
        assert_eq!(rows, before, "{kind:?}");
    }
}

#[tokio::test]
async fn catalog_plugins_switches_the_plugin_off() {
    for kind in STORES {
        let mut config = Config::default();
        config.catalog.plugins = Some(catalog_framework::host::PluginList(
            [
                "core",
                "default-auth",
                "default_dataset_schema",
                "search_tantivy",
            ]
            .map(String::from)
            .to_vec(),
        ));
        let t = TestApp::start(kind, config).await.unwrap();
        let status = t.call("status_show", json!({})).await.unwrap();
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
        let err = t.call("audit_log_list", json!({})).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::NotFound, "{kind:?}");
        t.call("package_create", json!({"name": "forbidden-ok"}))
            .await
            .unwrap();
        let shown = t
            .call("package_show", json!({"id": "forbidden-ok"}))
            .await
            .unwrap();
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
    let t = TestApp::start(Kind::Sqlite, Config::default())
        .await
        .unwrap();
    let status = t.call("status_show", json!({})).await.unwrap();
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
        catalog_framework::build_app(config, &url, dir.path().into())
            .await
            .err()
            .map(|e| format!("{e:#}"))
            .unwrap_or_default()
    };
    let mut config = Config::default();
    config.catalog.plugins = Some(catalog_framework::host::PluginList(vec![
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
    for kind in STORES {
        let mut config = Config::default();
        config
            .catalogext
            .values
            .insert("freeze".into(), json!({"enabled": true}));
        let t = TestApp::start(kind, config).await.unwrap();
        t.call("organization_create", json!({"name": "office"}))
            .await
            .unwrap();
        let editor = t.user("editor").await;
        t.call(
            "organization_member_create",
            json!({"id": "office", "username": "editor", "role": "editor"}),
        )
        .await
        .unwrap();
        let dataset = json!({"name": "roads", "owner_org": "office"});
        // The wrapped rule passes an editor of the organization; the wrapper then refuses.
        let err = t
            .call_as(&editor, "package_create", dataset.clone())
            .await
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Authorization, "{kind:?}");
        let message = err.to_error_object().to_string();
        assert!(
            message.contains("while the portal is frozen"),
            "{kind:?}: {message}"
        );
        // The wrapped rule refuses first, with its own message, a user of no organization.
        let outsider = t.user("outsider").await;
        let err = t
            .call_as(&outsider, "package_create", dataset.clone())
            .await
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Authorization, "{kind:?}");
        let message = err.to_error_object().to_string();
        assert!(!message.contains("frozen"), "{kind:?}: {message}");
        // Sysadmins never reach an auth function.
        t.call("package_create", dataset).await.unwrap();
    }
}

#[tokio::test]
async fn memberships_are_created_updated_and_deleted_once_each() {
    for kind in STORES {
        let t = TestApp::start(kind, Config::default()).await.unwrap();
        let org = t
            .call("organization_create", json!({"name": "office"}))
            .await
            .unwrap();
        let org_id = org["id"].as_str().unwrap().to_string();
        t.user("ed").await;
        for role in ["editor", "admin", "admin"] {
            t.call(
                "organization_member_create",
                json!({"id": "office", "username": "ed", "role": role}),
            )
            .await
            .unwrap();
        }
        t.call(
            "organization_member_delete",
            json!({"id": "office", "username": "ed"}),
        )
        .await
        .unwrap();
        assert_eq!(
            t.log(Some(&org_id)).await,
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
