//! Helpers for tests of the catalog and its plugins: an app on a fresh store to call actions
//! on ([`TestApp`]), on SQLite and on PostgreSQL ([`stores`]); a scratch PostgreSQL database
//! per test ([`ScratchDb`]); and the check that a book chapter's code is a copy of an
//! example's ([`assert_book_blocks_are_copies`]).
//!
//! PostgreSQL is the server every machine of the project runs
//! ([`POSTGRES_ADMIN_URL`]; trust auth, user `postgres`); the environment variable
//! `CATALOG_TEST_POSTGRES_URL` names another one (an admin connection URL ending in a database
//! name, e.g. `postgres://postgres@localhost:5433/postgres`). When it is not reachable, every
//! suite does the same: [`stores`] and [`postgres`] print one line
//! `skipped on PostgreSQL: not reachable at <url>` and leave PostgreSQL out, and the test
//! passes on what is left (nothing, for a PostgreSQL-only test).
//!
//! ```ignore
//! use catalog_host::testkit::{stores, TestApp};
//! use catalog_plugin_core as _; // name every plugin crate the test links
//!
//! #[tokio::test]
//! async fn datasets_are_shown() {
//!     for kind in stores().await {
//!         let t = TestApp::start(kind).await;
//!         let alice = t.user("alice").await;
//!         t.ok("package_create", json!({"name": "roads"})).await;
//!         let shown = t.ok_as(Some(&alice), "package_show", json!({"id": "roads"})).await;
//!         let e = t.err(None, "package_show", json!({"id": "nothing"})).await;
//!     }
//! }
//! ```

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use catalog_framework::prelude::{ActionContext, AppState, CkanError, Config, Principal};
use catalog_framework::search::SearchBackendRegistration;
use serde_json::{json, Value};
use sqlx::{Connection, Executor, PgConnection};

use crate::Registry;

/// The PostgreSQL server every machine of the project runs (trust auth, user `postgres`).
pub const POSTGRES_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// The admin URL the tests use: `CATALOG_TEST_POSTGRES_URL` when set, else
/// [`POSTGRES_ADMIN_URL`].
pub fn postgres_admin_url() -> String {
    std::env::var("CATALOG_TEST_POSTGRES_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| POSTGRES_ADMIN_URL.to_string())
}

/// An admin connection, `None` when PostgreSQL does not answer within 5 s.
async fn admin_connection(admin_url: &str) -> Option<PgConnection> {
    let connect = PgConnection::connect(admin_url);
    match tokio::time::timeout(Duration::from_secs(5), connect).await {
        Ok(Ok(c)) => Some(c),
        _ => None,
    }
}

/// Says that a test leaves PostgreSQL out (the one line every suite prints).
fn print_skipped() {
    println!(
        "skipped on PostgreSQL: not reachable at {}",
        postgres_admin_url()
    );
}

/// A database created for one test and dropped (with force) when this is dropped.
pub struct ScratchDb {
    name: String,
    admin_url: String,
    /// Where the test's store connects.
    pub url: String,
}

impl ScratchDb {
    /// Creates `<prefix>_<random>`; `None` when PostgreSQL is not reachable in 5 s.
    pub async fn create(prefix: &str) -> Option<ScratchDb> {
        let admin_url = postgres_admin_url();
        let mut conn = admin_connection(&admin_url).await?;
        let name = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
        conn.execute(format!("CREATE DATABASE {name}").as_str())
            .await
            .ok()?;
        let _ = conn.close().await;
        // The admin URL with the new database's name in place of its own.
        let (server, query) = match admin_url.split_once('?') {
            Some((s, q)) => (s, format!("?{q}")),
            None => (admin_url.as_str(), String::new()),
        };
        let base = server.rsplit_once('/').map_or(server, |(b, _)| b);
        let url = format!("{base}/{name}{query}");
        Some(ScratchDb {
            name,
            admin_url,
            url,
        })
    }

    /// [`ScratchDb::create`] for a test that needs PostgreSQL: `None` (after the skip line)
    /// when PostgreSQL is not reachable; a panic when it is but the database cannot be made.
    pub async fn create_or_skip(prefix: &str) -> Option<ScratchDb> {
        postgres().await?;
        Some(
            ScratchDb::create(prefix).await.unwrap_or_else(|| {
                panic!("creating a scratch database on {}", postgres_admin_url())
            }),
        )
    }
}

impl Drop for ScratchDb {
    fn drop(&mut self) {
        let (name, admin) = (self.name.clone(), self.admin_url.clone());
        // Drop may run inside a runtime: a thread of its own with a runtime of its own.
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                if let Ok(mut c) = PgConnection::connect(&admin).await {
                    let _ = c
                        .execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str())
                        .await;
                }
            });
        })
        .join();
    }
}

