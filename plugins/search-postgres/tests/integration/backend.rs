//! The backend's life cycle: opening, live changes, rebuilds, several nodes on one database.

use std::sync::Arc;

use catalog_framework::prelude::Config;
use catalog_framework::prelude::*;
use catalog_framework::search::query::parse_q;
use catalog_framework::search::{
    IndexDocument, SearchBackend, SearchBackendFactory, SearchBackendInit, SearchRequest,
    SortField, SortKey,
};
use catalog_framework::store::Store;
use catalog_plugin_search_postgres::{PostgresBackend, PostgresFactory};

use crate::scratch::with_store;

fn doc(id: &str, name: &str, title: &str, modified: &str) -> IndexDocument {
    let dict = json!({
        "id": id, "name": name, "title": title, "type": "dataset", "private": false,
        "state": "active", "notes": format!("About {title}"),
        "metadata_created": "2024-01-01T00:00:00", "metadata_modified": modified,
        "tags": [{"name": "Shared"}], "organization": {"name": "acme"}, "groups": [],
        "resources": [], "extras": [],
    });
    IndexDocument::from_package(&dict, &["public".to_string()], "default", &[])
}

fn request(q: &str) -> SearchRequest {
    SearchRequest {
        query: parse_q(q, chrono::Utc::now()).unwrap(),
        filters: vec![],
        sort: vec![SortKey {
            field: SortField::Field("name".into()),
            descending: false,
        }],
        start: 0,
        rows: 100,
        facet_fields: vec![],
        facet_limit: None,
        facet_mincount: 1,
    }
}

