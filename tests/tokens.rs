//! API token expiry (`expires_in` × `unit`), the `apitoken_header_name` option, the site user,
//! `include_plugin_extras` and user_list's `order_by` of `number_created_packages` / `about`, on
//! SQLite and on PostgreSQL.

use catalog_framework::prelude::{identify, ActionContext, AppState, Config, Principal};
use catalog_framework::testkit::ScratchDb;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{json, Value};

use catalog_plugin_activity as _;
use catalog_plugin_auth as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_postgres as _;
use catalog_plugin_search_tantivy as _;

async fn call(
    app: &AppState,
    user: Option<Principal>,
    action: &str,
    params: Value,
) -> Result<Value, Value> {
    ActionContext::new(app.clone(), user)
        .run_top(action, params.as_object().cloned().unwrap_or_default())
        .await
        .map_err(|e| e.to_error_object())
}

fn header(name: &str, token: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(
        reqwest::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
        HeaderValue::from_str(token).unwrap(),
    );
    h
}

async fn check(kind: &str, database_url: &str, data_dir: &std::path::Path) {
    let mut config = Config::default();
    if kind == "postgres" {
        config.catalog.search.backend = "postgres".into();
    }
    config
        .catalog
        .other
        .insert("apitoken_header_name".into(), json!("X-Portal-Token"));
    let app = catalog_framework::build_app(config, database_url, data_dir.into())
        .await
        .unwrap();
    let admin =
        catalog_plugin_core::admin::create_user(&app, "admin", "a@example.org", "pass1234", true)
            .await
            .unwrap();
    let sysadmin = Some(Principal {
        id: admin["id"].as_str().unwrap().to_string(),
        name: "admin".into(),
        sysadmin: true,
        state: "active".into(),
    });
    call(
        &app,
        sysadmin.clone(),
        "user_create",
        json!({"name": "alice", "email": "al@example.org", "password": "pass1234"}),
    )
    .await
    .unwrap();

    // Validation of the expiry: both halves, positive integers.
    let e = call(
        &app,
        sysadmin.clone(),
        "api_token_create",
        json!({"user": "alice", "name": "t", "expires_in": 30}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        e,
        json!({"unit": ["Missing value"], "__type": "Validation Error"}),
        "{kind}"
    );
    let e = call(
        &app,
        sysadmin.clone(),
        "api_token_create",
        json!({"user": "alice", "name": "t", "expires_in": 0, "unit": "day"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        e,
        json!({"expires_in": ["Must be a positive integer"], "unit": ["Invalid integer"], "__type": "Validation Error"}),
        "{kind}"
    );

    // A token that lives two seconds works, then means anonymous.
    let short = call(
        &app,
        sysadmin.clone(),
        "api_token_create",
        json!({"user": "alice", "name": "short", "expires_in": 2, "unit": "1"}),
    )
    .await
    .unwrap();
    let forever = call(
        &app,
        sysadmin.clone(),
        "api_token_create",
        json!({"user": "alice", "name": "forever"}),
    )
    .await
    .unwrap();
    let short = short["token"].as_str().unwrap();
    let forever = forever["token"].as_str().unwrap();
    let who = identify(&app, &header("authorization", short)).await;
    assert_eq!(who.map(|p| p.name).as_deref(), Some("alice"), "{kind}");
    tokio::time::sleep(std::time::Duration::from_millis(2200)).await;
    assert!(
        identify(&app, &header("authorization", short))
            .await
            .is_none(),
        "{kind}: expired"
    );
    let who = identify(&app, &header("authorization", forever)).await;
    assert_eq!(who.map(|p| p.name).as_deref(), Some("alice"), "{kind}");

    // The configured header is read, the usual ones still work.
    let who = identify(&app, &header("x-portal-token", forever)).await;
    assert_eq!(who.map(|p| p.name).as_deref(), Some("alice"), "{kind}");

    // The site user: sysadmins only, created once, a sysadmin named after catalog.site_id.
    let e = call(&app, None, "get_site_user", json!({}))
        .await
        .unwrap_err();
    assert_eq!(
        e["message"],
        "Access denied: Only internal services allowed to use this action"
    );
    let a = call(&app, sysadmin.clone(), "get_site_user", json!({}))
        .await
        .unwrap();
    let b = call(&app, sysadmin.clone(), "get_site_user", json!({}))
        .await
        .unwrap();
    assert_eq!(a, b, "{kind}");
    assert_eq!(a["name"], "default");
    let shown = call(
        &app,
        sysadmin.clone(),
        "user_show",
        json!({"id": "default"}),
    )
    .await
    .unwrap();
    assert_eq!(shown["sysadmin"], true, "{kind}");
    // include_plugin_extras: sysadmins only.
    let shown = call(
        &app,
        sysadmin.clone(),
        "user_show",
        json!({"id": "alice", "include_plugin_extras": true}),
    )
    .await
    .unwrap();
    assert!(
        shown.as_object().unwrap().contains_key("plugin_extras"),
        "{kind}"
    );
    // user_list's order_by number_created_packages and about.
    call(
        &app,
        sysadmin.clone(),
        "package_create",
        json!({"name": format!("by-admin-{kind}")}),
    )
    .await
    .unwrap();
    let by_count = call(
        &app,
        sysadmin.clone(),
        "user_list",
        json!({"order_by": "number_created_packages", "all_fields": false}),
    )
    .await
    .unwrap();
    assert_eq!(
        by_count.as_array().unwrap().last(),
        Some(&json!("admin")),
        "{kind}: {by_count}"
    );
    call(
        &app,
        sysadmin.clone(),
        "user_patch",
        json!({"id": "alice", "about": "a"}),
    )
    .await
    .ok();
    let by_about = call(
        &app,
        sysadmin.clone(),
        "user_list",
        json!({"order_by": "about", "all_fields": false}),
    )
    .await
    .unwrap();
    assert!(
        by_about.as_array().unwrap().contains(&json!("alice")),
        "{kind}: {by_about}"
    );
    let listed = call(&app, sysadmin, "user_list", json!({})).await.unwrap();
    assert!(
        !listed
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["name"] == "default"),
        "{kind}: the site user is left out of user_list"
    );
}

#[tokio::test]
async fn token_expiry_header_name_and_site_user() {
    let dir = tempfile::tempdir().unwrap();
    let url = catalog_framework::store::Store::sqlite_url_in(dir.path());
    check("sqlite", &url, dir.path()).await;
    let db = ScratchDb::create("catalog_tokens")
        .await
        .expect("PostgreSQL at 127.0.0.1:5432");
    let dir = tempfile::tempdir().unwrap();
    check("postgres", &db.url, dir.path()).await;
}