/// Which store a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    /// A SQLite file in the test's data directory.
    Sqlite,
    /// A [`ScratchDb`].
    Postgres,
}

impl std::fmt::Display for StoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StoreKind::Sqlite => "sqlite",
            StoreKind::Postgres => "postgres",
        })
    }
}

/// The stores a test runs on: SQLite always, PostgreSQL when it is reachable (otherwise the
/// skip line is printed).
pub async fn stores() -> Vec<StoreKind> {
    let mut out = vec![StoreKind::Sqlite];
    out.extend(postgres().await);
    out
}

/// PostgreSQL when it is reachable; otherwise prints the skip line and gives `None`. What a
/// PostgreSQL-only test starts with: `let Some(kind) = postgres().await else { return };`.
pub async fn postgres() -> Option<StoreKind> {
    match admin_connection(&postgres_admin_url()).await {
        Some(c) => {
            let _ = c.close().await;
            Some(StoreKind::Postgres)
        }
        None => {
            print_skipped();
            None
        }
    }
}

/// The password of every user a [`TestApp`] creates.
pub const PASSWORD: &str = "pass1234";

/// A catalog app on a fresh store, with no HTTP server, and a sysadmin: actions run through
/// `ActionContext::run_top`, as the HTTP handler runs them. The data directory and the
/// scratch database live as long as this.
pub struct TestApp {
    pub app: AppState,
    /// The sysadmin created at start (`admin`, unless [`TestApp::start_as`] names another).
    pub admin: Principal,
    pub kind: StoreKind,
    /// Where the store is (another app may connect to it: [`TestApp::another`]).
    pub database_url: String,
    data_dir: PathBuf,
    others: AtomicUsize,
    // Dropped after the app: the directory and the database outlive it. `None` in an app
    // from [`TestApp::another`], which lives in the first one's.
    _dir: Option<tempfile::TempDir>,
    _db: Option<ScratchDb>,
}

impl TestApp {
    /// An app with the default configuration.
    pub async fn start(kind: StoreKind) -> TestApp {
        TestApp::start_with(kind, |_| {}).await
    }

    /// An app whose configuration `configure` changes. On PostgreSQL the search backend is
    /// `postgres` (the shared index) when the test links the search-postgres plugin, before
    /// `configure` runs.
    pub async fn start_with(kind: StoreKind, configure: impl FnOnce(&mut Config)) -> TestApp {
        TestApp::start_as(kind, "admin", configure).await
    }

    /// [`TestApp::start_with`], its sysadmin named `admin`.
    pub async fn start_as(
        kind: StoreKind,
        admin: &str,
        configure: impl FnOnce(&mut Config),
    ) -> TestApp {
        let data_dir = tempfile::tempdir().expect("a temporary directory");
        let (database_url, db) = match kind {
            StoreKind::Sqlite => (crate::Store::sqlite_url_in(data_dir.path()), None),
            StoreKind::Postgres => {
                let db = ScratchDb::create("catalog_test").await.unwrap_or_else(|| {
                    panic!(
                        "PostgreSQL at {}: not reachable (run on testkit::stores())",
                        postgres_admin_url()
                    )
                });
                (db.url.clone(), Some(db))
            }
        };
        let mut config = Config::default();
        if kind == StoreKind::Postgres && links_postgres_search() {
            config.catalog.search.backend = "postgres".into();
        }
        configure(&mut config);
        let app = crate::build_app(config, &database_url, data_dir.path().into())
            .await
            .unwrap_or_else(|e| panic!("starting the app on {kind}: {e:#}"));
        let admin = new_user(&app, admin, true).await;
        TestApp {
            app,
            admin,
            kind,
            database_url,
            data_dir: data_dir.path().to_path_buf(),
            others: AtomicUsize::new(0),
            _dir: Some(data_dir),
            _db: db,
        }
    }

