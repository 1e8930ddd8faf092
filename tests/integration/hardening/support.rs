//! The real `catalog` binary, started on a fresh store (SQLite in a temporary directory, or a
//! scratch PostgreSQL database created for the test and dropped after it), and a client. The
//! stores are the testkit's (`stores()`: PostgreSQL left out, with its skip line, when it is
//! not reachable).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_catalog");

use catalog_host::testkit::ScratchDb;
pub(crate) use catalog_host::testkit::{stores, StoreKind};

/// A running `catalog serve` and what it runs on.
pub(crate) struct Server {
    pub kind: StoreKind,
    pub base: String,
    /// A sysadmin's API token.
    pub token: String,
    pub client: reqwest::Client,
    child: Option<Child>,
    data_dir: tempfile::TempDir,
    env: Vec<(String, String)>,
    log: Arc<Mutex<Vec<String>>>,
    /// Another node's PostgreSQL database this one shares ([`Server::another`]).
    shared_db: Option<String>,
    // Dropped last: the database outlives the process using it.
    db: Option<ScratchDb>,
}

impl Server {
    /// Starts a server on a fresh store with extra `CATALOG__…` settings.
    pub(crate) async fn start(kind: StoreKind, env: &[(&str, &str)]) -> Server {
        let db = match kind {
            StoreKind::Sqlite => None,
            StoreKind::Postgres => Some(
                ScratchDb::create("catalog_hard")
                    .await
                    .expect("PostgreSQL reachable"),
            ),
        };
        let mut env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        if kind == StoreKind::Postgres && !env.iter().any(|(k, _)| k == "CATALOG__SEARCH__BACKEND")
        {
            env.push(("CATALOG__SEARCH__BACKEND".into(), "postgres".into()));
        }
        let mut server = Server {
            kind,
            base: String::new(),
            token: String::new(),
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(120))
                // Drop pooled connections well before the server's header-read timeout (10 s
                // after its last response) can close them: reusing one the server is closing
                // at that moment fails the request with "connection closed" (seen on a loaded
                // machine), which is the client's race, not the server's.
                .pool_idle_timeout(Duration::from_secs(4))
                .build()
                .expect("client"),
            child: None,
            data_dir: tempfile::tempdir().expect("data dir"),
            env,
            log: Default::default(),
            shared_db: None,
            db,
        };
        server.cli(&[
            "sysadmin",
            "add",
            "admin",
            "--email",
            "admin@example.org",
            "--password",
            "password-of-admin",
        ]);
        let out = server.cli(&["user", "token", "add", "admin", "hardening"]);
        server.token = out.lines().last().unwrap_or_default().trim().to_string();
        server.spawn().await;
        server
    }

    fn command(&self) -> Command {
        let mut c = Command::new(BIN);
        c.arg("--data-dir").arg(self.data_dir.path());
        if let Some(url) = self.db.as_ref().map(|d| &d.url).or(self.shared_db.as_ref()) {
            c.arg("--database-url").arg(url);
        }
        c.env("RUST_LOG", "info,sqlx=warn");
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    /// A second node on this server's PostgreSQL database, with its own data directory, its
    /// settings and then `env`. It must be dropped before this one (the database's owner).
    pub(crate) async fn another(&self, env: &[(&str, &str)]) -> Server {
        assert_eq!(
            self.kind,
            StoreKind::Postgres,
            "nodes share a PostgreSQL database"
        );
        let mut all = self.env.clone();
        all.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let mut node = Server {
            kind: self.kind,
            base: String::new(),
            token: self.token.clone(),
            client: self.client.clone(),
            child: None,
            data_dir: tempfile::tempdir().expect("data dir"),
            env: all,
            log: Default::default(),
            shared_db: Some(self.database_url()),
            db: None,
        };
        node.spawn().await;
        node
    }

    /// `resource_create` of a file upload as the sysadmin: `fields` (`package_id`, `name` …)
    /// and the file's bytes under `filename`; the answer's status and body.
    pub(crate) async fn upload(
        &self,
        fields: &[(&str, &str)],
        filename: &str,
        bytes: Vec<u8>,
    ) -> (u16, Value) {
        let mut form = reqwest::multipart::Form::new();
        for (k, v) in fields {
            form = form.text(k.to_string(), v.to_string());
        }
        let form = form.part(
            "upload",
            reqwest::multipart::Part::bytes(bytes).file_name(filename.to_string()),
        );
        let resp = self
            .client
            .post(format!("{}/api/3/action/resource_create", self.base))
            .header("Authorization", &self.token)
            .multipart(form)
            .send()
            .await
            .unwrap();
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap())
    }

    /// Runs an admin command on this server's store; returns its standard output.
    pub(crate) fn cli(&self, args: &[&str]) -> String {
        let out = self.command().args(args).output().expect("running catalog");
        assert!(
            out.status.success(),
            "catalog {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs an admin command with the binary's own log settings (no `RUST_LOG`); returns its
    /// exit status and output (standard output and error).
    pub(crate) fn cli_status_without_log_env(&self, args: &[&str]) -> (bool, String) {
        let out = self
            .command()
            .env_remove("RUST_LOG")
            .args(args)
            .output()
            .expect("running catalog");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }

    /// Runs an admin command and returns its exit status and output, without asserting.
    pub(crate) fn cli_status(&self, args: &[&str]) -> (bool, String) {
        let out = self.command().args(args).output().expect("running catalog");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }

    async fn spawn(&mut self) {
        let mut child = self
            .command()
            .args(["serve", "--bind", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting catalog serve");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        let log = self.log.clone();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let addr = line
                    .split("addr=")
                    .nth(1)
                    .filter(|_| line.contains("listening"))
                    .map(|a| a.split_whitespace().next().unwrap_or("").to_string());
                // Logged before the address is sent: the log has the "listening" line once
                // `start` returns.
                {
                    let mut log = log.lock().unwrap();
                    if log.len() < 10_000 {
                        log.push(line);
                    }
                }
                if let Some(addr) = addr {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(addr);
                    }
                }
            }
        });
        let addr = tokio::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(120)))
            .await
            .unwrap()
            .unwrap_or_else(|_| panic!("the server did not start: {}", self.log_text()));
        self.child = Some(child);
        self.base = format!("http://{addr}");
    }

    /// What the server logged so far.
    pub(crate) fn log_text(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// The error lines the server logged (for failure messages).
    pub(crate) fn errors(&self) -> String {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains("ERROR") || l.contains("panicked"))
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// How many logged lines contain `needle`.
    pub(crate) fn log_count(&self, needle: &str) -> usize {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(needle))
            .count()
    }

    /// The node's data directory (`--data-dir`; a local file store's files are under it).
    pub(crate) fn data_path(&self) -> &std::path::Path {
        self.data_dir.path()
    }

    /// The store's URL, for a test that looks at the database itself.
    pub(crate) fn database_url(&self) -> String {
        match &self.db {
            Some(db) => db.url.clone(),
            None => format!(
                "sqlite://{}",
                self.data_dir.path().join("catalog.db").display()
            ),
        }
    }

    /// `kill -9`: no shutdown, no flush.
    pub(crate) fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts the server again on the same store and data directory.
    pub(crate) async fn restart(&mut self) {
        self.kill9();
        self.spawn().await;
    }

    /// Starts the server again while the old process keeps running (a restart whose old
    /// process has not exited yet): the old one is killed once the new one has logged
    /// `until_logged` (at most a minute later). The log starts anew, so that it holds only the
    /// new process's lines.
    pub(crate) async fn restart_overlapping(&mut self, until_logged: &'static str) {
        let old = self.child.take();
        let log = self.log.clone();
        log.lock().unwrap().clear();
        let reaper = std::thread::spawn(move || {
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            while std::time::Instant::now() < deadline
                && !log.lock().unwrap().iter().any(|l| l.contains(until_logged))
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            if let Some(mut c) = old {
                let _ = c.kill();
                let _ = c.wait();
            }
        });
        self.spawn().await;
        tokio::task::spawn_blocking(move || reaper.join().expect("the old process was stopped"))
            .await
            .unwrap();
    }

    /// A `/proc/<pid>/status` figure of the server process, in KiB.
    fn proc_status_kib(&self, key: &str) -> u64 {
        let pid = self.child.as_ref().map(|c| c.id()).unwrap_or(0);
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }

    /// The server's anonymous resident memory (heap and stacks, not the mapped index and
    /// database files the kernel can drop), in KiB.
    pub(crate) fn anon_rss_kib(&self) -> u64 {
        self.proc_status_kib("RssAnon:")
    }

    /// The server's peak resident memory, in KiB.
    pub(crate) fn peak_rss_kib(&self) -> u64 {
        self.proc_status_kib("VmHWM:")
    }

    /// The server's resident memory now, in KiB.
    pub(crate) fn rss_kib(&self) -> u64 {
        self.proc_status_kib("VmRSS:")
    }

    /// Starts the peak ([`Server::peak_rss_kib`]) again from the memory resident now.
    /// Waits until the server's search index has every write it acknowledged (a search does:
    /// ADR 0012), so that a measurement that follows does not include that background work.
    pub(crate) async fn settle(&self) {
        self.ok("package_search", json!({"rows": 0})).await;
    }

    pub(crate) fn reset_peak_rss(&self) {
        let pid = self.child.as_ref().map(|c| c.id()).unwrap_or(0);
        std::fs::write(format!("/proc/{pid}/clear_refs"), "5").expect("resetting the peak RSS");
    }

    /// The CPU time the server has used so far, all threads, user and system.
    pub(crate) fn cpu_time(&self) -> Duration {
        let pid = self.child.as_ref().map(|c| c.id()).unwrap_or(0);
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The fields after the command name (which may hold spaces) are space-separated:
        // utime and stime are the 14th and 15th of the whole line, in clock ticks (USER_HZ,
        // 100 on Linux).
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let fields: Vec<u64> = rest
            .split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect();
        let ticks = fields.get(11).copied().unwrap_or(0) + fields.get(12).copied().unwrap_or(0);
        Duration::from_millis(ticks * 10)
    }

    /// True while the process runs.
    pub(crate) fn alive(&mut self) -> bool {
        matches!(self.child.as_mut().map(|c| c.try_wait()), Some(Ok(None)))
    }

    pub(crate) fn addr(&self) -> String {
        self.base.trim_start_matches("http://").to_string()
    }

    /// POSTs an action as the sysadmin.
    pub(crate) async fn call(&self, action: &str, params: Value) -> (u16, Value) {
        self.call_as(Some(&self.token), action, params).await
    }

    /// POSTs an action with a token (`None`: anonymous).
    pub(crate) async fn call_as(
        &self,
        token: Option<&str>,
        action: &str,
        params: Value,
    ) -> (u16, Value) {
        let mut req = self
            .client
            .post(format!("{}/api/3/action/{action}", self.base))
            .json(&params);
        if let Some(t) = token {
            req = req.header("Authorization", t);
        }
        let resp = req.send().await.unwrap_or_else(|e| {
            let log = self.log_text();
            let tail: Vec<&str> = log.lines().rev().take(30).collect();
            panic!(
                "{action}: {e}\nthe server's last log lines (newest first):\n{}",
                tail.join("\n")
            )
        });
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap_or_default();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, body)
    }

    /// Calls an action that must succeed; returns its result.
    pub(crate) async fn ok(&self, action: &str, params: Value) -> Value {
        let (status, body) = self.call(action, params).await;
        assert_eq!(status, 200, "{action} failed: {body}");
        body["result"].clone()
    }

    /// Creates a user and returns `(id, token)`.
    pub(crate) async fn user(&self, name: &str) -> (String, String) {
        let u = self
            .ok(
                "user_create",
                json!({"name": name, "email": format!("{name}@example.org"), "password": "password-12345"}),
            )
            .await;
        let t = self
            .ok("api_token_create", json!({"user": name, "name": "t"}))
            .await;
        (
            u["id"].as_str().unwrap().to_string(),
            t["token"].as_str().unwrap().to_string(),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// Serves fixed files on loopback (`path` → content type and body), answering 404 to any other
/// path, one request per connection; the base URL (`http://127.0.0.1:<port>`).
pub(crate) async fn serve_files(files: Vec<(&'static str, &'static str, Vec<u8>)>) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let files = Arc::new(files);
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let files = files.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
                    if conn.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head);
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let (status, ct, body): (&str, &str, &[u8]) =
                    match files.iter().find(|(p, _, _)| *p == path) {
                        Some((_, ct, body)) => ("200 OK", ct, body),
                        None => ("404 Not Found", "text/plain", b"not found"),
                    };
                let head = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: {ct}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = conn.write_all(head.as_bytes()).await;
                let _ = conn.write_all(body).await;
                let _ = conn.shutdown().await;
            });
        }
    });
    base
}
