//! `example-embedding`: the catalog's API under `/catalog`, beside a `/hello` route of our own.
//!
//! `EXAMPLE_ADDR` (default `127.0.0.1:5000`) and `EXAMPLE_DATA_DIR` (default `./example-data`)
//! choose where it listens and keeps its SQLite database and search index; the catalog's own
//! options come from `CATALOG__*` environment variables.
#![forbid(unsafe_code)]

use std::path::PathBuf;

// The plugins register themselves at link time: name every one, or the linker drops it.
use catalog_plugin_auth as _;
use catalog_plugin_core as _;
use catalog_plugin_schema as _;
use catalog_plugin_search_tantivy as _;

use catalog_host::{Config, Store};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();

    let addr = std::env::var("EXAMPLE_ADDR").unwrap_or_else(|_| "127.0.0.1:5000".into());
    let data_dir = PathBuf::from(
        std::env::var("EXAMPLE_DATA_DIR").unwrap_or_else(|_| "./example-data".into()),
    );
    let listener = tokio::net::TcpListener::bind(&addr).await?;

    let mut config = Config::load(None)?;
    if std::env::var_os("CATALOG__SITE_URL").is_none() {
        // The catalog is nested: its URLs must carry the prefix.
        config.catalog.site_url = format!(
            "http://{}{}",
            listener.local_addr()?,
            example_embedding::CATALOG_PREFIX
        );
    }
    let database_url = Store::sqlite_url_in(&data_dir);
    let app = catalog_host::build_app(config, &database_url, data_dir).await?;

    tracing::info!(
        "listening on http://{}: /hello, and the Action API under {}/api/3/action",
        listener.local_addr()?,
        example_embedding::CATALOG_PREFIX
    );
    example_embedding::serve(app, listener).await?;
    Ok(())
}
