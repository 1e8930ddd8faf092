//! The theme changes the dataset page; switching its plugin off restores the page.

use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_dcat as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_tantivy as _;
use example_theme as _;

use catalog_framework::store::PluginList;
use catalog_host::testkit::{StoreKind, TestServer};
use serde_json::json;

async fn dataset_page(plugins: Option<&str>) -> String {
    let s = TestServer::start(StoreKind::Sqlite, "admin", |config| {
        config.catalog.plugins =
            plugins.map(|p| PluginList(p.split(' ').map(str::to_string).collect()));
    })
    .await;
    s.ok(
        "organization_create",
        json!({"name": "pub", "title": "The Publisher"}),
    )
    .await;
    s.ok(
        "package_create",
        json!({"name": "d1", "title": "D1", "owner_org": "pub", "notes": "The *notes*."}),
    )
    .await;
    reqwest::get(format!("{}/dataset/d1", s.base_url))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

#[tokio::test]
async fn the_theme_applies_and_switching_it_off_restores_the_page() {
    let themed = dataset_page(None).await;
    assert!(
        themed.contains("<p class=\"banner\">Published by The Publisher</p>"),
        "{themed}"
    );
    assert!(
        themed.contains("<em>notes</em>"),
        "super() keeps the description"
    );
    assert!(themed.contains("header.site { background: #e8f3ec; }"));
    assert!(
        themed.contains("application/ld+json"),
        "super() keeps the head block's JSON-LD"
    );

    let plain = dataset_page(Some(
        "core default_auth default_dataset_schema search_tantivy dcat web",
    ))
    .await;
    assert!(!plain.contains("banner"), "{plain}");
    assert!(plain.contains("<em>notes</em>"));
    assert!(plain.contains("<h1>D1</h1>"));
}
