//! The search index as actions see it ([`SearchIndex`], `App::search`), and the hook through
//! which the host hears every committed write ([`CommitHook`]).
//!
//! The host implements both with its indexer: after a write action commits, the hook notes the
//! commit ([`IndexLag`]) and wakes the indexer, which brings the index up to the store's outbox
//! in the background, one index commit for all the writes that committed meanwhile. A search
//! first waits until the index has every write acknowledged before it arrived
//! ([`SearchIndex::settle`]), so a client reads its writes without each write waiting for an
//! index commit of its own. Searches go to the backend that `catalog.search.backend` chose.

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

/// Writes of this process that committed, against those the search index (and the
/// `package_show` cache, which the indexer invalidates) has applied: while any is pending, a
/// search waits for the indexer ([`SearchIndex::settle`]) and `package_show` reads the store.
#[derive(Debug, Default)]
pub struct IndexLag {
    committed: std::sync::atomic::AtomicU64,
    applied: std::sync::atomic::AtomicU64,
}

impl IndexLag {
    /// Notes a write that committed (before its answer goes out).
    pub fn note_commit(&self) {
        self.committed
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// How many writes had committed by now: what an index pass starting now covers.
    pub fn committed(&self) -> u64 {
        self.committed.load(std::sync::atomic::Ordering::Acquire)
    }

    /// How many committed writes the index has applied.
    pub fn applied(&self) -> u64 {
        self.applied.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Records that an index pass which started when `committed` writes had committed is done.
    pub fn applied_through(&self, committed: u64) {
        self.applied
            .fetch_max(committed, std::sync::atomic::Ordering::AcqRel);
    }

    /// Whether a committed write may not be in the index (or the cache) yet.
    pub fn pending(&self) -> bool {
        self.applied() < self.committed()
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

    /// Waits (at most `limit`) until the index has applied every write this process
    /// acknowledged before the call (read-your-writes; what a search does first).
    async fn settle(&self, app: &AppState, limit: Duration);

    /// Whether this node has applied the change feed up to `seq` (a client's last write,
    /// from its `X-Catalog-Seq`): what its node-local copies (the `package_show` cache) then
    /// hold is at least as new. True where the node follows no feed.
    fn applied_through(&self, seq: i64) -> bool;

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
