//! The embedding application on an ephemeral port: its own route and the nested catalog.

use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_tantivy as _;

use catalog_host::testkit::{StoreKind, TestApp};
use serde_json::{json, Value};

async fn get(client: &reqwest::Client, url: &str) -> (u16, Value) {
    let resp = client.get(url).send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn serves_its_own_routes_beside_the_nested_catalog() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let base = format!("http://{addr}");

    let t = TestApp::start_with(StoreKind::Sqlite, |config| {
        config.catalog.site_title = "Example Portal".into();
        config.catalog.site_url = format!("{base}{}", example_embedding::CATALOG_PREFIX);
        config.catalog.auth.create_unowned_dataset = true;
    })
    .await;
    let server = tokio::spawn(example_embedding::serve(t.app.clone(), listener));
    let token = t.token("admin", "tests").await;
    let client = reqwest::Client::new();

    // Our own route, before any dataset exists.
    let (status, body) = get(&client, &format!("{base}/hello")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["message"], json!("Hello from Example Portal"));
    assert_eq!(body["public_datasets"], json!(0));
    assert_eq!(body["api"], json!(format!("{base}/catalog/api/3/action")));

    // The catalog's Action API, under the prefix: a write with a token…
    let resp = client
        .post(format!("{base}/catalog/api/3/action/package_create"))
        .header("Authorization", &token)
        .json(&json!({"name": "embedded-dataset", "title": "Embedded"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let created: Value = resp.json().await.unwrap();
    assert_eq!(created["result"]["name"], json!("embedded-dataset"));

    // …and anonymous reads, whose help URL carries the prefix (it comes from site_url).
    let (status, body) = get(
        &client,
        &format!("{base}/catalog/api/3/action/package_show?id=embedded-dataset"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["title"], json!("Embedded"));
    assert_eq!(
        body["help"],
        json!(format!(
            "{base}/catalog/api/3/action/help_show?name=package_show"
        ))
    );
    let (status, body) = get(&client, &format!("{base}/catalog/api/3")).await;
    assert_eq!((status, body), (200, json!({"version": 3})));

    // CKAN's answer to an unknown action comes from the nested catalog too.
    let (status, body) = get(&client, &format!("{base}/catalog/api/3/action/no_such")).await;
    assert_eq!(status, 400);
    assert_eq!(body, json!("Bad request: Action name not known: no_such"));

    // Our route sees the new dataset through the same AppState.
    let (_, body) = get(&client, &format!("{base}/hello")).await;
    assert_eq!(body["public_datasets"], json!(1));

    // Nothing of the catalog is served at the root: it is nested, not merged.
    let resp = client
        .get(format!("{base}/api/3/action/status_show"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);

    server.abort();
}
