//! The catalog framework: extension points (traits), their registry, the HTTP layer and
//! envelope, errors, configuration, the store and CKAN's authorization model.
//!
//! Plugin authors import [`prelude`] and nothing deeper.
#![forbid(unsafe_code)]

pub mod authz;
pub mod config;
pub mod context;
pub mod error;
pub mod http;
pub mod identity;
pub mod params;
pub mod registry;
pub mod store;
pub mod store_queries;
pub mod time;

/// What plugin crates need, in one import.
pub mod prelude {
    pub use crate::config::Config;
    pub use crate::context::{ActionContext, App, AppState, Principal, Upload};
    pub use crate::error::{
        internal, missing, not_authorized, not_found, validation, validation_message, CkanError,
        CkanResult, ErrorKind, ValidationBuilder,
    };
    pub use crate::params::{bool_param, natural, opt_str, positive, req_str, str_list, truthy};
    pub use crate::registry::{
        Action, AuthFunction, DatasetSchema, Params, SchemaContext, SchemaOp,
    };
    pub use crate::store_queries::RowExt;
    pub use crate::{
        register_action, register_auth, register_dataset_schema, register_plugin, register_routes,
    };
    pub use async_trait::async_trait;
    pub use serde_json::{json, Map, Value};
}

#[doc(hidden)]
pub mod __private {
    pub use inventory;
}

use std::path::PathBuf;
use std::sync::Arc;

/// Builds the application: frozen registry, connected and migrated store.
pub async fn build_app(
    config: config::Config,
    database_url: &str,
    data_dir: PathBuf,
) -> anyhow::Result<context::AppState> {
    let registry = registry::Registry::build()?;
    tracing::info!(registry = %registry.summary(), "registered extensions");
    std::fs::create_dir_all(&data_dir)?;
    let store = store::Store::connect(database_url).await?;
    store.migrate().await?;
    Ok(Arc::new(context::App {
        config,
        store,
        registry,
        data_dir,
    }))
}
