//! The `ckan` harvester against another catalog over HTTP: a round trip equal field by field,
//! nothing written on a second run, three changes updated and two deletions deleted on a third,
//! remote ids and names kept.

use catalog_host::testkit::{stores, TestServer};
use serde_json::{json, Map, Value};

use crate::support::{extra, harvested, harvester, run_job, source};

/// What a round trip may change: ids, times, the organization and the harvest extras.
fn comparable(d: &Value) -> Value {
    let mut d = d.as_object().cloned().unwrap_or_default();
    for k in [
        "id",
        "owner_org",
        "organization",
        "metadata_created",
        "metadata_modified",
        "creator_user_id",
        "revision_id",
    ] {
        d.remove(k);
    }
    if let Some(Value::Array(extras)) = d.get_mut("extras") {
        extras.retain(|e| {
            !matches!(
                e["key"].as_str(),
                Some("guid" | "harvest_object_id" | "harvest_source_id" | "harvest_source_title")
            )
        });
    }
    if let Some(Value::Array(resources)) = d.get_mut("resources") {
        for r in resources.iter_mut().filter_map(Value::as_object_mut) {
            for k in [
                "id",
                "package_id",
                "created",
                "metadata_modified",
                "revision_id",
            ] {
                r.remove(k);
            }
        }
    }
    for list in ["tags", "groups"] {
        if let Some(Value::Array(items)) = d.get_mut(list) {
            for i in items.iter_mut().filter_map(Value::as_object_mut) {
                i.remove("id");
            }
        }
    }
    Value::Object(d)
}

