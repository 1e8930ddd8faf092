//! The loader on SQLite and PostgreSQL: files linked or uploaded are loaded by the background
//! job with guessed types; a bad file is reported with its row and line and changes nothing;
//! a reload swaps the whole table at once (readers see the old rows or the new ones); internal
//! addresses are refused; `xloader_submit` / `xloader_status` with XLoader's shapes and auth.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use catalog_host::testkit::{stores, StoreKind, TestServer};
use catalog_host::{WorkerOptions, WorkerPool};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

type Files = Arc<Mutex<HashMap<String, Vec<u8>>>>;

/// A file server on loopback answering `GET /<name>` from `files` (404 for others).
async fn file_server(files: Files) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let files = files.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let n = sock.read(&mut buf).await.unwrap_or(0);
                let req = String::from_utf8_lossy(&buf[..n]).to_string();
                let path = req
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or("/")
                    .trim_start_matches('/')
                    .to_string();
                let body = files.lock().unwrap().get(&path).cloned();
                let head = match &body {
                    Some(b) => format!("HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", b.len()),
                    None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string(),
                };
                let _ = sock.write_all(head.as_bytes()).await;
                if let Some(b) = body {
                    let _ = sock.write_all(&b).await;
                }
                let _ = sock.shutdown().await;
            });
        }
    });
    format!("http://{addr}")
}

struct Setup {
    s: TestServer,
    files: Files,
    base: String,
    _workers: WorkerPool,
}

async fn setup(kind: StoreKind) -> Setup {
    let s = TestServer::start(kind, "admin", |c| {
        c.catalog.fetch.allowed_hosts = vec!["127.0.0.1".into()];
        c.catalog.jobs.poll_interval_ms = 100;
        c.catalog.other.insert(
            "datastore".into(),
            // A replaced table is dropped this long after the swap (30 s by default): long
            // enough for a reader that found it just before, on a loaded test machine too (at
            // 1 s a reader of `readers_see_the_old_rows…` slowed by CI met a dropped table).
            json!({"loader": {"drop_replaced_after_secs": 5}}),
        );
    })
    .await;
    s.user("outsider").await;
    s.ok("organization_create", json!({"name": "stats"})).await;
    let workers = WorkerPool::spawn(
        s.app.clone(),
        WorkerOptions {
            queues: vec!["default".into()],
            workers: 1,
            burst: false,
            max_idle: None,
        },
    );
    let files: Files = Arc::default();
    let base = file_server(files.clone()).await;
    Setup {
        s,
        files,
        base,
        _workers: workers,
    }
}

impl Setup {
    fn put(&self, name: &str, body: impl Into<Vec<u8>>) {
        self.files.lock().unwrap().insert(name.into(), body.into());
    }