async fn names(b: &dyn SearchBackend, q: &str) -> Vec<String> {
    b.search(&request(q))
        .await
        .unwrap()
        .docs
        .iter()
        .map(|d| {
            serde_json::from_str::<Value>(d).unwrap()["name"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

async fn open(store: &Store) -> Arc<dyn SearchBackend> {
    PostgresFactory
        .open(SearchBackendInit {
            config: Config::default(),
            store: store.clone(),
            data_dir: std::env::temp_dir(),
        })
        .await
        .expect("opening the backend")
}

#[tokio::test]
async fn refuses_a_sqlite_store() {
    let store = Store::connect("sqlite::memory:").await.unwrap();
    let err = PostgresBackend::open(store.pool.clone(), store.backend)
        .await
        .err()
        .expect("an error");
    assert_eq!(
        err.to_string(),
        "catalog.search.backend = postgres needs a postgres:// database URL"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_changes_rebuild_and_swap() {
    with_store(|store, _| async move {
        let b = open(&store).await;
        // Opening again (another node starting) changes nothing.
        let _again = open(&store).await;
        b.apply(
            vec![
                doc("1", "one", "First water", "2024-01-01T00:00:00.000001"),
                doc("2", "two", "Second water", "2024-01-02T00:00:00"),
            ],
            vec![],
        )
        .await
        .unwrap();
        assert_eq!(names(&*b, "title:water").await, ["one", "two"]);
        // Replacing a document replaces its every field.
        b.apply(
            vec![doc("2", "two", "Second river", "2024-01-03T00:00:00")],
            vec![],
        )
        .await
        .unwrap();
        assert_eq!(names(&*b, "title:water").await, ["one"]);
        assert_eq!(names(&*b, "title:river").await, ["two"]);
        // A change read before a later one (another node's drain) does not undo it.
        b.apply(
            vec![doc("2", "two", "Second stale", "2024-01-02T12:00:00")],
            vec![],
        )
        .await
        .unwrap();
        assert_eq!(names(&*b, "title:river").await, ["two"]);
        let mut indexed = b.indexed().await.unwrap();
        indexed.sort();
        assert_eq!(
            indexed,
            [
                ("1".to_string(), "2024-01-01T00:00:00.000001".to_string()),
                ("2".to_string(), "2024-01-03T00:00:00".to_string())
            ]
        );

        let mut rebuild = b.rebuild().await.unwrap();
        rebuild
            .add(vec![
                doc("3", "three", "Third water", "2024-01-04T00:00:00"),
                doc("4", "four", "Fourth water", "2024-01-04T00:00:00"),
            ])
            .await
            .unwrap();
        rebuild.delete(vec!["4".into()]).await.unwrap();
        assert_eq!(
            names(&*b, "*:*").await,
            ["one", "two"],
            "the old index serves during a rebuild"
        );
        assert!(
            b.rebuild().await.is_err(),
            "a second rebuild waits for the first"
        );
        rebuild.finish().await.unwrap();
        assert_eq!(names(&*b, "*:*").await, ["three"]);
        assert_eq!(names(&*b, "title:water").await, ["three"]);
        b.apply(vec![], vec!["3".into()]).await.unwrap();
        assert!(b.indexed().await.unwrap().is_empty());

        // The swapped-in table is a full one: another rebuild and swap work again.
        let mut rebuild = b.rebuild().await.unwrap();
        rebuild
            .add(vec![doc("5", "five", "Fifth", "2024-01-05T00:00:00")])
            .await
            .unwrap();
        rebuild.finish().await.unwrap();
        assert_eq!(names(&*b, "*:*").await, ["five"]);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_share_the_index_and_a_rebuild_sees_every_nodes_changes() {
    with_store(|store, url| async move {
        let a = open(&store).await;
        let other_store = Store::connect(&url).await.unwrap();
        let b = open(&other_store).await;
        a.apply(
            vec![
                doc("1", "one", "One", "2024-01-01T00:00:00"),
                doc("2", "two", "Two", "2024-01-01T00:00:00"),
            ],
            vec![],
        )
        .await
        .unwrap();
        assert_eq!(
            names(&*b, "*:*").await,
            ["one", "two"],
            "node b sees node a's writes"
        );
        // Counts and facets cached on one node go stale with a change made on another.
        let mut faceted = request("*:*");
        faceted.facet_fields = vec!["tags".into()];
        let before = a.search(&faceted).await.unwrap();
        assert_eq!(
            (before.count, before.facets[0].1.clone()),
            (2, vec![("Shared".to_string(), 2)])
        );
        b.apply(
            vec![doc("9", "nine", "Nine", "2024-01-01T00:00:00")],
            vec![],
        )
        .await
        .unwrap();
        let after = a.search(&faceted).await.unwrap();
        assert_eq!(
            (after.count, after.facets[0].1.clone()),
            (3, vec![("Shared".to_string(), 3)])
        );
        b.apply(vec![], vec!["9".into()]).await.unwrap();

        let mut rebuild = a.rebuild().await.unwrap();
        // The rebuild read dataset 1 and 2 before node b changed them…
        let stale_one = doc("1", "one", "One", "2024-01-01T00:00:00");
        let stale_two = doc("2", "two", "Two", "2024-01-01T00:00:00");
        // …node b updates 1 and deletes 2 meanwhile…
        b.apply(
            vec![doc("1", "one", "One updated", "2024-02-01T00:00:00")],
            vec!["2".into()],
        )
        .await
        .unwrap();
        // …and the rebuild's older batch arrives afterwards.
        rebuild.add(vec![stale_one, stale_two]).await.unwrap();
        // A new dataset made on node b during the rebuild.
        b.apply(
            vec![doc("3", "three", "Three", "2024-02-02T00:00:00")],
            vec![],
        )
        .await
        .unwrap();
        rebuild.finish().await.unwrap();
        assert_eq!(names(&*a, "*:*").await, ["one", "three"]);
        assert_eq!(names(&*a, "title:updated").await, ["one"]);
        assert_eq!(names(&*b, "*:*").await, ["one", "three"]);
        other_store.pool.close().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_rebuild_is_cleaned_up() {
    with_store(|store, _| async move {
        let b = open(&store).await;
        b.apply(vec![doc("1", "one", "One", "2024-01-01T00:00:00")], vec![])
            .await
            .unwrap();
        let mut rebuild = b.rebuild().await.unwrap();
        rebuild
            .add(vec![doc("9", "nine", "Nine", "2024-01-01T00:00:00")])
            .await
            .unwrap();
        drop(rebuild);
        // Its session ends with it and the lock goes: live changes stop reaching its table…
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        b.apply(
            vec![doc("3", "three", "Three", "2024-01-01T00:00:00")],
            vec![],
        )
        .await
        .unwrap();
        let mirrored: i64 = sqlx::query_scalar("SELECT count(*) FROM search_doc_new")
            .fetch_one(&store.pool)
            .await
            .unwrap();
        assert_eq!(mirrored, 1, "only the rebuild's own row");
        b.apply(vec![], vec!["3".into()]).await.unwrap();
        // …and the next start drops it.
        let _reopened = open(&store).await;
        let left: bool = sqlx::query_scalar("SELECT to_regclass('search_doc_new') IS NOT NULL")
            .fetch_one(&store.pool)
            .await
            .unwrap();
        assert!(!left, "the abandoned rebuild's table is dropped");
        assert_eq!(names(&*b, "*:*").await, ["one"]);
        let mut rebuild = b.rebuild().await.expect("a new rebuild can start");
        rebuild
            .add(vec![doc("2", "two", "Two", "2024-01-01T00:00:00")])
            .await
            .unwrap();
        rebuild.finish().await.unwrap();
        assert_eq!(names(&*b, "*:*").await, ["two"]);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_of_another_layout_is_recreated_empty() {
    with_store(|store, _| async move {
        let b = open(&store).await;
        b.apply(vec![doc("1", "one", "One", "2024-01-01T00:00:00")], vec![])
            .await
            .unwrap();
        sqlx::query("COMMENT ON TABLE search_doc IS 'some older layout'")
            .execute(&store.pool)
            .await
            .unwrap();
        let b = open(&store).await;
        assert!(b.indexed().await.unwrap().is_empty());
        assert_eq!(b.search(&request("*:*")).await.unwrap().count, 0);
    })
    .await;
}
