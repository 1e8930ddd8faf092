//! The content-addressed backend in a real server, on SQLite and PostgreSQL: uploads through
//! the Action API (multipart, as a browser or ckanapi sends them), downloads whole and in
//! ranges, one copy for two resources with the same file, and the copy gone once the last
//! resource naming it is purged.

// An integration test is its own binary: name every plugin crate it needs, or the linker
// drops it and its registrations with it.
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_tantivy as _;
use example_file_store_cas as _;

mod book;

use std::path::{Path, PathBuf};
use std::time::Duration;

use catalog_host::testkit::{stores, TestServer};
use serde_json::{json, Value};

/// Every file under `dir` (none when it does not exist).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

struct Client {
    server: TestServer,
    token: String,
    http: reqwest::Client,
}

impl Client {
    async fn upload(&self, dataset: &str, name: &str, bytes: &[u8]) -> Value {
        let form = reqwest::multipart::Form::new()
            .text("package_id", dataset.to_string())
            .text("name", name.to_string())
            .part(
                "upload",
                reqwest::multipart::Part::bytes(bytes.to_vec()).file_name(format!("{name}.bin")),
            );
        let resp = self
            .http
            .post(format!(
                "{}/api/3/action/resource_create",
                self.server.base_url
            ))
            .header("Authorization", &self.token)
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        resp.json::<Value>().await.unwrap()["result"].clone()
    }

    /// The resource's download, with a `Range` header when given: status and body.
    async fn download(&self, resource: &Value, range: Option<&str>) -> (u16, Vec<u8>) {
        let url = resource["url"].as_str().unwrap();
        let mut req = self.http.get(url);
        if let Some(r) = range {
            req = req.header("Range", r);
        }
        let resp = req.send().await.unwrap();
        (resp.status().as_u16(), resp.bytes().await.unwrap().to_vec())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_are_kept_once_per_content_and_served_with_ranges() {
    for kind in stores().await {
        let server = TestServer::start(kind, "admin", |config| {
            config.catalog.storage.backend = "cas".into();
            config.catalog.auth.create_unowned_dataset = true;
        })
        .await;
        let token = server.token("admin", "tests").await;
        let c = Client {
            server,
            token,
            http: reqwest::Client::new(),
        };
        let root = c.server.data_dir().join("cas");
        assert_eq!(
            c.server.app.files.describe,
            format!("cas:{}", root.display()),
            "{kind}"
        );
        c.server
            .ok("package_create", json!({"name": "files"}))
            .await;
        c.server
            .ok("package_create", json!({"name": "other"}))
            .await;

        let same: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let a = c.upload("files", "a", &same).await;
        let b = c.upload("other", "b", &same).await;
        let d = c.upload("files", "d", b"a different file").await;
        assert_eq!(
            files_under(&root.join("blobs")).len(),
            2,
            "{kind}: one copy per content"
        );
        assert_eq!(files_under(&root.join("refs")).len(), 3, "{kind}");

        assert_eq!(c.download(&a, None).await, (200, same.clone()), "{kind}");
        assert_eq!(c.download(&b, None).await, (200, same.clone()), "{kind}");
        assert_eq!(
            c.download(&d, None).await,
            (200, b"a different file".to_vec()),
            "{kind}"
        );
        let (status, part) = c.download(&a, Some("bytes=100-109")).await;
        assert_eq!((status, part), (206, same[100..110].to_vec()), "{kind}");
        let (status, _) = c.download(&a, Some("bytes=999999-")).await;
        assert_eq!(status, 416, "{kind}");

        // Purging `files` removes a's and d's references: d's copy goes, the shared one stays
        // for b.
        c.server.ok("dataset_purge", json!({"id": "files"})).await;
        let mut left = Vec::new();
        for _ in 0..300 {
            left = files_under(&root.join("refs"));
            if left.len() == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            left.len(),
            1,
            "{kind}: the purge job removed the references"
        );
        assert_eq!(files_under(&root.join("blobs")).len(), 1, "{kind}");
        assert_eq!(c.download(&b, None).await, (200, same), "{kind}");
    }
}
