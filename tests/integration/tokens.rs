//! API token expiry (`expires_in` × `unit`), the `apitoken_header_name` option, the site user,
//! `include_plugin_extras` and user_list's `order_by` of `number_created_packages` / `about`, on
//! SQLite and on PostgreSQL.

use catalog_framework::web::identify;
use catalog_host::testkit::{stores, StoreKind, TestApp};
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::json;

fn header(name: &str, token: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(
        reqwest::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
        HeaderValue::from_str(token).unwrap(),
    );
    h
}

async fn check(kind: StoreKind) {
    let t = TestApp::start_with(kind, |config| {
        config
            .catalog
            .other
            .insert("apitoken_header_name".into(), json!("X-Portal-Token"));
    })
    .await;
    let (app, sysadmin) = (&t.app, Some(&t.admin));
    t.user("alice").await;

    // Validation of the expiry: both halves, positive integers.
    let e = t
        .err(
            sysadmin,
            "api_token_create",
            json!({"user": "alice", "name": "t", "expires_in": 30}),
        )
        .await;
    assert_eq!(
        e,
        json!({"unit": ["Missing value"], "__type": "Validation Error"}),
        "{kind}"
    );
    let e = t
        .err(
            sysadmin,
            "api_token_create",
            json!({"user": "alice", "name": "t", "expires_in": 0, "unit": "day"}),
        )
        .await;
    assert_eq!(
        e,
        json!({"expires_in": ["Must be a positive integer"], "unit": ["Invalid integer"], "__type": "Validation Error"}),
        "{kind}"
    );

    // A token that lives two seconds works, then means anonymous.
    let short = t
        .ok(
            "api_token_create",
            json!({"user": "alice", "name": "short", "expires_in": 2, "unit": "1"}),
        )
        .await;
    let forever = t
        .ok(
            "api_token_create",
            json!({"user": "alice", "name": "forever"}),
        )
        .await;
    let short = short["token"].as_str().unwrap();
    let forever = forever["token"].as_str().unwrap();
    let who = identify(app, &header("authorization", short)).await;
    assert_eq!(who.map(|p| p.name).as_deref(), Some("alice"), "{kind}");
    tokio::time::sleep(std::time::Duration::from_millis(2200)).await;
    assert!(
        identify(app, &header("authorization", short))
            .await
            .is_none(),
        "{kind}: expired"
    );
    let who = identify(app, &header("authorization", forever)).await;
    assert_eq!(who.map(|p| p.name).as_deref(), Some("alice"), "{kind}");

    // The configured header is read, the usual ones still work.
    let who = identify(app, &header("x-portal-token", forever)).await;
    assert_eq!(who.map(|p| p.name).as_deref(), Some("alice"), "{kind}");

    // The site user: sysadmins only, created once, a sysadmin named after catalog.site_id.
    let e = t.err(None, "get_site_user", json!({})).await;
    assert_eq!(
        e["message"],
        "Access denied: Only internal services allowed to use this action"
    );
    let a = t.ok("get_site_user", json!({})).await;
    let b = t.ok("get_site_user", json!({})).await;
    assert_eq!(a, b, "{kind}");
    assert_eq!(a["name"], "default");
    let shown = t.ok("user_show", json!({"id": "default"})).await;
    assert_eq!(shown["sysadmin"], true, "{kind}");
    // include_plugin_extras: sysadmins only.
    let shown = t
        .ok(
            "user_show",
            json!({"id": "alice", "include_plugin_extras": true}),
        )
        .await;
    assert!(
        shown.as_object().unwrap().contains_key("plugin_extras"),
        "{kind}"
    );
    // user_list's order_by number_created_packages and about.
    t.ok(
        "organization_create",
        json!({"name": format!("org-{kind}")}),
    )
    .await;
    t.ok(
        "package_create",
        json!({"name": format!("by-admin-{kind}"), "owner_org": format!("org-{kind}")}),
    )
    .await;
    let by_count = t
        .ok(
            "user_list",
            json!({"order_by": "number_created_packages", "all_fields": false}),
        )
        .await;
    assert_eq!(
        by_count.as_array().unwrap().last(),
        Some(&json!("admin")),
        "{kind}: {by_count}"
    );
    t.call(sysadmin, "user_patch", json!({"id": "alice", "about": "a"}))
        .await
        .ok();
    let by_about = t
        .ok(
            "user_list",
            json!({"order_by": "about", "all_fields": false}),
        )
        .await;
    assert!(
        by_about.as_array().unwrap().contains(&json!("alice")),
        "{kind}: {by_about}"
    );
    let listed = t.ok("user_list", json!({})).await;
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
    for kind in stores().await {
        check(kind).await;
    }
}
