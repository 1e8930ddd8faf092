//! Parallel writers on one row: on PostgreSQL nothing serializes them but the store's row
//! locks, so a read-modify-write without one loses writes there (SQLite's single writer hides
//! it). Every acknowledged write must be in the store afterwards, and a lost race must get
//! CKAN's validation message, never a 500.

use futures::future::join_all;
use serde_json::{json, Value};

use crate::support::{stores, Server};

const WRITERS: usize = 16;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_writes_to_one_dataset_are_never_lost() {
    for kind in stores().await {
        let server =
            Server::start(kind, &[("CATALOG__AUTH__CREATE_UNOWNED_DATASET", "true")]).await;
        resource_creates(&server).await;
        field_patches(&server).await;
        resource_patches(&server).await;
    }
}

/// 16 writers × 10 `resource_create` on one dataset: 160 answers of 200, 160 resources.
async fn resource_creates(s: &Server) {
    let ds = s
        .ok("package_create", json!({"name": "many-resources"}))
        .await;
    let id = ds["id"].as_str().unwrap().to_string();
    let calls = (0..WRITERS).map(|w| {
        let id = id.clone();
        async move {
            let mut acked = Vec::new();
            for i in 0..10 {
                let name = format!("r-{w}-{i}");
                let (status, body) = s
                    .call(
                        "resource_create",
                        json!({"package_id": id, "name": name, "url": "http://example.org/x.csv"}),
                    )
                    .await;
                assert_eq!(status, 200, "{}: resource_create: {body}", s.kind);
                acked.push(body["result"]["id"].as_str().unwrap().to_string());
            }
            acked
        }
    });
    let acked: Vec<String> = join_all(calls).await.into_iter().flatten().collect();
    let shown = s.ok("package_show", json!({"id": id})).await;
    let ids: Vec<&str> = shown["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let lost: Vec<&String> = acked
        .iter()
        .filter(|a| !ids.contains(&a.as_str()))
        .collect();
    assert!(
        lost.is_empty(),
        "{}: {} of {} acknowledged resources lost",
        s.kind,
        lost.len(),
        acked.len()
    );
    assert_eq!(ids.len(), WRITERS * 10, "{}", s.kind);
    assert_eq!(shown["num_resources"], json!(WRITERS * 10));
}

/// Concurrent `package_patch` calls, each of a different field: every one stays.
async fn field_patches(s: &Server) {
    const FIELDS: [&str; 8] = [
        "title",
        "notes",
        "version",
        "url",
        "author",
        "author_email",
        "maintainer",
        "maintainer_email",
    ];
    let ds = s.ok("package_create", json!({"name": "patched"})).await;
    let id = ds["id"].as_str().unwrap().to_string();
    for round in 0..10 {
        let calls = FIELDS.iter().map(|f| {
            let id = id.clone();
            async move {
                let value = if f.ends_with("email") {
                    format!("{f}-{round}@example.org")
                } else {
                    format!("{f}-{round}")
                };
                let (status, body) = s.call("package_patch", json!({"id": id, *f: value})).await;
                assert_eq!(status, 200, "{}: package_patch {f}: {body}", s.kind);
            }
        });
        join_all(calls).await;
        let shown = s.ok("package_show", json!({"id": id})).await;
        for f in FIELDS {
            let want = if f.ends_with("email") {
                format!("{f}-{round}@example.org")
            } else {
                format!("{f}-{round}")
            };
            assert_eq!(
                shown[f],
                json!(want),
                "{}: round {round}: the patch of {f} was lost",
                s.kind
            );
        }
    }
}

/// `resource_patch` of 16 different resources of one dataset, in parallel: all 16 stay.
async fn resource_patches(s: &Server) {
    let resources: Vec<Value> = (0..WRITERS)
        .map(|i| json!({"name": format!("res-{i}"), "url": "http://example.org/a"}))
        .collect();
    let ds = s
        .ok(
            "package_create",
            json!({"name": "patch-resources", "resources": resources}),
        )
        .await;
    let ids: Vec<String> = ds["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    for round in 0..3 {
        let calls = ids.iter().map(|rid| async move {
            let (status, body) = s
                .call(
                    "resource_patch",
                    json!({"id": rid, "description": format!("{rid}-{round}")}),
                )
                .await;
            assert_eq!(status, 200, "{}: resource_patch: {body}", s.kind);
        });
        join_all(calls).await;
        let shown = s.ok("package_show", json!({"id": ds["id"]})).await;
        for r in shown["resources"].as_array().unwrap() {
            assert_eq!(
                r["description"],
                json!(format!("{}-{round}", r["id"].as_str().unwrap())),
                "{}: round {round}: a resource_patch was lost",
                s.kind
            );
        }
    }
}

/// 10 rounds of 16 creates of one name, for datasets, organizations and groups: one wins,
/// the others get CKAN's validation message.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_creates_of_one_name_get_validation_errors() {
    for kind in stores().await {
        let server =
            Server::start(kind, &[("CATALOG__AUTH__CREATE_UNOWNED_DATASET", "true")]).await;
        for (action, message) in [
            ("package_create", "That URL is already in use."),
            ("organization_create", "Group name already exists in database"),
            ("group_create", "Group name already exists in database"),
            (
                "user_create",
                "The username is already associated with another account. Please use a different username.",
            ),
        ] {
            for round in 0..10 {
                let name = format!("race-{}-{round}", action.replace('_', "-"));
                let calls = (0..WRITERS).map(|i| {
                    let mut params = json!({"name": name});
                    if action == "user_create" {
                        params["email"] = json!(format!("{name}-{i}@example.org"));
                        params["password"] = json!("password-12345");
                    }
                    server.call(action, params)
                });
                let answers = join_all(calls).await;
                let wins = answers.iter().filter(|(s, _)| *s == 200).count();
                assert_eq!(wins, 1, "{kind}: {action}: {answers:?}");
                for (status, body) in answers.iter().filter(|(s, _)| *s != 200) {
                    assert_eq!(*status, 409, "{kind}: {action}: {body}\n{}", server.errors());
                    assert_eq!(body["error"]["__type"], "Validation Error", "{kind}: {body}");
                    assert_eq!(body["error"]["name"][0], message, "{kind}: {action}: {body}");
                }
            }
        }
    }
}
