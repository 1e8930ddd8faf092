//! What the harvest tests share: catalogs to harvest from and into, a scriptable file server
//! on loopback, and waiting for a job's end.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use catalog_host::testkit::{StoreKind, TestServer};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A harvesting catalog: loopback allowed, workers polling fast, a small batch size (so that
/// batches and their fallbacks are exercised), and an organization `harvested`.
pub(crate) async fn harvester(kind: StoreKind, extra: Value) -> TestServer {
    let s = TestServer::start(kind, "admin", |c| {
        c.catalog.jobs.poll_interval_ms = 50;
        c.catalog.jobs.stale_after_secs = 3;
        let mut h = json!({"allow_hosts": ["127.0.0.1"], "batch_size": 7,
                           "schedule_interval_secs": 3600});
        h.as_object_mut()
            .unwrap()
            .extend(extra.as_object().cloned().unwrap_or_default());
        c.catalog.other.insert("harvest".into(), h);
    })
    .await;
    s.ok("organization_create", json!({"name": "harvested"}))
        .await;
    s
}

/// Creates a source on `s` and returns its id.
pub(crate) async fn source(
    s: &TestServer,
    name: &str,
    url: &str,
    kind: &str,
    config: Value,
) -> String {
    let mut p = json!({"name": name, "url": url, "source_type": kind, "owner_org": "harvested"});
    if !config.is_null() {
        p["config"] = json!(config.to_string());
    }
    let made = s.ok("harvest_source_create", p).await;
    made["id"].as_str().unwrap().to_string()
}

/// Runs a job of the source to its end; the finished job dict.
pub(crate) async fn run_job(s: &TestServer, source_id: &str, extra: Value) -> Value {
    let mut p = json!({"source_id": source_id});
    p.as_object_mut()
        .unwrap()
        .extend(extra.as_object().cloned().unwrap_or_default());
    let job = s.ok("harvest_job_create", p).await;
    wait_job(s, job["id"].as_str().unwrap()).await
}

/// Waits for a job to be `Finished`; its dict.
pub(crate) async fn wait_job(s: &TestServer, job_id: &str) -> Value {
    let started = Instant::now();
    loop {
        let job = s.ok("harvest_job_show", json!({"id": job_id})).await;
        if job["status"] == "Finished" {
            return job;
        }
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "job {job_id} did not finish: {job}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The harvested datasets of a source (searchable by `harvest_source_id`).
pub(crate) async fn harvested(s: &TestServer, source_id: &str) -> Vec<Value> {
    let r = s
        .ok(
            "package_search",
            json!({"fq": format!("harvest_source_id:{source_id}"), "rows": 1000, "sort": "name asc"}),
        )
        .await;
    r["results"].as_array().unwrap().clone()
}

/// The value of an extra.
pub(crate) fn extra(d: &Value, key: &str) -> Option<String> {
    d["extras"]
        .as_array()?
        .iter()
        .find(|e| e["key"] == key)
        .and_then(|e| e["value"].as_str())
        .map(str::to_string)
}

/// One scripted answer of the file server.
#[derive(Clone, Default)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) content_type: String,
    pub(crate) body: Vec<u8>,
    pub(crate) headers: Vec<(String, String)>,
    /// Accept the connection and never answer.
    pub(crate) hang: bool,
}

impl Answer {
    pub(crate) fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Answer {
        Answer {
            status: 200,
            content_type: content_type.into(),
            body: body.into(),
            ..Answer::default()
        }
    }
}

/// A file server on loopback answering from a table of paths (404 for others), counting the
/// connections it accepts.
#[derive(Clone)]
pub(crate) struct Files {
    pub(crate) base: String,
    pub(crate) port: u16,
    answers: Arc<Mutex<HashMap<String, Answer>>>,
    pub(crate) hits: Arc<AtomicUsize>,
}

impl Files {
    pub(crate) async fn start() -> Files {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let answers: Arc<Mutex<HashMap<String, Answer>>> = Arc::default();
        let hits = Arc::new(AtomicUsize::new(0));
        let (a, h) = (answers.clone(), hits.clone());
        tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                h.fetch_add(1, Ordering::SeqCst);
                let answers = a.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 16384];
                    let n = sock.read(&mut buf).await.unwrap_or(0);
                    let req = String::from_utf8_lossy(&buf[..n]).to_string();
                    let path = req.split_whitespace().nth(1).unwrap_or("/").to_string();
                    let answer = answers.lock().unwrap().get(&path).cloned();
                    let Some(a) = answer else {
                        let _ = sock
                            .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                            .await;
                        return;
                    };
                    if a.hang {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        return;
                    }
                    let mut head = format!(
                        "HTTP/1.1 {} X\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
                        a.status,
                        a.content_type,
                        a.body.len()
                    );
                    for (k, v) in &a.headers {
                        head.push_str(&format!("{k}: {v}\r\n"));
                    }
                    head.push_str("\r\n");
                    let _ = sock.write_all(head.as_bytes()).await;
                    let _ = sock.write_all(&a.body).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        Files {
            base: format!("http://{addr}"),
            port: addr.port(),
            answers,
            hits,
        }
    }

    /// Answers `path` (with its query) so from now on.
    pub(crate) fn put(&self, path: &str, answer: Answer) {
        self.answers.lock().unwrap().insert(path.into(), answer);
    }

    pub(crate) fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}
