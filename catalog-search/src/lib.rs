//! Search: the [`SearchBackend`] extension point, CKAN's query language ([`query`]), the
//! fields ([`fields`]) and the index document ([`document`]), and the shared cases every
//! backend must pass ([`testkit`]): what a search backend depends on. The indexer that keeps
//! a backend in step with the store lives in the host.
//!
//! A backend is registered with [`register_search_backend!`](crate::register_search_backend)
//! under a name and chosen by `catalog.search.backend` (default `tantivy`). Plugins reach this
//! crate as `catalog_framework::search`.
#![forbid(unsafe_code)]

pub mod document;
pub mod fields;
pub mod query;
pub mod testkit;

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;

use catalog_store::config::Config;
use catalog_store::error::CkanResult;
use catalog_store::Store;

pub use document::IndexDocument;
pub use query::{Query, RangeValue};

/// What a search asks of a backend. `query` is scored; `filters` must all match and do not
/// score (CKAN's `fq`, `fq_list`, state, capacity and permission labels).
#[derive(Debug, Clone)]
pub struct SearchRequest {
    pub query: Query,
    pub filters: Vec<Query>,
    pub sort: Vec<SortKey>,
    pub start: usize,
    pub rows: usize,
    pub facet_fields: Vec<String>,
    /// Values per facet; `None` is unlimited.
    pub facet_limit: Option<usize>,
    pub facet_mincount: u64,
}

/// One sort key.
#[derive(Debug, Clone, PartialEq)]
pub struct SortKey {
    pub field: SortField,
    pub descending: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SortField {
    Score,
    /// One of [`fields::SORTABLE`].
    Field(String),
}

/// A backend's answer.
#[derive(Debug, Clone, Default)]
pub struct SearchHits {
    /// Total matches, before paging.
    pub count: u64,
    /// The stored `package_show` dicts (JSON text) of the requested page, in order.
    pub docs: Vec<String>,
    /// Per requested facet field: `(value, count)`, count descending then value ascending.
    pub facets: Vec<(String, Vec<(String, u64)>)>,
}

/// A search engine holding one document per dataset.
#[async_trait]
pub trait SearchBackend: Send + Sync + 'static {
    /// Adds or replaces `upserts`, removes `deletes` (dataset ids), and makes the result
    /// visible to every later [`SearchBackend::search`] before returning.
    async fn apply(&self, upserts: Vec<IndexDocument>, deletes: Vec<String>) -> anyhow::Result<()>;

    /// Runs a query. Bad field names or sorts give CKAN's search errors.
    async fn search(&self, req: &SearchRequest) -> CkanResult<SearchHits>;

    /// Every indexed dataset: `(id, metadata_modified)`, for `search-index check`.
    async fn indexed(&self) -> anyhow::Result<Vec<(String, String)>>;

    /// Starts a rebuild into a fresh index; the current one keeps serving until
    /// [`IndexRebuild::finish`] swaps the new one in.
    async fn rebuild(&self) -> anyhow::Result<Box<dyn IndexRebuild>>;

    /// Whether every node shares this one index (it lives in the store, as the `postgres`
    /// backend's). A shared index is fed once, by whichever node drains the outbox; a local
    /// one (the default: each node's own tantivy index) follows the change feed on every node.
    fn shared(&self) -> bool {
        false
    }

    /// Whether this process may write the index (false: another process, a running server,
    /// holds it; that process applies the change feed).
    fn writable(&self) -> bool {
        true
    }
}

/// A rebuild in progress.
#[async_trait]
pub trait IndexRebuild: Send {
    /// Adds datasets not added before in this rebuild (each id once: nothing to replace).
    async fn add(&mut self, docs: Vec<IndexDocument>) -> anyhow::Result<()>;
    /// Adds datasets that may have been added before (the replay of changes made while the
    /// rebuild ran), replacing them.
    async fn replace(&mut self, docs: Vec<IndexDocument>) -> anyhow::Result<()> {
        self.delete(docs.iter().map(|d| d.id.clone()).collect())
            .await?;
        self.add(docs).await
    }
    /// Called once every dataset is added, before the changes made meanwhile are replayed:
    /// live writes wait during the replay and the swap, not during this, so a backend writes
    /// out what it buffered here (tantivy commits).
    async fn flush(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    /// Removes datasets added earlier (a replayed deletion).
    async fn delete(&mut self, ids: Vec<String>) -> anyhow::Result<()>;
    /// Commits the new index and swaps it in.
    async fn finish(self: Box<Self>) -> anyhow::Result<()>;
}

/// What a backend gets when it opens.
pub struct SearchBackendInit {
    pub config: Config,
    pub store: Store,
    pub data_dir: PathBuf,
}

/// Opens a backend; registered under the backend's name.
#[async_trait]
pub trait SearchBackendFactory: Send + Sync + 'static {
    async fn open(&self, init: SearchBackendInit) -> anyhow::Result<Arc<dyn SearchBackend>>;
}

/// Registers a [`SearchBackendFactory`]: `register_search_backend!("tantivy", TantivyFactory);`
#[macro_export]
macro_rules! register_search_backend {
    ($name:expr, $value:expr) => {
        $crate::register_search_backend!($name, $value, priority = 0);
    };
    ($name:expr, $value:expr, priority = $p:expr) => {
        $crate::__private::register_at!($crate::SearchBackendRegistration, $name, $value, $p);
    };
}

catalog_store::extension_point!(
    /// A search backend, submitted with [`register_search_backend!`].
    pub SearchBackendRegistration, Box<dyn SearchBackendFactory>,
    collected("search_backends", "search backend")
);

#[doc(hidden)]
pub mod __private {
    pub use catalog_store::register_at;
}
