//! The catalog framework: extension points (traits), their registry, the HTTP layer and
//! envelope, errors, configuration, the store and CKAN's authorization model.
//!
//! Plugin authors import [`prelude`] and nothing deeper.
#![forbid(unsafe_code)]

// The public surface is five modules: `prelude` (the plugin API), `store` (the repository
// functions and rows of the catalog's tables), `search` (what a search backend implements and
// the query parser it uses), `authz` (CKAN's authorization model and credentials) and `host`
// (what a binary that runs the catalog needs), plus `testkit` for tests. Everything else is
// private and reaches plugins through those.
pub mod authz;
mod blocking;
mod cache;
mod config;
mod context;
mod error;
mod events;
mod http;
mod identity;
mod jobs;
mod json;
pub mod mail;
mod openapi;
mod params;
mod plugin;
mod registry;
mod runtime;
pub mod search;
mod server;
pub mod store;
pub mod testkit;
mod time;
mod typed;

/// What a binary or an embedding application needs to build and serve the catalog.
pub mod host {
    pub use crate::config::{Config, ServerConfig};
    pub use crate::http::{router, serve};
    pub use crate::jobs::{shutdown_signal, WorkerOptions, WorkerPool};
    pub use crate::openapi::document as openapi_document;
    pub use crate::plugin::PluginList;
    pub use crate::registry::Registry;
    pub use crate::search::indexer::{spawn_background_sync, SearchService};
    pub use crate::server::{serve as serve_router, ServerLimits};
    pub use crate::store::{Backend, Store};
    pub use crate::{build_app, build_app_with, IndexStart};
}

/// What plugin crates need, in one import.
pub mod prelude {
    pub use crate::action_params;
    pub use crate::blocking::{run as run_blocking, Lane};
    pub use crate::config::{Config, LimitsConfig};
    pub use crate::context::{ActionContext, App, AppState, Principal, Upload};
    pub use crate::error::{
        integrity, internal, missing, not_authorized, not_found, search_error, search_query_error,
        validation, validation_message, CkanError, CkanResult, ErrorKind, ValidationBuilder,
    };
    pub use crate::events::{Change, DomainEvent, Entity, EventSubscriber};
    pub use crate::http::{
        bare_error, envelope, identify, is_js_callback, json_response, mark_sequence, parse_json,
        path_after, query_to_params, read_request_body, read_your_writes,
    };
    pub use crate::jobs::{enqueue_job, JobHandler, JobOptions};
    pub use crate::json::{to_ckan_json, to_ckan_json_string};
    pub use crate::params::{
        bool_param, dedup, natural, opt_str, positive, req_str, str_list, too_many_items, truthy,
    };
    pub use crate::plugin::{Migration, Plugin, SearchBackendPlugin, Setup};
    pub use crate::registry::{
        Action, AuthFunction, ChainedAction, ChainedAuthFunction, DatasetSchema, Params,
        Registration, Registry, RegistryClash, SchemaContext, SchemaOp,
    };
    pub use crate::runtime::{canonical_key, CONFIG_UPDATE_KEY, RUNTIME_CONFIG_KEYS};
    pub use crate::search::{
        IndexDocument, IndexRebuild, Query, SearchBackend, SearchBackendFactory, SearchBackendInit,
        SearchHits, SearchRequest, SortField, SortKey,
    };
    pub use crate::store::RowExt;
    pub use crate::time::{format_iso, now_iso, parse_iso};
    pub use crate::typed::{ActionParams, Natural, Positive, Typed, TypedAction};
    pub use crate::{
        extension_point, register_action, register_at, register_auth, register_chained_action,
        register_chained_auth, register_dataset_schema, register_event_subscriber,
        register_job_handler, register_plugin, register_routes, register_search_backend,
        register_typed_actions,
    };
    pub use async_trait::async_trait;
    pub use serde_json::{json, Map, Value};
}