async fn source_catalog(kind: catalog_host::testkit::StoreKind, n: usize) -> TestServer {
    let a = TestServer::start(kind, "admin", |_| {}).await;
    a.ok(
        "organization_create",
        json!({"name": "city", "title": "City"}),
    )
    .await;
    a.ok("group_create", json!({"name": "transport"})).await;
    for i in 0..n {
        let mut d = json!({
            "name": format!("ds-{i:03}"),
            "title": format!("Dataset {i}"),
            "notes": format!("About **{i}**."),
            "owner_org": "city",
            "license_id": "cc-by",
            "author": "Someone",
            "version": "1.0",
            "url": format!("https://city.example.org/ds/{i}"),
            "tags": [{"name": "open"}, {"name": format!("t{}", i % 3)}],
            "extras": [{"key": "theme", "value": "mobility"}, {"key": "spatial_text", "value": "City"}],
            "resources": [
                {"name": "CSV", "url": format!("https://city.example.org/{i}.csv"), "format": "CSV",
                 "description": "the data"},
                {"name": "API", "url": format!("https://city.example.org/api/{i}"), "format": "API"}
            ],
        });
        if i % 4 == 0 {
            d["groups"] = json!([{"name": "transport"}]);
        }
        a.ok("package_create", d).await;
    }
    // A private dataset is not harvested.
    a.ok(
        "package_create",
        json!({"name": "secret", "owner_org": "city", "private": true}),
    )
    .await;
    a
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_ckan_catalog_round_trips_and_stays_in_sync() {
    for kind in stores().await {
        let a = source_catalog(kind, 23).await;
        // Clears of more than 5 datasets run as a job (checked at the end).
        let b = harvester(kind, json!({"clear_inline_max": 5})).await;
        let src = source(
            &b,
            "city-portal",
            &a.base_url,
            "ckan",
            json!({"rows": 5, "remote_groups": "create"}),
        )
        .await;

        let job = run_job(&b, &src, json!({})).await;
        assert_eq!(job["stats"]["added"], 23, "{kind}: {job}");
        assert_eq!(job["stats"]["errored"], 0, "{kind}: {job}");
        assert_eq!(job["gather_error_summary"], json!([]), "{kind}: {job}");
        let got = harvested(&b, &src).await;
        assert_eq!(got.len(), 23, "{kind}");
        for i in [0usize, 7, 22] {
            let name = format!("ds-{i:03}");
            let theirs = a.ok("package_show", json!({"id": name})).await;
            let ours = b.ok("package_show", json!({"id": name})).await;
            assert_eq!(ours["id"], theirs["id"], "{kind}: the remote id is kept");
            assert_eq!(comparable(&ours), comparable(&theirs), "{kind}: {name}");
            assert_eq!(ours["organization"]["name"], "harvested", "{kind}");
            assert_eq!(
                extra(&ours, "harvest_source_id").as_deref(),
                Some(src.as_str()),
                "{kind}"
            );
            assert_eq!(
                extra(&ours, "harvest_source_title").as_deref(),
                Some("city-portal"),
                "{kind}"
            );
            assert_eq!(
                extra(&ours, "guid"),
                theirs["id"].as_str().map(str::to_string),
                "{kind}"
            );
            let object = b
                .ok("harvest_object_show", json!({"dataset_id": name}))
                .await;
            assert_eq!(object["guid"], theirs["id"], "{kind}");
            assert_eq!(object["current"], true, "{kind}");
            assert_eq!(object["report_status"], "added", "{kind}");
        }
        assert!(
            b.call(Some(&b.admin), "package_show", json!({"id": "secret"}))
                .await
                .is_err(),
            "{kind}"
        );

        // Nothing changed at the source: nothing is written.
        let before: Map<String, Value> = got
            .iter()
            .map(|d| {
                (
                    d["name"].as_str().unwrap().to_string(),
                    d["metadata_modified"].clone(),
                )
            })
            .collect();
        let job = run_job(&b, &src, json!({})).await;
        assert_eq!(job["stats"]["added"], 0, "{kind}: {job}");
        assert_eq!(job["stats"]["updated"], 0, "{kind}: {job}");
        assert_eq!(job["stats"]["deleted"], 0, "{kind}: {job}");
        for d in harvested(&b, &src).await {
            assert_eq!(
                before[d["name"].as_str().unwrap()],
                d["metadata_modified"],
                "{kind}"
            );
        }

        // Three changed, two deleted at the source.
        for i in [1, 2, 3] {
            a.ok(
                "package_patch",
                json!({"id": format!("ds-{i:03}"), "notes": format!("Changed {i}")}),
            )
            .await;
        }
        for i in [10, 11] {
            a.ok("package_delete", json!({"id": format!("ds-{i:03}")}))
                .await;
        }
        let job = run_job(&b, &src, json!({})).await;
        assert_eq!(job["stats"]["updated"], 3, "{kind}: {job}");
        assert_eq!(job["stats"]["deleted"], 2, "{kind}: {job}");
        assert_eq!(job["stats"]["added"], 0, "{kind}: {job}");
        assert_eq!(job["stats"]["errored"], 0, "{kind}: {job}");
        let changed = b.ok("package_show", json!({"id": "ds-002"})).await;
        assert_eq!(changed["notes"], "Changed 2", "{kind}");
        let gone = b.ok("package_show", json!({"id": "ds-010"})).await;
        assert_eq!(gone["state"], "deleted", "{kind}");
        assert_eq!(harvested(&b, &src).await.len(), 21, "{kind}");
        let status = b.ok("harvest_source_show_status", json!({"id": src})).await;
        assert_eq!(status["total_datasets"], 21, "{kind}: {status}");
        assert_eq!(status["job_count"], 3, "{kind}");
        let objects = b.ok("harvest_object_list", json!({"source_id": src})).await;
        assert_eq!(objects.as_array().unwrap().len(), 21, "{kind}");

        // A clear of more datasets than clear_inline_max answers at once and purges them in
        // the background (the harvest_clear job), then the source's history.
        let cleared = b.ok("harvest_source_clear", json!({"id": src})).await;
        assert_eq!(cleared["id"], json!(src), "{kind}");
        let mut left = usize::MAX;
        for _ in 0..200 {
            left = harvested(&b, &src).await.len();
            let jobs = b.ok("harvest_job_list", json!({"source_id": src})).await;
            if left == 0 && jobs == json!([]) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_eq!(left, 0, "{kind}: the clear job purged every dataset");
        let e = b
            .err(Some(&b.admin), "package_show", json!({"id": "ds-002"}))
            .await;
        assert_eq!(
            e["__type"], "Not Found Error",
            "{kind}: purged, not deleted: {e}"
        );
        let objects = b.ok("harvest_object_list", json!({"source_id": src})).await;
        assert_eq!(objects, json!([]), "{kind}: and its history");
        assert_eq!(
            b.ok("harvest_source_show", json!({"id": src})).await["id"],
            json!(src),
            "{kind}: the source stays"
        );
    }
}
