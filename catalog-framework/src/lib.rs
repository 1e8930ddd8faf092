//! The catalog framework: the plugin API. Extension points (traits) and their registry, the
//! context an action runs in (its caller, its transaction, its domain events), typed action
//! parameters, background jobs, the plugin lifecycle and CKAN's authorization model.
//!
//! Plugin authors import [`prelude`] and nothing deeper; plugins that serve pages or routes of
//! their own also use [`web`]. The store (`store`) and the search interface (`search`) are the
//! crates below, re-exported here. What runs the catalog (the HTTP layer, the server, the
//! search indexer, job workers, `build_app`) is the `catalog-host` crate, above.
#![forbid(unsafe_code)]

pub mod authz;
pub mod blocking;
mod cache;
pub mod cli;
pub mod context;
mod db;
pub mod escape;
pub mod events;
pub mod fetch;
pub mod files;
mod input;
pub mod jobs;
pub mod mail;
pub mod markdown;
pub mod munge;
pub mod params;
pub mod plugin;
pub mod registry;
pub mod runtime;
mod search_index;
pub mod services;
pub mod typed;
pub mod validators;
pub mod web;

/// The store: the shared model types, the repository of the core tables, the migrations,
/// errors and configuration (the `catalog-store` crate).
pub use catalog_store as store;

/// The search interface: CKAN's query language, the index document and the `SearchBackend`
/// extension point (the `catalog-search` crate).
pub use catalog_search as search;

pub use catalog_search::register_search_backend;
pub use catalog_store::{extension_point, migration, register_at};

/// Errors and their constructors (CKAN's error table), from the store crate.
pub use catalog_store::error;

/// The memory a JSON value holds, as the `package_show` cache counts it: for a plugin's own
/// bounded cache of JSON values.
pub use cache::heap_bytes;

// The bottom modules, under the names the framework's own code uses.
use catalog_store::{config, identity, json};

/// What the host builds an application from and runs it with: the parts of [`App`](context::App) a binary
/// or a test harness needs to name. Plugins do not need these.
pub mod app {
    pub use crate::cache::PackageCache;
    pub use crate::config::{Config, ServerConfig};
    pub use crate::context::App;
    pub use crate::jobs::Jobs;
    pub use crate::plugin::{Extensions, PluginSet, Setup};
    pub use crate::registry::Registry;
    pub use crate::runtime::RuntimeConfig;
    pub use crate::search_index::{CommitHook, RebuildReport, SearchIndex};
    pub use crate::store::{Backend, PluginList, Store};
}

/// What plugin crates need, in one import: the traits a plugin implements, the context an
/// action runs in, errors and their constructors, typed parameters, the registration macros.
/// Everything else a plugin may use lives in a module of its own: parameter helpers in
/// [`params`], route helpers in [`web`], the store and search crates in [`store`] and
/// [`search`], authorization in [`authz`], heavy work in [`blocking`], jobs in [`jobs`].
pub mod prelude {
    pub use crate::config::Config;
    pub use crate::context::{ActionContext, AppState, Principal};
    pub use crate::error::{
        internal, missing, not_authorized, not_found, validation, validation_message, CkanError,
        CkanResult, ErrorKind, ValidationBuilder,
    };
    pub use crate::events::{Change, DomainEvent, Entity, EventSubscriber};
    pub use crate::jobs::{JobHandler, JobOptions};
    pub use crate::plugin::{Migration, Plugin, Setup};
    pub use crate::registry::{
        Action, Answer, AuthFunction, ChainedAction, ChainedAuthFunction, DatasetSchema, Params,
        Registry, SchemaContext, SchemaOp,
    };
    pub use crate::typed::{Natural, Positive};
    pub use crate::{
        action_params, register_auth, register_chained_action, register_chained_auth,
        register_dataset_schema, register_event_subscriber, register_job_handler, register_plugin,
        register_routes, register_typed_actions,
    };
    pub use async_trait::async_trait;
    pub use serde_json::{json, Map, Value};
}

#[doc(hidden)]
pub mod __private {
    pub use crate::context::ActionContext;
    pub use crate::error::{internal, CkanResult, ValidationBuilder};
    pub use crate::events::EventSubscriberRegistration;
    pub use crate::jobs::JobHandlerRegistration;
    pub use crate::plugin::{NamedPlugin, PluginRegistration};
    pub use crate::registry::Answer;
    pub use crate::registry::{
        ActionRegistration, AuthRegistration, ChainedActionRegistration, ChainedAuthRegistration,
        DatasetSchemaRegistration, Params, Registration,
    };
    pub use crate::typed::{__doc_text, decode_field, ActionParams, Field};
    pub use crate::typed::{Typed, TypedAction};
    pub use async_trait::async_trait;
    pub use inventory;
    pub use serde_json;
}