    /// Another app on the same store with the same sysadmin, this one's configuration
    /// changed by `configure`, and a data directory (search index) of its own inside this
    /// one's: what another node would be. This one must outlive it.
    pub async fn another(&self, configure: impl FnOnce(&mut Config)) -> TestApp {
        let mut config = self.app.config.clone();
        configure(&mut config);
        let n = self.others.fetch_add(1, Ordering::SeqCst);
        let data_dir = self.data_dir.join(format!("another-{n}"));
        let app = crate::build_app(config, &self.database_url, data_dir.clone())
            .await
            .unwrap_or_else(|e| panic!("starting another app on {}: {e:#}", self.kind));
        TestApp {
            app,
            admin: self.admin.clone(),
            kind: self.kind,
            database_url: self.database_url.clone(),
            data_dir,
            others: AtomicUsize::new(0),
            _dir: None,
            _db: None,
        }
    }

    /// The app's data directory (the SQLite file and the search index are in it).
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// A new user who is no sysadmin (`<name>@example.org`, [`PASSWORD`]), as a caller.
    pub async fn user(&self, name: &str) -> Principal {
        new_user(&self.app, name, false).await
    }

    /// Another sysadmin, as a caller.
    pub async fn sysadmin(&self, name: &str) -> Principal {
        new_user(&self.app, name, true).await
    }

    /// An API token of `user` named `name` (for tests over HTTP).
    pub async fn token(&self, user: &str, name: &str) -> String {
        let r = self
            .ignoring_auth("api_token_create", json!({"user": user, "name": name}))
            .await
            .unwrap_or_else(|e| panic!("api_token_create: {}", e.to_error_object()));
        r["token"].as_str().expect("a token").to_string()
    }

    /// Runs an action as `who` (`None`: anonymous) in its own transaction.
    pub async fn call(
        &self,
        who: Option<&Principal>,
        action: &str,
        params: Value,
    ) -> Result<Value, CkanError> {
        ActionContext::new(self.app.clone(), who.cloned())
            .run_top(action, params.as_object().cloned().unwrap_or_default())
            .await
    }

    /// Runs an action with CKAN's `ignore_auth` (what the CLI does).
    pub async fn ignoring_auth(&self, action: &str, params: Value) -> Result<Value, CkanError> {
        run_ignoring_auth(&self.app, action, params).await
    }

    /// An action's result as the sysadmin; panics with the error.
    pub async fn ok(&self, action: &str, params: Value) -> Value {
        self.ok_as(Some(&self.admin), action, params).await
    }

    /// An action's result as `who`; panics with the error.
    pub async fn ok_as(&self, who: Option<&Principal>, action: &str, params: Value) -> Value {
        self.call(who, action, params)
            .await
            .unwrap_or_else(|e| panic!("{action}: {}", e.to_error_object()))
    }

    /// The error object (CKAN's `error`) of an action that must fail as `who`.
    pub async fn err(&self, who: Option<&Principal>, action: &str, params: Value) -> Value {
        self.fail(who, action, params).await.to_error_object()
    }

    /// The error of an action that must fail as `who` (its kind, status and body).
    pub async fn fail(&self, who: Option<&Principal>, action: &str, params: Value) -> CkanError {
        match self.call(who, action, params).await {
            Ok(v) => panic!("{action} succeeded: {v}"),
            Err(e) => e,
        }
    }
}