    /// Waits for the resource's load to end; its status.
    async fn settled(&self, rid: &str) -> Value {
        let started = Instant::now();
        loop {
            if let Ok(st) = self
                .s
                .call(
                    Some(&self.s.admin),
                    "xloader_status",
                    json!({"resource_id": rid}),
                )
                .await
            {
                if st["status"] == "complete" || st["status"] == "error" {
                    return st;
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the load of {rid} did not end"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn search(&self, rid: &str, extra: Value) -> Value {
        let mut p = json!({"resource_id": rid});
        p.as_object_mut()
            .unwrap()
            .extend(extra.as_object().cloned().unwrap_or_default());
        self.s.ok("datastore_search", p).await
    }
}

const GOOD: &str = "city,population,area,founded,note\n\
Berlin,3850809,891.1,1237-01-01,\"capital, big\"\n\
Hamburg,1910160,755.2,0808-01-01 12:00,port\n\
Munich,1512491,310.4,1158-06-14,\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_linked_file_is_loaded_typed_and_a_bad_one_changes_nothing() {
    for kind in stores().await {
        let t = setup(kind).await;
        t.put("cities.csv", GOOD);
        let d =
            t.s.ok(
                "package_create",
                json!({"name": "cities", "owner_org": "stats",
                       "resources": [{"url": format!("{}/cities.csv", t.base), "format": "CSV"}]}),
            )
            .await;
        let rid = d["resources"][0]["id"].as_str().unwrap().to_string();
        let st = t.settled(&rid).await;
        assert_eq!(st["status"], "complete", "{kind}: {st}");
        assert_eq!(st["error"], json!({}), "{kind}");
        assert_eq!(st["job_url"], Value::Null);
        assert!(
            st["task_info"]["logs"].as_array().unwrap().len() >= 2,
            "{kind}: {st}"
        );
        assert_eq!(st["task_info"]["rows_loaded"], 3, "{kind}: {st}");

        let r = t.search(&rid, json!({"sort": "population desc"})).await;
        let fields: Vec<(String, String)> = r["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["id"].as_str().unwrap().into(),
                    f["type"].as_str().unwrap().into(),
                )
            })
            .collect();
        assert_eq!(
            fields,
            [
                ("_id", "int"),
                ("city", "text"),
                ("population", "numeric"),
                ("area", "numeric"),
                ("founded", "timestamp"),
                ("note", "text")
            ]
            .map(|(a, b)| (a.to_string(), b.to_string())),
            "{kind}"
        );
        assert_eq!(r["total"], 3, "{kind}");
        assert_eq!(r["records"][0]["city"], "Berlin", "{kind}");
        assert_eq!(r["records"][0]["note"], "capital, big", "{kind}");
        assert_eq!(r["records"][1]["founded"], "0808-01-01T12:00:00", "{kind}");
        assert_eq!(
            r["records"][2]["note"],
            Value::Null,
            "{kind}: an empty cell is null"
        );
        let res = t.s.ok("resource_show", json!({"id": rid})).await;
        assert_eq!(res["datastore_active"], true, "{kind}");
        // The load made the table preview view, as DataPusher and XLoader do.
        let views = t.s.ok("resource_view_list", json!({"id": rid})).await;
        assert!(
            views
                .as_array()
                .unwrap()
                .iter()
                .any(|v| v["view_type"] == "datatables_view"),
            "{kind}: {views}"
        );
        // PostgreSQL builds the full-text index once the rows are in, and says so.
        if kind == StoreKind::Postgres {
            let started = Instant::now();
            loop {
                let st =
                    t.s.ok_as(
                        Some(&t.s.admin),
                        "xloader_status",
                        json!({"resource_id": rid}),
                    )
                    .await;
                let built = st["task_info"]["logs"].as_array().unwrap().iter().any(|l| {
                    l["message"]
                        .as_str()
                        .unwrap_or_default()
                        .starts_with("Full-text index built")
                });
                if built {
                    break;
                }
                assert!(
                    started.elapsed() < Duration::from_secs(60),
                    "{kind}: no index: {st}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        // Full text over the loaded rows.
        let q = t.search(&rid, json!({"q": "port"})).await;
        assert_eq!(q["total"], 1, "{kind}: {q}");
        // A loaded table is kept current like any other: written rows are found by q, a
        // changed row no longer by its old words.
        t.s.ok(
            "datastore_upsert",
            json!({"resource_id": rid, "force": true, "method": "insert",
                   "records": [{"city": "Kiel", "note": "harbour town"}]}),
        )
        .await;
        let q = t.search(&rid, json!({"q": "harbour"})).await;
        assert_eq!(q["records"][0]["city"], "Kiel", "{kind}: {q}");
        let port = t.search(&rid, json!({"q": "port"})).await;
        let id = port["records"][0]["_id"].clone();
        t.s.ok(
            "datastore_upsert",
            json!({"resource_id": rid, "force": true, "method": "update",
                   "records": [{"_id": id, "note": "river"}]}),
        )
        .await;
        assert_eq!(
            t.search(&rid, json!({"q": "port"})).await["total"],
            0,
            "{kind}"
        );
        assert_eq!(
            t.search(&rid, json!({"q": "river"})).await["total"],
            1,
            "{kind}"
        );

        // A file with a bad row: reported with its row and line; the old rows stay.
        t.put("bad.csv", "city,population\nA,1\nB,2\nC,3,4\n");
        t.s.ok(
            "resource_patch",
            json!({"id": rid, "url": format!("{}/bad.csv", t.base)}),
        )
        .await;
        let st = t.settled(&rid).await;
        assert_eq!(st["status"], "error", "{kind}: {st}");
        assert_eq!(
            st["error"], "Row 3 (line 4): has 3 fields, but the header has 2",
            "{kind}"
        );
        assert_eq!(
            t.search(&rid, json!({})).await["total"],
            4,
            "{kind}: old rows kept (the three loaded and Kiel)"
        );

        // A missing file: the server's answer is reported; nothing changes.
        t.s.ok(
            "resource_patch",
            json!({"id": rid, "url": format!("{}/gone.csv", t.base)}),
        )
        .await;
        let st = t.settled(&rid).await;
        assert!(
            st["error"].as_str().unwrap().contains("404"),
            "{kind}: {st}"
        );
        assert_eq!(
            t.search(&rid, json!({})).await["total"],
            4,
            "{kind}: unchanged"
        );

        // Back to a good file with other columns: the table is replaced.
        t.put("v2.csv", "name;count\nx;1\ny;2\nz;3\nw;4\n");
        t.s.ok(
            "resource_patch",
            json!({"id": rid, "url": format!("{}/v2.csv", t.base)}),
        )
        .await;
        assert_eq!(t.settled(&rid).await["status"], "complete", "{kind}");
        let r = t.search(&rid, json!({"filters": {"name": "z"}})).await;
        assert_eq!(r["records"][0]["count"], 3, "{kind}: {r}");
        assert_eq!(t.search(&rid, json!({})).await["total"], 4, "{kind}");

        // Submitting again with an unchanged file skips it; ignore_hash loads it again.
        assert_eq!(
            t.s.ok("xloader_submit", json!({"resource_id": rid})).await,
            true
        );
        let st = t.settled(&rid).await;
        let logs = st["task_info"]["logs"].to_string();
        assert!(logs.contains("hash hasn't changed"), "{kind}: {st}");
        assert_eq!(
            t.s.ok("xloader_submit", json!({"id": rid, "ignore_hash": true}))
                .await,
            true
        );
        let st = t.settled(&rid).await;
        assert_eq!(st["task_info"]["rows_loaded"], 4, "{kind}: {st}");

        // Only tables that belong to a resource remain (no leftovers of failed loads; a
        // replaced table goes a moment after the swap).
        let started = Instant::now();
        while tables(&t.s, kind).await != 1 {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{kind}: tables left behind"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }

        // Deleting the resource drops its table and its load record.
        t.s.ok("resource_delete", json!({"id": rid})).await;
        assert_eq!(tables(&t.s, kind).await, 0, "{kind}");
        let e =
            t.s.err(
                Some(&t.s.admin),
                "xloader_status",
                json!({"resource_id": rid}),
            )
            .await;
        assert_eq!(e["__type"], "Not Found Error", "{kind}: {e}");
    }
}

/// The DataStore tables in the store.
async fn tables(s: &TestServer, kind: StoreKind) -> i64 {
    let sql = match kind {
        StoreKind::Postgres => "SELECT count(*) FROM pg_tables WHERE schemaname = 'datastore'",
        _ => "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name LIKE 'ds\\_%' ESCAPE '\\' AND name NOT LIKE '%fts%'",
    };
    let row: (i64,) = sqlx::query_as(sql)
        .fetch_one(&s.app.store.pool)
        .await
        .unwrap();
    row.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn uploads_are_loaded_and_internal_addresses_refused() {
    for kind in stores().await {
        let t = setup(kind).await;
        let token = t.s.token("admin", "t").await;
        t.s.ok(
            "package_create",
            json!({"name": "up", "owner_org": "stats"}),
        )
        .await;
        let mut tsv = String::from("id\tvalue\twhen\n");
        for i in 1..=500 {
            tsv.push_str(&format!("{i}\t{}.5\t2024-01-{:02}\n", i * 2, (i % 28) + 1));
        }
        let form = reqwest::multipart::Form::new()
            .text("package_id", "up")
            .text("format", "TSV")
            .part(
                "upload",
                reqwest::multipart::Part::bytes(tsv.into_bytes()).file_name("rows.tsv"),
            );
        let r: Value = reqwest::Client::new()
            .post(format!("{}/api/3/action/resource_create", t.s.base_url))
            .header("Authorization", &token)
            .multipart(form)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(r["success"], true, "{kind}: {r}");
        let rid = r["result"]["id"].as_str().unwrap().to_string();
        assert_eq!(t.settled(&rid).await["status"], "complete", "{kind}");
        let r = t
            .search(&rid, json!({"filters": {"id": 250}, "include_total": true}))
            .await;
        assert_eq!(r["records"][0]["value"], 500.5, "{kind}: {r}");
        assert_eq!(t.search(&rid, json!({})).await["total"], 500, "{kind}");

        // Addresses inside the network are never fetched (metadata, private, loopback
        // without the operator's allow-list entry).
        let d = t
            .s
            .ok(
                "package_create",
                json!({"name": "internal", "owner_org": "stats",
                       "resources": [{"url": "http://169.254.169.254/latest/meta-data.csv", "format": "csv"},
                                     {"url": "file:///etc/passwd", "format": "csv"}]}),
            )
            .await;
        for res in d["resources"].as_array().unwrap() {
            let st = t.settled(res["id"].as_str().unwrap()).await;
            assert_eq!(st["status"], "error", "{kind}: {st}");
            let msg = st["error"].as_str().unwrap();
            assert!(
                msg.contains("internal") || msg.contains("Only http and https"),
                "{kind}: {msg}"
            );
        }
        assert_eq!(tables(&t.s, kind).await, 1, "{kind}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn status_and_submit_follow_xloader_auth_and_messages() {
    for kind in stores().await {
        let t = setup(kind).await;
        t.put("a.csv", "x\n1\n");
        let d =
            t.s.ok(
                "package_create",
                json!({"name": "aa", "owner_org": "stats",
                       "resources": [{"url": format!("{}/a.csv", t.base), "format": "csv"},
                                     {"url": "http://example.org/doc.pdf", "format": "PDF"}]}),
            )
            .await;
        let rid = d["resources"][0]["id"].as_str().unwrap().to_string();
        let pdf = d["resources"][1]["id"].as_str().unwrap().to_string();
        t.settled(&rid).await;
        let outsider =
            t.s.call(None, "user_show", json!({"id": "outsider"}))
                .await
                .unwrap();
        let outsider = catalog_framework::context::Principal {
            id: outsider["id"].as_str().unwrap().into(),
            name: "outsider".into(),
            sysadmin: false,
            state: "active".into(),
        };
        for action in ["xloader_status", "xloader_submit"] {
            let e =
                t.s.err(Some(&outsider), action, json!({"resource_id": rid}))
                    .await;
            assert_eq!(e["__type"], "Authorization Error", "{kind} {action}: {e}");
            let e = t.s.err(None, action, json!({"resource_id": rid})).await;
            assert_eq!(e["__type"], "Authorization Error", "{kind} {action}: {e}");
            let e =
                t.s.err(Some(&t.s.admin), action, json!({"resource_id": "nope"}))
                    .await;
            assert_eq!(
                e,
                json!({"__type": "Not Found Error", "message": "Not found"}),
                "{kind} {action}"
            );
            let e = t.s.err(Some(&t.s.admin), action, json!({})).await;
            assert_eq!(
                e["resource_id"],
                json!(["Missing value"]),
                "{kind} {action}: {e}"
            );
        }
        // A PDF is not loaded, so it has no status until someone submits it.
        let e =
            t.s.err(
                Some(&t.s.admin),
                "xloader_status",
                json!({"resource_id": pdf}),
            )
            .await;
        assert_eq!(e["__type"], "Not Found Error", "{kind}");
        // The whole status, ids and times aside.
        let st = t.s.ok("xloader_status", json!({"resource_id": rid})).await;
        let mut keys: Vec<&String> = st.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "error",
                "job_id",
                "job_url",
                "last_updated",
                "status",
                "task_info"
            ],
            "{kind}"
        );
        let job = t.s.ok("job_show", json!({"id": st["job_id"]})).await;
        assert_eq!(job["id"], st["job_id"], "{kind}: the job id is the queue's");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn readers_see_the_old_rows_or_the_new_rows_never_half() {
    for kind in stores().await {
        let t = setup(kind).await;
        let make = |n: usize| {
            let mut s = String::from("k,v\n");
            for i in 0..n {
                s.push_str(&format!("{i},row {i}\n"));
            }
            s
        };
        t.put("v1.csv", make(1_000));
        t.put("v2.csv", make(60_000));
        let d =
            t.s.ok(
                "package_create",
                json!({"name": "swap", "owner_org": "stats",
                       "resources": [{"url": format!("{}/v1.csv", t.base), "format": "csv"}]}),
            )
            .await;
        let rid = d["resources"][0]["id"].as_str().unwrap().to_string();
        t.settled(&rid).await;
        t.s.ok(
            "resource_patch",
            json!({"id": rid, "url": format!("{}/v2.csv", t.base)}),
        )
        .await;
        let mut seen = std::collections::BTreeSet::new();
        let started = Instant::now();
        loop {
            let r = t.search(&rid, json!({"limit": 0})).await;
            let total = r["total"].as_i64().unwrap();
            assert!(
                total == 1_000 || total == 60_000,
                "{kind}: a reader saw {total} rows"
            );
            seen.insert(total);
            if total == 60_000 {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "{kind}: the reload did not end"
            );
        }
        assert_eq!(t.settled(&rid).await["status"], "complete", "{kind}");
        assert!(seen.contains(&60_000), "{kind}");
    }
}
