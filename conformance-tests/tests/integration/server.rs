//! Our server, started in-process on an ephemeral port, on SQLite or PostgreSQL.

use std::path::PathBuf;

// The plugins register their actions through inventory; naming the crates keeps them linked.
use catalog_plugin_activity as _;
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_dcat as _;
use catalog_plugin_legacy_api as _;
use catalog_plugin_related as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_postgres as _;
use catalog_plugin_search_tantivy as _;
use catalog_plugin_views as _;

use sqlx::{Connection, Executor, PgConnection};

/// PostgreSQL server used by the PostgreSQL run; the test database is created inside it.
pub const POSTGRES_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

const ADMIN_NAME: &str = "conformance_admin";

/// A running server and how to reach it.
pub struct TestServer {
    pub base_url: String,
    pub sysadmin_token: String,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    _data_dir: tempfile::TempDir,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts the server on `database_url` (`None`: SQLite in the data directory) with the CKAN
/// test-config options the cases assume, and creates the sysadmin the cases run as.
pub async fn start(database_url: Option<&str>) -> anyhow::Result<TestServer> {
    let data_dir = tempfile::tempdir()?;
    let database_url = match database_url {
        Some(url) => url.to_string(),
        None => catalog_framework::store::Store::sqlite_url_in(data_dir.path()),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;

    let mut config = catalog_framework::prelude::Config::default();
    config.catalog.site_url = format!("http://{addr}");
    // CKAN's own test configuration turns these on, and the cases follow it (spec §7.3).
    config.catalog.auth.create_unowned_dataset = true;
    config.catalog.auth.user_create_organizations = true;
    config.catalog.auth.allow_dataset_collaborators = true;
    // ckanext-dcat's test configuration turns content negotiation on; a small page size lets
    // the DCAT case page through a few datasets.
    config.catalogext.values.insert(
        "dcat".into(),
        serde_json::json!({"enable_content_negotiation": true, "datasets_per_page": 2}),
    );
    // Each store runs with its own search backend: tantivy beside SQLite, PostgreSQL
    // full-text search beside PostgreSQL (the multi-node set-up).
    if database_url.starts_with("postgres") {
        config.catalog.search.backend = "postgres".into();
    }

    let app = catalog_framework::build_app(
        config,
        &database_url,
        PathBuf::from(data_dir.path()).join("data"),
    )
    .await?;
    let task = tokio::spawn(catalog_framework::host::serve(app.clone(), listener));
    catalog_plugin_core::admin::create_user(
        &app,
        ADMIN_NAME,
        "admin@example.org",
        "password123",
        true,
    )
    .await?;
    let sysadmin_token: String =
        catalog_plugin_core::admin::create_token(&app, ADMIN_NAME, "conformance").await?;
    Ok(TestServer {
        base_url: format!("http://{addr}"),
        sysadmin_token,
        task,
        _data_dir: data_dir,
    })
}

/// A scratch PostgreSQL database, dropped (with force) by [`ScratchDatabase::drop_now`].
pub struct ScratchDatabase {
    pub name: String,
    pub url: String,
}

impl ScratchDatabase {
    /// Creates `catalog_conf_<random>`; `None` when PostgreSQL is not reachable.
    pub async fn create() -> anyhow::Result<Option<ScratchDatabase>> {
        let connect = PgConnection::connect(POSTGRES_ADMIN_URL);
        let mut conn = match tokio::time::timeout(std::time::Duration::from_secs(5), connect).await
        {
            Ok(Ok(conn)) => conn,
            Ok(Err(_)) | Err(_) => return Ok(None),
        };
        let name = format!("catalog_conf_{}", uuid_simple());
        conn.execute(format!("CREATE DATABASE {name}").as_str())
            .await?;
        conn.close().await?;
        let url = format!("postgres://postgres@127.0.0.1:5432/{name}");
        Ok(Some(ScratchDatabase { name, url }))
    }

    pub async fn drop_now(self) -> anyhow::Result<()> {
        let mut conn = PgConnection::connect(POSTGRES_ADMIN_URL).await?;
        conn.execute(format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name).as_str())
            .await?;
        conn.close().await?;
        Ok(())
    }
}

fn uuid_simple() -> String {
    // The run suffix generator already gives lowercase alphanumerics, safe in an identifier.
    catalog_conformance::runner::random_run_suffix()
}
