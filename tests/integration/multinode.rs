//! Several API nodes on one PostgreSQL database, each with its own embedded search index
//! (the default): every node follows the store's change feed (ADR 0006).
//!
//! - A write on node A is found by node B in the client's next request when the client sends
//!   back the sequence number A answered with (header or cookie), and by everyone within a
//!   short time without it.
//! - B's package_show cache sees A's updates the same way.
//! - B killed (SIGKILL) and restarted catches up from its saved feed position, without a
//!   rebuild; a new node C joins by building its index from the store while it serves.
//! - A node that was down while retention removed changes it had not applied rebuilds its
//!   index when it comes back.
//!
//! Without a reachable PostgreSQL each test prints the testkit's
//! `skipped on PostgreSQL: not reachable at …` and passes.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use catalog_host::testkit::ScratchDb;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_catalog");

struct Node {
    child: Option<Child>,
    base: String,
    log: std::path::PathBuf,
}

impl Node {
    fn start(data_dir: &std::path::Path, db: &str, port: u16) -> Node {
        Node::start_with(data_dir, db, port, &[])
    }

    fn start_with(data_dir: &std::path::Path, db: &str, port: u16, env: &[(&str, &str)]) -> Node {
        let log = data_dir.join("server.log");
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .expect("log file");
        let child = Command::new(BIN)
            .arg("--data-dir")
            .arg(data_dir)
            .arg("--database-url")
            .arg(db)
            .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
            .env("RUST_LOG", "info,sqlx=warn")
            // The tests make datasets without an organization (CKAN's test settings).
            .env("CATALOG__AUTH__CREATE_UNOWNED_DATASET", "true")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(out)
            .spawn()
            .expect("starting catalog serve");
        Node {
            child: Some(child),
            base: format!("http://127.0.0.1:{port}"),
            log,
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    async fn wait_ready(&self, client: &reqwest::Client) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if let Ok(r) = client
                .get(format!("{}/api/3/action/status_show", self.base))
                .send()
                .await
            {
                if r.status().is_success() {
                    return;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("node {} did not start: {}", self.base, self.log_text());
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill(); // SIGKILL: no shutdown work at all
            let _ = c.wait();
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn cli(data_dir: &std::path::Path, db: &str, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("--data-dir")
        .arg(data_dir)
        .arg("--database-url")
        .arg(db)
        .args(args)
        .output()
        .expect("running catalog");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// POSTs an action; returns the status, the body and the sequence number header.
async fn call(
    client: &reqwest::Client,
    node: &Node,
    token: &str,
    action: &str,
    params: Value,
    seq: Option<&str>,
) -> (u16, Value, Option<String>) {
    let mut req = client
        .post(format!("{}/api/3/action/{action}", node.base))
        .header("Authorization", token)
        .json(&params);
    if let Some(s) = seq {
        req = req.header("X-Catalog-Seq", s);
    }
    let resp = req.send().await.expect("request");
    let status = resp.status().as_u16();
    let seq = resp
        .headers()
        .get("x-catalog-seq")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    (status, resp.json().await.unwrap_or(Value::Null), seq)
}

async fn found(
    client: &reqwest::Client,
    node: &Node,
    token: &str,
    name: &str,
    seq: Option<&str>,
) -> bool {
    let (status, body, _) = call(
        client,
        node,
        token,
        "package_search",
        json!({"q": format!("name:{name}"), "rows": 1}),
        seq,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["result"]["count"] == 1
}

/// One PostgreSQL database for the nodes, their data directories, a sysadmin token and a client.
struct Cluster {
    db: ScratchDb,
    dirs: Vec<tempfile::TempDir>,
    token: String,
    client: reqwest::Client,
}

impl Cluster {
    /// `None` (after the testkit's skip line) when PostgreSQL is not reachable.
    async fn new(prefix: &str, nodes: usize) -> Option<Cluster> {
        let db = ScratchDb::create_or_skip(prefix).await?;
        let dirs: Vec<tempfile::TempDir> =
            (0..nodes).map(|_| tempfile::tempdir().unwrap()).collect();
        cli(
            dirs[0].path(),
            &db.url,
            &[
                "sysadmin",
                "add",
                "admin",
                "--email",
                "a@example.org",
                "--password",
                "password-of-admin",
            ],
        );
        let token = cli(
            dirs[0].path(),
            &db.url,
            &["user", "token", "add", "admin", "multinode"],
        )
        .lines()
        .last()
        .unwrap_or_default()
        .trim()
        .to_string();
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        Some(Cluster {
            db,
            dirs,
            token,
            client,
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn nodes_on_one_postgresql_see_each_others_writes() {
    let Some(Cluster {
        db,
        dirs,
        token,
        client,
    }) = Cluster::new("catalog_multinode", 3).await
    else {
        return;
    };
    let a = Node::start(dirs[0].path(), &db.url, free_port());
    let port_b = free_port();
    let mut b = Node::start(dirs[1].path(), &db.url, port_b);
    a.wait_ready(&client).await;
    b.wait_ready(&client).await;

    // Read-your-writes across nodes: the write's sequence number, sent to the other node.
    for i in 0..20 {
        let name = format!("ryw-{i}");
        let (status, body, seq) = call(
            &client,
            &a,
            &token,
            "package_create",
            json!({"name": name}),
            None,
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let seq = seq.expect("a write answers with X-Catalog-Seq");
        assert!(
            found(&client, &b, &token, &name, Some(&seq)).await,
            "node B did not find {name} in the next request with the sequence number {seq}"
        );
    }
    // The cookie carries it as well.
    let (_, _, seq) = call(
        &client,
        &a,
        &token,
        "package_create",
        json!({"name": "ryw-cookie"}),
        None,
    )
    .await;
    let resp = client
        .post(format!("{}/api/3/action/package_search", b.base))
        .header("Cookie", format!("other=1; catalog_seq={}", seq.unwrap()))
        .json(&json!({"q": "name:ryw-cookie"}))
        .send()
        .await
        .unwrap();
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        body["result"]["count"], 1,
        "cookie read-your-writes: {body}"
    );

    // Everyone else: without the number, within a short time (the latency is printed).
    let mut worst = Duration::ZERO;
    for i in 0..10 {
        let name = format!("others-{i}");
        let (status, _, _) = call(
            &client,
            &a,
            &token,
            "package_create",
            json!({"name": name}),
            None,
        )
        .await;
        assert_eq!(status, 200);
        let t = Instant::now();
        while !found(&client, &b, &token, &name, None).await {
            assert!(t.elapsed() < Duration::from_secs(10), "B never saw {name}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        worst = worst.max(t.elapsed());
    }
    println!(
        "a write on A became visible on B without read-your-writes within {worst:?} (worst of 10)"
    );

    // B's package_show cache follows A's updates.
    let (_, shown, _) = call(
        &client,
        &b,
        &token,
        "package_show",
        json!({"id": "ryw-0"}),
        None,
    )
    .await;
    assert_eq!(shown["result"]["title"], "ryw-0", "{shown}");
    let (_, _, seq) = call(
        &client,
        &a,
        &token,
        "package_patch",
        json!({"id": "ryw-0", "title": "Changed on A"}),
        None,
    )
    .await;
    let (_, shown, _) = call(
        &client,
        &b,
        &token,
        "package_show",
        json!({"id": "ryw-0"}),
        seq.as_deref(),
    )
    .await;
    assert_eq!(
        shown["result"]["title"], "Changed on A",
        "B's cached package_show is stale"
    );

    // B killed and restarted: it catches up from its position, without a rebuild.
    b.kill();
    for i in 0..5 {
        call(
            &client,
            &a,
            &token,
            "package_create",
            json!({"name": format!("while-down-{i}")}),
            None,
        )
        .await;
    }
    let b2 = Node::start(dirs[1].path(), &db.url, port_b);
    b2.wait_ready(&client).await;
    for i in 0..5 {
        assert!(
            found(&client, &b2, &token, &format!("while-down-{i}"), None).await,
            "the restarted node missed while-down-{i}"
        );
    }
    assert!(
        !b2.log_text().contains("rebuilding it"),
        "the restarted node rebuilt its index instead of catching up: {}",
        b2.log_text()
    );

    // A new node joins: it serves at once and builds its index from the store meanwhile;
    // until it is built, searches are refused (never answered from part of the catalog) and
    // its readiness check says so.
    let c = Node::start(dirs[2].path(), &db.url, free_port());
    c.wait_ready(&client).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let all = loop {
        let (status, body, _) = call(
            &client,
            &c,
            &token,
            "package_search",
            json!({"rows": 0}),
            None,
        )
        .await;
        let ready = client
            .get(format!("{}/health/ready", c.base))
            .send()
            .await
            .unwrap()
            .status();
        if status == 200 {
            assert_eq!(ready, 200);
            break body;
        }
        assert_eq!(status, 409, "{body}");
        assert_eq!(body["error"]["__type"], "Search Error", "{body}");
        assert!(
            Instant::now() < deadline,
            "the new node never finished its index"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(
        c.log_text()
            .contains("search index is empty: building it from the store while serving"),
        "{}",
        c.log_text()
    );
    let (_, all_a, _) = call(
        &client,
        &a,
        &token,
        "package_search",
        json!({"rows": 0}),
        None,
    )
    .await;
    assert_eq!(
        all["result"]["count"], all_a["result"]["count"],
        "the new node's index"
    );
    assert_eq!(all["result"]["count"], 36);
}

/// The feed keeps only the newest rows (`catalog.search.feed_retention`); a node that missed
/// removed rows rebuilds from the store when it comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_behind_the_feeds_retention_rebuilds() {
    let Some(Cluster {
        db,
        dirs,
        token,
        client,
    }) = Cluster::new("catalog_multinode_gc", 2).await
    else {
        return;
    };
    let env = [
        ("CATALOG__SEARCH__FEED_RETENTION", "1000"),
        ("CATALOG__SEARCH__FEED_GC_INTERVAL_SECS", "1"),
    ];
    let a = Node::start_with(dirs[0].path(), &db.url, free_port(), &env);
    let port_b = free_port();
    let mut b = Node::start_with(dirs[1].path(), &db.url, port_b, &env);
    a.wait_ready(&client).await;
    b.wait_ready(&client).await;
    // B has an index with something in it, then goes down.
    let (_, _, seq) = call(
        &client,
        &a,
        &token,
        "package_create",
        json!({"name": "before-gc"}),
        None,
    )
    .await;
    assert!(found(&client, &b, &token, "before-gc", seq.as_deref()).await);
    b.kill();

    // Over 1,000 feed rows while B is down: 30 datasets made private and public 20 times.
    let (_, org, _) = call(
        &client,
        &a,
        &token,
        "organization_create",
        json!({"name": "gc-org"}),
        None,
    )
    .await;
    let org = org["result"]["id"].as_str().unwrap().to_string();
    let mut ids = Vec::new();
    for i in 0..30 {
        let (_, d, _) = call(
            &client,
            &a,
            &token,
            "package_create",
            json!({"name": format!("gc-{i}"), "owner_org": org}),
            None,
        )
        .await;
        ids.push(d["result"]["id"].clone());
    }
    for round in 0..20 {
        let action = if round % 2 == 0 {
            "bulk_update_private"
        } else {
            "bulk_update_public"
        };
        let (status, body, _) = call(
            &client,
            &a,
            &token,
            action,
            json!({"datasets": ids, "org_id": org}),
            None,
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }
    call(
        &client,
        &a,
        &token,
        "package_create",
        json!({"name": "after-gc", "owner_org": org}),
        None,
    )
    .await;
    // Node A removes the old rows (its retention runs every second here).
    let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
    let t = Instant::now();
    loop {
        let gc: Option<i64> =
            sqlx::query_scalar("SELECT value FROM search_feed_meta WHERE name = 'gc_through'")
                .fetch_optional(&pool)
                .await
                .unwrap();
        if gc.is_some_and(|g| g > 0) {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "retention never ran on node A"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    pool.close().await;

    let b2 = Node::start_with(dirs[1].path(), &db.url, port_b, &env);
    b2.wait_ready(&client).await;
    assert!(
        b2.log_text()
            .contains("missed changes removed by the feed's retention"),
        "node B did not notice it fell behind: {}",
        b2.log_text()
    );
    assert!(found(&client, &b2, &token, "after-gc", None).await);
    let (_, on_b, _) = call(
        &client,
        &b2,
        &token,
        "package_search",
        json!({"rows": 0, "include_private": true}),
        None,
    )
    .await;
    let (_, on_a, _) = call(
        &client,
        &a,
        &token,
        "package_search",
        json!({"rows": 0, "include_private": true}),
        None,
    )
    .await;
    assert_eq!(on_b["result"]["count"], on_a["result"]["count"]);
    assert_eq!(on_b["result"]["count"], 32);
}
