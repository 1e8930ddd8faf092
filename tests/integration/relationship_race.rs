//! Writers racing on PostgreSQL to create the same dataset relationship: every call succeeds
//! and exactly one relationship exists afterwards (the partial unique index sends the losers
//! round again, and they find the winner's).

use catalog_host::testkit::{postgres, TestApp};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_relationship_creates_make_one_relationship() {
    let Some(kind) = postgres().await else {
        return;
    };
    let t = TestApp::start_with(kind, |c| c.catalog.auth.create_unowned_dataset = true).await;
    let t = std::sync::Arc::new(t);
    for name in ["race-a", "race-b"] {
        t.ok("package_create", json!({"name": name})).await;
    }
    let writers: Vec<_> = (0..8)
        .map(|i| {
            let t = t.clone();
            tokio::spawn(async move {
                let p = json!({"subject": "race-a", "object": "race-b", "type": "depends_on", "comment": format!("w{i}")});
                t.call(Some(&t.admin), "package_relationship_create", p)
                    .await
                    .map_err(|e| e.to_error_object())
            })
        })
        .collect();
    for w in writers {
        let r = w.await.unwrap();
        assert!(r.is_ok(), "every racing create succeeds: {r:?}");
    }
    let listed = t
        .ok("package_relationships_list", json!({"id": "race-a"}))
        .await;
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    let shown = t.ok("package_show", json!({"id": "race-a"})).await;
    assert_eq!(
        shown["relationships_as_subject"].as_array().unwrap().len(),
        1
    );
}
