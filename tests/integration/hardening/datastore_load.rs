//! `kill -9` while the DataStore loader fills a table from an uploaded CSV, with writers
//! going on beside it: after a restart the load runs again and completes with every row, the
//! half-filled table is gone, and every write acknowledged during the load is there.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sqlx::Row;

use super::support::{stores, Server, StoreKind};

const ROWS: usize = 400_000;

fn csv() -> Vec<u8> {
    let mut out = String::from("id,name,value,note\n");
    for i in 0..ROWS {
        out.push_str(&format!("{i},name {i},{}.5,word{}\n", i % 1000, i % 97));
    }
    out.into_bytes()
}

async fn status(server: &Server, rid: &str) -> Value {
    let (_, body) = server
        .call("xloader_status", json!({"resource_id": rid}))
        .await;
    body["result"].clone()
}

/// The DataStore tables in the database (the resource's, and any left by a load).
async fn tables(server: &Server) -> Vec<String> {
    sqlx::any::install_default_drivers();
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&server.database_url())
        .await
        .expect("database");
    let sql = match server.kind {
        StoreKind::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'ds\\_%' ESCAPE '\\' AND name NOT LIKE '%fts%'"
        }
        StoreKind::Postgres => {
            "SELECT CAST(tablename AS text) AS name FROM pg_tables WHERE schemaname = 'datastore'"
        }
    };
    sqlx::query(sql)
        .fetch_all(&mut conn)
        .await
        .expect("tables")
        .iter()
        .map(|r| r.get::<String, _>("name"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_during_a_load_leaves_no_half_table_and_loses_no_write() {
    let body = csv();
    for kind in stores().await {
        let mut server = Server::start(
            kind,
            &[
                ("CATALOG__AUTH__CREATE_UNOWNED_DATASET", "true"),
                ("CATALOG__JOBS__STALE_AFTER_SECS", "2"),
                ("CATALOG__DATASTORE__LOADER__DROP_REPLACED_AFTER_SECS", "1"),
            ],
        )
        .await;
        let (status_code, made) = server
            .call("package_create", json!({"name": "big-upload"}))
            .await;
        assert_eq!(status_code, 200, "{kind}: {made}");
        let (_, res) = server
            .upload(
                &[
                    ("package_id", "big-upload"),
                    ("format", "CSV"),
                    ("name", "Big"),
                ],
                "big.csv",
                body.clone(),
            )
            .await;
        let rid = res["result"]["id"].as_str().expect("resource").to_string();

        // Writes beside the load, each acknowledged one remembered.
        let writer = {
            let (base, token, client) = (
                server.base.clone(),
                server.token.clone(),
                server.client.clone(),
            );
            tokio::spawn(async move {
                let mut acked = Vec::new();
                for n in 0.. {
                    let name = format!("beside-{n}");
                    let r = client
                        .post(format!("{base}/api/3/action/package_create"))
                        .header("Authorization", &token)
                        .json(&json!({"name": name}))
                        .send()
                        .await;
                    let Ok(r) = r else { break };
                    if r.status() != 200 || r.bytes().await.is_err() {
                        break;
                    }
                    acked.push(name);
                }
                acked
            })
        };

        // Kill it while the load runs (rows on their way in when the store reports them).
        let started = Instant::now();
        loop {
            let st = status(&server, &rid).await;
            if st["status"] == "running" && st["task_info"]["rows_loaded"].as_u64() > Some(0) {
                break;
            }
            if st["status"] == "running" && started.elapsed() > Duration::from_secs(20) {
                break;
            }
            assert!(
                st["status"] != "complete" && started.elapsed() < Duration::from_secs(120),
                "{kind}: the load ended before it could be interrupted: {st}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        server.kill9();
        let acked = writer.await.unwrap();
        server.restart().await;

        // The job runs again (its heartbeat went stale) and completes with every row.
        let deadline = Instant::now() + Duration::from_secs(300);
        let st = loop {
            let st = status(&server, &rid).await;
            if st["status"] == "complete" || st["status"] == "error" {
                break st;
            }
            assert!(
                Instant::now() < deadline,
                "{kind}: the load never finished: {st}"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        };
        assert_eq!(st["status"], "complete", "{kind}: {st}");
        let (_, found) = server
            .call(
                "datastore_search",
                json!({"resource_id": rid, "limit": 1, "sort": "id desc"}),
            )
            .await;
        assert_eq!(found["result"]["total"], ROWS, "{kind}: {found}");
        assert_eq!(
            found["result"]["records"][0]["name"],
            format!("name {}", ROWS - 1),
            "{kind}"
        );
        // Only the resource's table is left (the killed load's half table is dropped).
        tokio::time::sleep(Duration::from_secs(2)).await;
        let left = tables(&server).await;
        assert_eq!(
            left.len(),
            1,
            "{kind}: DataStore tables after the restart: {left:?}"
        );
        // Every write acknowledged beside the load is there.
        assert!(
            !acked.is_empty(),
            "{kind}: no write went through during the load"
        );
        for name in &acked {
            let (code, _) = server.call("package_show", json!({"id": name})).await;
            assert_eq!(
                code, 200,
                "{kind}: {name} acknowledged during the load is lost"
            );
        }
        println!(
            "{kind}: kill -9 during a {ROWS}-row load: reloaded to {} rows, 1 table left, {} writes beside it kept",
            found["result"]["total"],
            acked.len()
        );
    }
}
