//! The search index as actions see it ([`SearchIndex`], `App::search`), and the hook through
//! which the host hears every committed write ([`CommitHook`]).
//!
//! The host implements both with its indexer: after a write action commits, the hook brings
//! the index up to the store's outbox before the answer goes out (read-your-writes), and
//! searches go to the backend that `catalog.search.backend` chose.

use std::any::Any;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use crate::context::AppState;
use crate::error::CkanResult;
use crate::search::{SearchHits, SearchRequest};

/// What a rebuild of the index did.
#[derive(Debug, Default)]
pub struct RebuildReport {
    pub indexed: usize,
    /// `(dataset id, error)` of the datasets that could not be indexed.
    pub failed: Vec<(String, String)>,
}

impl RebuildReport {
    /// Logs each dataset that could not be indexed.
    pub fn log_failures(&self) {
        for (id, e) in &self.failed {
            tracing::warn!(dataset = %id, error = %e, "dataset could not be indexed");
        }
    }
}

/// The catalog's search index: the chosen backend and what keeps it in step with the store.
#[async_trait]
pub trait SearchIndex: Send + Sync + 'static {
    /// Runs a query; refused with a `Search Error` while the index is being built from empty.
    async fn search(&self, req: &SearchRequest) -> CkanResult<SearchHits>;

    /// Whether the index can answer searches (false while a new node builds it).
    fn ready(&self) -> bool;

    /// Whether this node follows the store's change feed (its index is its own): a write's
    /// answer then carries the feed position ([`SearchIndex::high`]) for read-your-writes on
    /// other nodes.
    fn follows_feed(&self) -> bool;

    /// The highest change-feed position this node has applied.
    fn high(&self) -> i64;

    /// Waits (at most `limit`) until this node has applied the change feed up to `seq`, the
    /// position another node's write answered with.
    async fn catch_up(&self, app: &AppState, seq: i64, arrived: Instant, limit: Duration);

    /// Rebuilds the whole index from the store into a fresh one, swapped in at the end.
    /// `progress(done, total)`.
    async fn rebuild(
        &self,
        app: &AppState,
        progress: &(dyn Fn(usize, usize) + Send + Sync),
    ) -> anyhow::Result<RebuildReport>;

    /// The implementation, for the host that made it.
    fn as_any(&self) -> &dyn Any;
}

/// Hears every write action that committed, before its answer goes out (after the store's
/// write lock is released, before the domain events' `after_commit`). The host registers the
/// search indexer here.
#[async_trait]
pub trait CommitHook: Send + Sync + 'static {
    /// Runs after the commit of a write action. A failure is logged; the write stands.
    async fn after_write_commit(&self, app: &AppState) -> anyhow::Result<()>;

    /// A name for the log.
    fn name(&self) -> &'static str;

    /// Whether the hook only brings derived state up to date for the caller's next read
    /// (read-your-writes): a background write ([`ActionContext::background`]) skips such a
    /// hook, and the host's periodic sync catches up with it.
    ///
    /// [`ActionContext::background`]: crate::context::ActionContext::background
    fn read_your_writes(&self) -> bool {
        false
    }
}
