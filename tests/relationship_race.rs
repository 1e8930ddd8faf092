//! Writers racing on PostgreSQL to create the same dataset relationship: every call succeeds
//! and exactly one relationship exists afterwards (the partial unique index sends the losers
//! round again, and they find the winner's).

use catalog_framework::prelude::{ActionContext, AppState, Config, Principal};
use catalog_framework::testkit::ScratchDb;
use serde_json::{json, Value};

use catalog_plugin_auth as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_postgres as _;

async fn call(
    app: &AppState,
    user: &Principal,
    action: &str,
    params: Value,
) -> Result<Value, Value> {
    ActionContext::new(app.clone(), Some(user.clone()))
        .run_top(action, params.as_object().cloned().unwrap_or_default())
        .await
        .map_err(|e| e.to_error_object())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_relationship_creates_make_one_relationship() {
    let db = ScratchDb::create("catalog_relrace")
        .await
        .expect("PostgreSQL at 127.0.0.1:5432");
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.catalog.search.backend = "postgres".into();
    config.catalog.auth.create_unowned_dataset = true;
    let app = catalog_framework::build_app(config, &db.url, dir.path().into())
        .await
        .unwrap();
    let admin =
        catalog_plugin_core::admin::create_user(&app, "admin", "a@example.org", "pass1234", true)
            .await
            .unwrap();
    let admin = Principal {
        id: admin["id"].as_str().unwrap().to_string(),
        name: "admin".into(),
        sysadmin: true,
        state: "active".into(),
    };
    for name in ["race-a", "race-b"] {
        call(&app, &admin, "package_create", json!({"name": name}))
            .await
            .unwrap();
    }
    let writers: Vec<_> = (0..8)
        .map(|i| {
            let (app, admin) = (app.clone(), admin.clone());
            tokio::spawn(async move {
                let p = json!({"subject": "race-a", "object": "race-b", "type": "depends_on", "comment": format!("w{i}")});
                call(&app, &admin, "package_relationship_create", p).await
            })
        })
        .collect();
    for w in writers {
        let r = w.await.unwrap();
        assert!(r.is_ok(), "every racing create succeeds: {r:?}");
    }
    let listed = call(
        &app,
        &admin,
        "package_relationships_list",
        json!({"id": "race-a"}),
    )
    .await
    .unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    let shown = call(&app, &admin, "package_show", json!({"id": "race-a"}))
        .await
        .unwrap();
    assert_eq!(
        shown["relationships_as_subject"].as_array().unwrap().len(),
        1
    );
}
