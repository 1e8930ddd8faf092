//! The catalog host: what runs the catalog. It builds the application from the enabled
//! plugins ([`build_app`]), serves the Action API and every plugin's routes over HTTP
//! ([`router`], [`serve`]), describes the API ([`openapi_document`]), keeps the search index
//! in step with the store ([`SearchService`], the commit hook and the background feed), and
//! runs background job workers ([`WorkerPool`]). Binaries and tests depend on it; plugins
//! depend on `catalog-framework` only.
#![forbid(unsafe_code)]

mod feed;
mod http;
mod indexer;
mod nodes;
mod openapi;
mod server;
pub mod testkit;
mod workers;

use std::path::{Path, PathBuf};
use std::sync::Arc;

// The file-store backends, the fetcher and the mailer every app has, linked for their
// registrations.
use catalog_io as _;

use catalog_framework::app::{App, Extensions, Jobs, PackageCache, RuntimeConfig, Setup};
pub use catalog_framework::app::{Config, PluginList, Registry, ServerConfig};
use catalog_framework::fetch::FetcherRegistration;
use catalog_framework::files::{FileBackendInit, FileBackendRegistration, FileStore};
use catalog_framework::mail::MailerRegistration;
use catalog_framework::prelude::AppState;
use catalog_framework::search::{
    Query, SearchBackend, SearchBackendInit, SearchBackendRegistration, SearchRequest,
};
use catalog_framework::store::registration::Registration;
pub use catalog_framework::store::{Backend, Store};
pub use http::{router, serve};
pub use indexer::{spawn_background_sync, CheckReport, SearchService};
pub use openapi::document as openapi_document;
pub use server::{serve as serve_router, ServerLimits};
pub use workers::{shutdown_signal, HostWorkers, WorkerOptions, WorkerPool};

/// Builds the application: frozen registry, connected and migrated store, and a search
/// index brought up to the store before it returns.
pub async fn build_app(
    config: Config,
    database_url: &str,
    data_dir: PathBuf,
) -> anyhow::Result<AppState> {
    build_app_with(config, database_url, data_dir, IndexStart::Blocking).await
}

/// The file store `catalog.storage.backend` names (`local` when it is empty), among the
/// registered backends.
fn file_store(registry: &Registry, config: &Config, data_dir: &Path) -> anyhow::Result<FileStore> {
    let backends = registry.extensions::<FileBackendRegistration>();
    let name = match config.catalog.storage.backend.as_str() {
        "" => "local",
        other => other,
    };
    let Some(factory) = backends.get(name) else {
        let known: Vec<&str> = backends.keys().map(String::as_str).collect();
        anyhow::bail!(
            "catalog.storage.backend {name:?}: expected one of {}",
            known.join(", ")
        );
    };
    Ok(FileStore::new(
        factory.open(&FileBackendInit { config, data_dir })?,
    ))
}

/// The registration of `name` at an extension point that has one in use (the fetcher, the
/// mailer): the one of the highest priority.
fn registered<R: Registration>(
    registry: &Registry,
    name: &str,
    what: &str,
) -> anyhow::Result<Arc<R::Target>> {
    registry
        .extensions::<R>()
        .get(name)
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("no {what} `{name}` is registered (is catalog-io linked?)"))
}

/// How [`build_app_with`] fills an empty search index (a new node, a deleted index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexStart {
    /// Before it returns (commands, tests).
    Blocking,
    /// In the background while the server serves (`catalog serve`): searches are refused
    /// with a `Search Error` and `/health/ready` answers 503 until it is built.
    WhileServing,
}