/// A [`TestApp`] served over HTTP on an ephemeral port (its `catalog.site_url`), for tests
/// that call the Action API as a client does; it derefs to the app. Dropping it stops the
/// server.
pub struct TestServer {
    app: TestApp,
    /// `http://127.0.0.1:<port>`.
    pub base_url: String,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl TestServer {
    /// [`TestApp::start_as`], served.
    pub async fn start(
        kind: StoreKind,
        admin: &str,
        configure: impl FnOnce(&mut Config),
    ) -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("an ephemeral port");
        let base_url = format!("http://{}", listener.local_addr().expect("its address"));
        let app = TestApp::start_as(kind, admin, |config| {
            config.catalog.site_url = base_url.clone();
            configure(config);
        })
        .await;
        let task = tokio::spawn(crate::serve(app.app.clone(), listener));
        TestServer {
            app,
            base_url,
            task,
        }
    }
}

impl std::ops::Deref for TestServer {
    type Target = TestApp;

    fn deref(&self) -> &TestApp {
        &self.app
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Whether the test links the search-postgres plugin (its backend is registered).
fn links_postgres_search() -> bool {
    Registry::build().is_ok_and(|r| {
        r.extensions::<SearchBackendRegistration>()
            .contains_key("postgres")
    })
}

async fn run_ignoring_auth(
    app: &AppState,
    action: &str,
    params: Value,
) -> Result<Value, CkanError> {
    let mut ctx = ActionContext::new(app.clone(), None);
    ctx.ignore_auth = true;
    ctx.run_top(action, params.as_object().cloned().unwrap_or_default())
        .await
}

/// Creates a user through `user_create` as the CLI does (`catalog sysadmin add`, core's
/// `admin::create_user`), as a caller.
async fn new_user(app: &AppState, name: &str, sysadmin: bool) -> Principal {
    let params = json!({"name": name, "email": format!("{name}@example.org"),
                        "password": PASSWORD, "sysadmin": sysadmin});
    let u = run_ignoring_auth(app, "user_create", params)
        .await
        .unwrap_or_else(|e| panic!("user_create {name}: {}", e.to_error_object()));
    Principal {
        id: u["id"].as_str().expect("the user's id").to_string(),
        name: name.into(),
        sysadmin,
        state: u["state"].as_str().unwrap_or("active").to_string(),
    }
}

/// Checks that every Rust block of some book chapters is a copy of some example code, so
/// that the book cannot drift from the API. Lines are compared trimmed with blank lines
/// skipped, so a block may be dedented; a line `// …` in a block separates pieces that are
/// checked one by one. Panics naming the first block that is no copy.
pub fn assert_book_blocks_are_copies(
    chapters: &[std::path::PathBuf],
    sources: &[std::path::PathBuf],
) {
    fn lines(text: &str) -> Vec<&str> {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect()
    }
    let sources: Vec<String> = sources
        .iter()
        .map(|s| std::fs::read_to_string(s).unwrap_or_else(|e| panic!("{}: {e}", s.display())))
        .collect();
    let source_lines: Vec<Vec<&str>> = sources.iter().map(|s| lines(s)).collect();
    for chapter in chapters {
        let text = std::fs::read_to_string(chapter)
            .unwrap_or_else(|e| panic!("{}: {e}", chapter.display()));
        let pieces = rust_pieces(&text);
        assert!(
            !pieces.is_empty(),
            "{} shows no Rust code",
            chapter.display()
        );
        for piece in &pieces {
            let want = lines(piece);
            let found = source_lines
                .iter()
                .any(|src| src.windows(want.len()).any(|w| w == want.as_slice()));
            assert!(
                found,
                "{}: not a copy of the examples' code:\n{piece}",
                chapter.display()
            );
        }
    }
}

/// The Rust blocks of a markdown text, each split at `// …` lines.
pub fn rust_pieces(markdown: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_start()) {
            (None, fence) if fence.starts_with("```rust") => current = Some(String::new()),
            (Some(_), "```") => pieces.push(current.take().unwrap_or_default()),
            (Some(piece), "// …") => pieces.push(std::mem::take(piece)),
            (Some(piece), _) => {
                piece.push_str(line);
                piece.push('\n');
            }
            (None, _) => {}
        }
    }
    pieces.retain(|p| !p.trim().is_empty());
    pieces
}