#[doc(hidden)]
pub mod __private {
    pub use crate::error::{internal, CkanResult, ValidationBuilder};
    pub use crate::plugin::{NamedPlugin, PluginRegistration};
    pub use crate::registry::{
        ActionRegistration, AuthRegistration, ChainedActionRegistration, ChainedAuthRegistration,
        DatasetSchemaRegistration, EventSubscriberRegistration, JobHandlerRegistration, Params,
        Registration, RoutesRegistration, SearchBackendRegistration,
    };
    pub use crate::typed::{__doc_text, decode_field, ActionParams, Field};
    pub use inventory;
    pub use serde_json;
}

use std::path::PathBuf;
use std::sync::Arc;

/// Builds the application: frozen registry, connected and migrated store, and a search
/// index brought up to the store before it returns.
pub async fn build_app(
    config: config::Config,
    database_url: &str,
    data_dir: PathBuf,
) -> anyhow::Result<context::AppState> {
    build_app_with(config, database_url, data_dir, IndexStart::Blocking).await
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
    config: config::Config,
    database_url: &str,
    data_dir: PathBuf,
    index_start: IndexStart,
) -> anyhow::Result<context::AppState> {
    let registry = registry::Registry::for_config(&config)?;
    tracing::info!("registered {}", registry.short_summary());
    tracing::debug!(registry = %registry.summary(), "registered extensions");
    let mut extensions = plugin::Extensions::default();
    for p in registry.plugin_set().iter() {
        p.configure(&mut plugin::Setup {
            config: &config,
            registry: &registry,
            extensions: &mut extensions,
        })
        .map_err(|e| anyhow::anyhow!("plugin {}: {e:#}", p.name()))?;
    }
    std::fs::create_dir_all(&data_dir)?;
    let store = store::Store::connect(database_url).await?;
    store.migrate().await?;
    for p in registry.plugin_set().iter() {
        store.migrate_plugin(p.name(), p.migrations()).await?;
    }
    let sqlite = store.backend == store::Backend::Sqlite;
    let backend_name = config.catalog.search.backend.clone();
    let factory = registry.search_backend(&backend_name).ok_or_else(|| {
        anyhow::anyhow!(
            "catalog.search.backend = {backend_name:?} is not the search backend of an enabled plugin (enabled: {})",
            registry.summary()["search_backends"]
        )
    })?;
    let backend = factory
        .open(search::SearchBackendInit {
            config: config.clone(),
            store: store.clone(),
            data_dir: data_dir.clone(),
        })
        .await?;
    let config_cache_bytes = config.catalog.cache.package_show_bytes;
    let search = search::indexer::SearchService::new(backend, &data_dir);
    let follows_feed = search.follows_feed();
    let app = Arc::new(context::App {
        config,
        store,
        registry,
        data_dir,
        search,
        // On PostgreSQL only where each node follows the change feed, which invalidates it.
        package_cache: cache::PackageCache::new(sqlite || follows_feed, config_cache_bytes),
        extensions,
        runtime: runtime::RuntimeConfig::default(),
        jobs: jobs::Jobs::default(),
    });
    {
        let mut conn = app.store.pool.acquire().await?;
        app.runtime.refresh(&mut conn).await?;
    }
    prepare_search(&app, index_start).await?;
    for p in app.registry.plugin_set().iter() {
        p.start(&app)
            .await
            .map_err(|e| anyhow::anyhow!("plugin {} failed to start: {e:#}", p.name()))?;
    }
    Ok(app)
}

/// Brings the index up to the store: applies what a crash (or other nodes, while this one was
/// down) left in the change feed, and fills an empty index (a new node, a deleted index
/// directory) from the store.
async fn prepare_search(app: &context::AppState, index_start: IndexStart) -> anyhow::Result<()> {
    use search::indexer::SearchService;
    let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM package")
        .fetch_one(&app.store.pool)
        .await?;
    // A count, not `indexed()`: start-up should not list every document of a large index.
    let indexed = app
        .search
        .backend
        .search(&search::SearchRequest {
            query: search::Query::All,
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
    } else if app.search.follows_feed() && !app.search.has_position() {
        // An index of an older version, which drained the outbox: what is left in it is
        // what that index has not seen.
        let oldest: Option<i64> = sqlx::query_scalar("SELECT MIN(seq) FROM search_outbox")
            .fetch_one(&app.store.pool)
            .await?;
        app.search.reset_position(oldest.map_or(0, |o| o - 1))?;
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