/// [`build_app`], choosing how an empty search index is filled.
pub async fn build_app_with(
    config: Config,
    database_url: &str,
    data_dir: PathBuf,
    index_start: IndexStart,
) -> anyhow::Result<AppState> {
    let mut registry = Registry::for_config(&config)?;
    tracing::info!("registered {}", registry.short_summary());
    tracing::debug!(registry = %registry.summary(), "registered extensions");
    let mut extensions = Extensions::default();
    for p in registry.plugin_set().iter() {
        p.configure(&mut Setup::new(&config, &registry, &mut extensions))
            .map_err(|e| anyhow::anyhow!("plugin {}: {e:#}", p.name()))?;
    }
    registry.adopt_dataset_schemas(&mut extensions);
    std::fs::create_dir_all(&data_dir)?;
    let files = file_store(&registry, &config, &data_dir)?;
    let fetcher = registered::<FetcherRegistration>(&registry, "http", "fetcher")?;
    let mailer = registered::<MailerRegistration>(&registry, "smtp", "mailer")?;
    tracing::info!(files = %files.describe, "file store");
    let store = Store::connect(database_url).await?;
    store.migrate().await?;
    for p in registry.plugin_set().iter() {
        store.migrate_plugin(p.name(), p.migrations()).await?;
    }
    let sqlite = store.backend == Backend::Sqlite;
    let backend_name = config.catalog.search.backend.clone();
    let factory = registry
        .extensions::<SearchBackendRegistration>()
        .get(&backend_name)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "catalog.search.backend = {backend_name:?} is not the search backend of an enabled plugin (enabled: {})",
                registry.summary()["search_backends"]
            )
        })?;
    let backend = factory
        .open(SearchBackendInit {
            config: config.clone(),
            store: store.clone(),
            data_dir: data_dir.clone(),
        })
        .await?;
    if index_start == IndexStart::WhileServing {
        wait_for_index(backend.as_ref()).await;
    }
    let config_cache_bytes = config.catalog.cache.package_show_bytes;
    // The index's feed position is read after the wait: the process that held the index
    // moved it until it exited.
    let search = Arc::new(SearchService::new(backend, &data_dir));
    let follows_feed = search.follows_feed();
    let app = Arc::new(App {
        config,
        store,
        registry,
        data_dir,
        files,
        fetcher,
        mailer,
        search: search.clone(),
        commit_hooks: vec![Arc::new(indexer::IndexOnCommit)],
        // On PostgreSQL only where each node follows the change feed, which invalidates it.
        package_cache: PackageCache::new(sqlite || follows_feed, config_cache_bytes),
        index_lag: Default::default(),
        extensions,
        runtime: RuntimeConfig::default(),
        jobs: Jobs::default(),
    });
    {
        let mut conn = app.store.pool.acquire().await?;
        app.runtime.refresh(&mut conn).await?;
    }
    prepare_search(&app, &search, index_start).await?;
    // Applies the outbox after writes (ADR 0012); ends when the app is dropped.
    SearchService::spawn_follower(&app);
    for p in app.registry.plugin_set().iter() {
        p.start(&app)
            .await
            .map_err(|e| anyhow::anyhow!("plugin {} failed to start: {e:#}", p.name()))?;
    }
    Ok(app)
}

/// How long a starting server waits for another process to let the search index go.
const INDEX_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// A server restarted before the old process has exited: that process lets the index go as it
/// exits, and this one takes it over, so that what the old one left in the change feed is
/// applied before serving (past [`INDEX_LOCK_WAIT`] it serves read-only, and takes the index
/// over at its first index pass after the other process exits).
async fn wait_for_index(backend: &dyn SearchBackend) {
    if backend.writable() {
        return;
    }
    tracing::info!("the search index is held by another process: waiting for it to exit");
    let deadline = std::time::Instant::now() + INDEX_LOCK_WAIT;
    while !backend.writable() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Brings the index up to the store: applies what a crash (or other nodes, while this one was
/// down) left in the change feed, and fills an empty index (a new node, a deleted index
/// directory) from the store.
async fn prepare_search(
    app: &AppState,
    search: &SearchService,
    index_start: IndexStart,
) -> anyhow::Result<()> {
    if !search.backend.writable() {
        // A command beside a running server: the server holds the index, builds it and applies
        // the change feed (its latest writes may still be on their way in, ADR 0012).
        if index_start == IndexStart::WhileServing {
            tracing::warn!(
                "the search index is still held by another process: serving it read-only until \
                 that process exits (the next index pass after that takes it over)"
            );
        } else {
            tracing::debug!(
                "the search index is held by a running server, which keeps it up to date"
            );
        }
        return Ok(());
    }
    let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM package")
        .fetch_one(&app.store.pool)
        .await?;
    // A count, not `indexed()`: start-up should not list every document of a large index.
    let indexed = search
        .backend
        .search(&SearchRequest {
            query: Query::All,
            filters: Vec::new(),
            sort: Vec::new(),
            start: 0,
            rows: 0,
            facet_fields: Vec::new(),
            facet_limit: None,
            facet_mincount: 1,
        })
        .await
        .map_err(|e| anyhow::anyhow!("counting the search index: {e:?}"))?
        .count;
    if stored > 0 && indexed == 0 && index_start == IndexStart::WhileServing {
        tracing::info!(
            datasets = stored,
            "search index is empty: building it from the store while serving"
        );
        SearchService::build_while_serving(app);
        return Ok(());
    }
    if stored > 0 && indexed == 0 {
        tracing::info!(datasets = stored, "search index is empty: rebuilding it");
        SearchService::rebuild_from_head(app, &|_, _| {})
            .await?
            .log_failures();
    } else if search.follows_feed() && !search.has_position() {
        // An index of an older version, which drained the outbox: what is left in it is
        // what that index has not seen.
        let oldest: Option<i64> = sqlx::query_scalar("SELECT MIN(seq) FROM search_outbox")
            .fetch_one(&app.store.pool)
            .await?;
        search.reset_position(oldest.map_or(0, |o| o - 1))?;
    } else if SearchService::fell_behind(app).await? {
        tracing::warn!(
            "the search index missed changes removed by the feed's retention: rebuilding it"
        );
        SearchService::rebuild_from_head(app, &|_, _| {}).await?;
    }
    let applied = SearchService::sync(app).await?;
    if applied > 0 {
        tracing::info!(
            datasets = applied,
            "search index caught up from the change feed"
        );
    }
    Ok(())
}
