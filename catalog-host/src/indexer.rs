//! Keeps the search index in step with the store.
//!
//! Every write to a dataset (its row or its memberships) inserts a row into `search_outbox`,
//! by database triggers, in the same transaction as the write. After a write action commits,
//! the commit hook notes it (`App::index_lag`) and wakes the index follower, which brings the
//! index up to the outbox in the background: one pass (one index commit) covers every write
//! that committed before it started, however many. A search waits until the index has every
//! write acknowledged before it arrived ([`SearchService::settle`]; no wait when nothing is
//! pending), so a search right after a successful write sees it, while writes no longer wait
//! for an index commit each (ADR 0012).
//!
//! How depends on the backend. A local index (each node's own tantivy index, the default)
//! follows the outbox as a change feed: each node applies the rows after its position and
//! keeps them for the other nodes (`feed`, ADR 0006); a request that carries the
//! sequence number of a write made on another node waits until this node has applied it
//! ([`SearchService::catch_up`]). A shared index (the `postgres` backend) is fed once: the node
//! that applies a row deletes it. Either way a crash between the commit and the sync leaves
//! the rows for the next pass.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use async_trait::async_trait;
use catalog_framework::app::RebuildReport;
use catalog_framework::app::{CommitHook, SearchIndex};
use catalog_framework::authz::dataset_labels;
use catalog_framework::error::search_error;
use catalog_framework::prelude::*;
use catalog_framework::search::SearchBackend;
use catalog_framework::search::{IndexDocument, SearchHits, SearchRequest};
use catalog_framework::store::RowExt;
use catalog_framework::store::{Backend, PackageBundle};

use crate::feed::{Position, GAP_TIMEOUT};

/// Datasets drained from the outbox per backend batch.
const BATCH: i64 = 500;

/// Documents a rebuild builds at a time.
const REBUILD_CONCURRENCY: usize = 8;

/// The chosen backend plus the indexer's bookkeeping.
pub struct SearchService {
    pub backend: Arc<dyn SearchBackend>,
    /// One pass at a time; a writer that waits here finds its rows already indexed. Holds
    /// when the last completed pass started (read-your-writes waits for a pass that started
    /// after the request arrived).
    sync_lock: tokio::sync::Mutex<Option<Instant>>,
    /// While a rebuild runs: the datasets changed meanwhile, replayed into the new index.
    rebuild_dirty: std::sync::Mutex<Option<HashSet<String>>>,
    /// A local index's position in the change feed (unused for a shared index).
    position: std::sync::Mutex<Position>,
    /// Where the position is saved; `None` for a shared index.
    position_file: Option<std::path::PathBuf>,
    /// Copies of the position's high and watermark, read without a lock.
    high: AtomicI64,
    watermark: AtomicI64,
    /// True while a node that started with an empty index builds it from the store (it
    /// serves meanwhile; searches are refused, not answered from a partial index).
    building: AtomicBool,
    /// Wakes the index follower: a write committed.
    wake: Arc<tokio::sync::Notify>,
    /// The highest feed position a write of this node committed (PostgreSQL): what its
    /// answer tells other nodes to wait for.
    written: AtomicI64,
}

/// What `search-index check` found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    pub checked: usize,
    /// In the store and searchable, but not in the index.
    pub missing: Vec<String>,
    /// In the index with another `metadata_modified` than the store's.
    pub stale: Vec<String>,
    /// In the index but gone from the store (or removed as deleted).
    pub extra: Vec<String>,
}

/// The host's search service behind `App::search`.
fn service(app: &AppState) -> &SearchService {
    app.search
        .as_any()
        .downcast_ref::<SearchService>()
        .expect("the app's search index is the host's SearchService")
}

#[async_trait]
impl SearchIndex for SearchService {
    async fn search(&self, req: &SearchRequest) -> CkanResult<SearchHits> {
        SearchService::search(self, req).await
    }

    fn ready(&self) -> bool {
        SearchService::ready(self)
    }

    fn follows_feed(&self) -> bool {
        SearchService::follows_feed(self)
    }

    fn high(&self) -> i64 {
        SearchService::high(self)
    }

    fn applied_through(&self, seq: i64) -> bool {
        !SearchService::follows_feed(self) || self.watermark.load(Ordering::Acquire) >= seq
    }

    async fn catch_up(&self, app: &AppState, seq: i64, arrived: Instant, limit: Duration) {
        SearchService::catch_up(app, seq, arrived, limit).await
    }

    async fn settle(&self, app: &AppState, limit: Duration) {
        SearchService::settle(app, limit).await
    }

    async fn rebuild(
        &self,
        app: &AppState,
        progress: &(dyn Fn(usize, usize) + Send + Sync),
    ) -> anyhow::Result<RebuildReport> {
        SearchService::rebuild(app, progress).await
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Wakes the index follower after each committed write (the commit itself was noted in
/// `App::index_lag`, which searches settle on). On PostgreSQL, where other nodes read the
/// write's feed position from its answer, that position is read here.
pub(crate) struct IndexOnCommit;

#[async_trait]
impl CommitHook for IndexOnCommit {
    async fn after_write_commit(&self, app: &AppState) -> anyhow::Result<()> {
        let svc = service(app);
        svc.wake.notify_one();
        if svc.follows_feed() && app.store.backend == Backend::Postgres {
            // At least the sequence numbers of the write that just committed.
            let head = SearchService::feed_head(app).await?;
            svc.written.fetch_max(head, Ordering::AcqRel);
        }
        Ok(())
    }

    fn name(&self) -> &'static str {
        "search index sync (the outbox keeps the change)"
    }

    fn read_your_writes(&self) -> bool {
        // The background sync (every 2 s, or the feed's poll) applies what a background
        // write left in the outbox.
        true
    }
}

impl SearchService {
    /// The service of a backend; a local index keeps its feed position under `data_dir`.
    pub fn new(backend: Arc<dyn SearchBackend>, data_dir: &std::path::Path) -> SearchService {
        let position_file = (!backend.shared()).then(|| Position::file(data_dir));
        let position = position_file
            .as_deref()
            .and_then(Position::load)
            .unwrap_or_default();
        SearchService {
            high: AtomicI64::new(position.high),
            watermark: AtomicI64::new(position.watermark()),
            backend,
            sync_lock: Default::default(),
            rebuild_dirty: Default::default(),
            position: std::sync::Mutex::new(position),
            position_file,
            building: AtomicBool::new(false),
            wake: Arc::new(tokio::sync::Notify::new()),
            written: AtomicI64::new(0),
        }
    }

    /// Whether the index can answer searches (false while a new node builds it).
    pub fn ready(&self) -> bool {
        !self.building.load(Ordering::Acquire)
    }

    /// Searches the index; refused with a `Search Error` while the index is being built from
    /// empty, rather than answered with part of the catalog.
    pub async fn search(&self, req: &SearchRequest) -> CkanResult<SearchHits> {
        if !self.ready() {
            return Err(search_error(
                "Search index is being built on this server; try again in a moment",
            ));
        }
        self.backend.search(req).await
    }

    /// Builds an empty index from the store in the background, while the node serves:
    /// searches are refused until it is done ([`SearchService::ready`]); a failed build is
    /// tried again every 30 seconds.
    pub fn build_while_serving(app: &AppState) {
        service(app).building.store(true, Ordering::Release);
        let app = app.clone();
        tokio::spawn(async move {
            loop {
                let started = Instant::now();
                match Self::rebuild_from_head(&app, &|_, _| {}).await {
                    Ok(report) => {
                        report.log_failures();
                        tracing::info!(
                            datasets = report.indexed,
                            seconds = started.elapsed().as_secs_f64(),
                            "search index built; searches are answered from now on"
                        );
                        break;
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "building the search index failed; trying again in 30 s");
                        tokio::time::sleep(Duration::from_secs(30)).await;
                    }
                }
            }
            service(&app).building.store(false, Ordering::Release);
            if let Err(e) = Self::sync(&app).await {
                tracing::warn!(error = %e, "search feed pass after the build failed");
            }
        });
    }

    /// Whether this node follows the change feed (its index is its own).
    pub fn follows_feed(&self) -> bool {
        self.position_file.is_some()
    }

    /// The highest feed sequence number this node has applied (what a write's answer tells
    /// the client to wait for on other nodes).
    pub fn high(&self) -> i64 {
        self.high
            .load(Ordering::Acquire)
            .max(self.written.load(Ordering::Acquire))
    }

    /// Whether this node has a saved feed position (false: a new node or an older version).
    pub fn has_position(&self) -> bool {
        self.position_file.as_deref().is_some_and(|f| f.exists())
    }

    /// Sets the feed position (a new node, or one that fell behind retention: it rebuilds
    /// from the store and follows the feed from `high`).
    pub fn reset_position(&self, high: i64) -> anyhow::Result<()> {
        let p = Position {
            high,
            gaps: Default::default(),
        };
        self.publish(&p)?;
        *self.position.lock().expect("poisoned") = p;
        Ok(())
    }

    fn publish(&self, p: &Position) -> anyhow::Result<()> {
        if let Some(file) = &self.position_file {
            p.save(file)?;
        }
        self.high.store(p.high, Ordering::Release);
        self.watermark.store(p.watermark(), Ordering::Release);
        Ok(())
    }

    /// Brings the index up to the outbox. Returns how many datasets were (re)indexed or
    /// removed.
    pub async fn sync(app: &AppState) -> anyhow::Result<usize> {
        let mut guard = service(app).sync_lock.lock().await;
        Self::pass(app, &mut guard).await
    }

    /// Read-your-writes on this node: waits (at most `limit`) until the index has every write
    /// this process acknowledged before the call. Nothing pending: no wait. Else one pass that
    /// starts after the call covers it; the index follower's pass, or one this call runs
    /// itself when the lock is free (concurrent searches share it).
    pub async fn settle(app: &AppState, limit: Duration) {
        let target = app.index_lag.committed();
        if app.index_lag.applied() >= target {
            return;
        }
        let wait = async {
            let mut guard = service(app).sync_lock.lock().await;
            if app.index_lag.applied() >= target {
                return;
            }
            if let Err(e) = Self::pass(app, &mut guard).await {
                tracing::warn!(error = %e, "search index pass for a read-your-writes search failed");
            }
        };
        if tokio::time::timeout(limit, wait).await.is_err() {
            tracing::warn!("read-your-writes wait timed out; answering from the index as it is");
        }
    }

    /// The index follower: a pass each time writes committed. Group commit: when other writes
    /// are still in progress, it first waits `catalog.search.commit_delay_ms`, so that one
    /// index commit (a new segment, its files, later merges) covers them too; and while writes
    /// keep coming it starts at most one pass per `commit_delay_ms` (a client writing one
    /// dataset after another, as `ckanapi load`'s workers do, has no other write in progress
    /// when its write commits, and got a commit of one or two datasets each, ~30 ms of the
    /// server's time apiece). A write after a quiet spell is indexed at once. The wait costs
    /// searches nothing: a search with writes pending runs a pass itself when none is running
    /// ([`SearchService::settle`]). Runs beside the app from its start (a server, a command,
    /// an embedding) and ends when the app is dropped: it holds the app only while a pass runs.
    pub fn spawn_follower(app: &AppState) -> tokio::task::JoinHandle<()> {
        let wake = service(app).wake.clone();
        let weak = Arc::downgrade(app);
        let delay = Duration::from_millis(app.config.catalog.search.commit_delay_ms);
        tokio::spawn(async move {
            let mut last_pass: Option<Instant> = None;
            loop {
                wake.notified().await;
                let Some(writers) = weak.upgrade().map(|a| a.store.writers_in_progress()) else {
                    return;
                };
                let wait = if writers > 0 {
                    delay
                } else {
                    last_pass.map_or(Duration::ZERO, |t| delay.saturating_sub(t.elapsed()))
                };
                if !wait.is_zero() {
                    tokio::time::sleep(wait).await;
                }
                last_pass = Some(Instant::now());
                let Some(app) = weak.upgrade() else {
                    return;
                };
                if let Err(e) = Self::sync(&app).await {
                    tracing::warn!(error = %e, "search index pass after writes failed; the outbox keeps them");
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            }
        })
    }

    /// One pass, with the sync lock held.
    async fn pass(app: &AppState, last_start: &mut Option<Instant>) -> anyhow::Result<usize> {
        let started = Instant::now();
        // Every write noted by now has committed: this pass reads its outbox rows.
        let covers = app.index_lag.committed();
        let result = if service(app).follows_feed() {
            Self::follow(app).await
        } else {
            Self::drain(app).await
        };
        if let Ok(datasets) = result {
            *last_start = Some(started);
            app.index_lag.applied_through(covers);
            tracing::debug!(
                datasets,
                ms = started.elapsed().as_secs_f64() * 1e3,
                "search index pass"
            );
        }
        result
    }

    /// Read-your-writes across nodes: waits (at most `limit`) until this node has applied
    /// every change up to `seq`, the number another node's write answered with. Every change
    /// that committed before the request arrived is applied by a pass that starts after it
    /// arrived, so one such pass is enough; concurrent waiters share it.
    pub async fn catch_up(app: &AppState, seq: i64, arrived: Instant, limit: Duration) {
        let svc = service(app);
        if !svc.follows_feed() || svc.watermark.load(Ordering::Acquire) >= seq {
            return;
        }
        let wait = async {
            let mut guard = svc.sync_lock.lock().await;
            if guard.is_some_and(|started| started >= arrived) {
                return;
            }
            if let Err(e) = Self::pass(app, &mut guard).await {
                tracing::warn!(error = %e, "search feed pass for a read-your-writes request failed");
            }
        };
        if tokio::time::timeout(limit, wait).await.is_err() {
            tracing::warn!(
                seq,
                "read-your-writes wait timed out; answering from the index as it is"
            );
        }
    }

    /// Applies the change feed after this node's position (a local index).
    ///
    /// One index commit per batch of up to [`BATCH`] rows, and the pass ends at the first
    /// batch that is not full: the rows that committed before the pass started are all in
    /// it, and what commits meanwhile is the next pass's (the writes wake the follower
    /// again). A pass that chased every new row instead committed the index for every few
    /// rows while writes kept coming, which cost more than the writes themselves.
    async fn follow(app: &AppState) -> anyhow::Result<usize> {
        let svc = service(app);
        let mut pos = svc.position.lock().expect("poisoned").clone();
        let mut total = 0;
        // The gaps first: rows of transactions that were still running at the last pass,
        // applied with the first batch.
        let mut ids = BTreeSet::new();
        let gaps: Vec<i64> = pos.gaps.keys().copied().collect();
        for chunk in gaps.chunks(BATCH as usize) {
            let list = chunk
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(",");
            let rows = sqlx::query(&format!(
                "SELECT seq, package_id FROM search_outbox WHERE seq IN ({list})"
            ))
            .fetch_all(&app.store.pool)
            .await?;
            for r in &rows {
                pos.saw(r.i("seq"));
                ids.insert(r.s("package_id"));
            }
        }
        loop {
            let rows = sqlx::query(
                "SELECT seq, package_id FROM search_outbox WHERE seq > $1 ORDER BY seq LIMIT $2",
            )
            .bind(pos.high)
            .bind(BATCH)
            .fetch_all(&app.store.pool)
            .await?;
            for r in &rows {
                pos.saw(r.i("seq"));
                ids.insert(r.s("package_id"));
            }
            if !ids.is_empty() {
                total += Self::apply_ids(app, &std::mem::take(&mut ids)).await?;
                svc.publish(&pos)?;
                *svc.position.lock().expect("poisoned") = pos.clone();
            }
            if rows.len() < BATCH as usize {
                break;
            }
        }
        let expired = pos.expire(GAP_TIMEOUT);
        if expired > 0 {
            tracing::info!(
                expired,
                "search feed: sequence numbers never committed, given up"
            );
        }
        if *svc.position.lock().expect("poisoned") != pos {
            svc.publish(&pos)?;
            *svc.position.lock().expect("poisoned") = pos;
        }
        Ok(total)
    }

    /// Indexes (or removes) datasets; a rebuild in progress replays them.
    async fn apply_ids(app: &AppState, ids: &BTreeSet<String>) -> anyhow::Result<usize> {
        let svc = service(app);
        // Before the documents are built, so that they are not built from the cache.
        app.package_cache.invalidate(ids);
        let started = Instant::now();
        let (upserts, deletes) = documents(app, ids).await?;
        let built = Instant::now();
        svc.backend.apply(upserts, deletes).await?;
        if let Some(dirty) = svc.rebuild_dirty.lock().expect("poisoned").as_mut() {
            dirty.extend(ids.iter().cloned());
        }
        tracing::debug!(
            datasets = ids.len(),
            build_ms = (built - started).as_secs_f64() * 1e3,
            apply_ms = built.elapsed().as_secs_f64() * 1e3,
            "search index batch"
        );
        Ok(ids.len())
    }

    /// Retention of the change feed: keeps the newest `catalog.search.feed_retention` rows
    /// and records how far it removed. Returns how many rows went.
    pub async fn collect_garbage(app: &AppState) -> anyhow::Result<u64> {
        let retention = app.config.catalog.search.feed_retention.max(1_000);
        let max: Option<i64> = sqlx::query_scalar("SELECT MAX(seq) FROM search_outbox")
            .fetch_one(&app.store.pool)
            .await?;
        let cut = max.unwrap_or(0) - retention;
        if cut <= 0 {
            return Ok(0);
        }
        let _w = app.store.lock_writes().await;
        let mut tx = app.store.pool.begin().await?;
        let deleted = sqlx::query("DELETE FROM search_outbox WHERE seq <= $1")
            .bind(cut)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        sqlx::query(
            "INSERT INTO search_feed_meta (name, value) VALUES ('gc_through', $1) \
             ON CONFLICT (name) DO UPDATE SET value = CASE WHEN excluded.value > search_feed_meta.value \
             THEN excluded.value ELSE search_feed_meta.value END",
        )
        .bind(cut)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(deleted)
    }

    /// Whether retention removed changes this node has not applied (it must rebuild).
    pub async fn fell_behind(app: &AppState) -> anyhow::Result<bool> {
        if !service(app).follows_feed() {
            return Ok(false);
        }
        let gc_through: Option<i64> =
            sqlx::query_scalar("SELECT value FROM search_feed_meta WHERE name = 'gc_through'")
                .fetch_optional(&app.store.pool)
                .await?;
        Ok(gc_through.is_some_and(|g| g > service(app).watermark.load(Ordering::Acquire)))
    }

    /// The newest feed sequence number in the store (0 when the feed is empty).
    pub async fn feed_head(app: &AppState) -> anyhow::Result<i64> {
        let max: Option<i64> = sqlx::query_scalar("SELECT MAX(seq) FROM search_outbox")
            .fetch_one(&app.store.pool)
            .await?;
        Ok(max.unwrap_or(0))
    }

    /// Rebuilds a following node's index from the store and follows the feed from its head
    /// at the start (changes during the rebuild are applied to the serving index and
    /// replayed into the new one).
    pub async fn rebuild_from_head(
        app: &AppState,
        progress: &(dyn Fn(usize, usize) + Send + Sync),
    ) -> anyhow::Result<RebuildReport> {
        if !service(app).follows_feed() {
            return Self::rebuild(app, progress).await;
        }
        let before = service(app).position.lock().expect("poisoned").clone();
        let head = Self::feed_head(app).await?;
        service(app).reset_position(head)?;
        let result = Self::rebuild(app, progress).await;
        if result.is_err() {
            // The old index serves on: it still needs what it had not applied.
            service(app).publish(&before)?;
            *service(app).position.lock().expect("poisoned") = before;
        }
        result
    }

    /// Drains the outbox into a shared index: applied rows are deleted. Ends at the first
    /// batch that is not full, as [`SearchService::follow`] does.
    async fn drain(app: &AppState) -> anyhow::Result<usize> {
        let svc = service(app);
        let mut total = 0;
        loop {
            let rows =
                sqlx::query("SELECT seq, package_id FROM search_outbox ORDER BY seq LIMIT $1")
                    .bind(BATCH)
                    .fetch_all(&app.store.pool)
                    .await?;
            if rows.is_empty() {
                return Ok(total);
            }
            let seqs: Vec<String> = rows.iter().map(|r| r.i("seq").to_string()).collect();
            let ids: BTreeSet<String> = rows.iter().map(|r| r.s("package_id")).collect();
            // Before the documents are built, so that they are not built from the cache.
            app.package_cache.invalidate(&ids);
            let (upserts, deletes) = documents(app, &ids).await?;
            total += ids.len();
            svc.backend.apply(upserts, deletes).await?;
            if let Some(dirty) = svc.rebuild_dirty.lock().expect("poisoned").as_mut() {
                dirty.extend(ids.iter().cloned());
            }
            // Exactly the rows read: on PostgreSQL a lower seq may still commit later.
            let _w = app.store.lock_writes().await;
            sqlx::query(&format!(
                "DELETE FROM search_outbox WHERE seq IN ({})",
                seqs.join(",")
            ))
            .execute(&app.store.pool)
            .await?;
            // As in `follow`: the rows committed before the pass are in; the rest is the
            // next pass's.
            if rows.len() < BATCH as usize {
                return Ok(total);
            }
        }
    }

    /// Rebuilds the whole index into a fresh one, swapped in at the end; the old index serves
    /// meanwhile. Datasets that fail are skipped and reported. `progress(done, total)`.
    pub async fn rebuild(
        app: &AppState,
        progress: &(dyn Fn(usize, usize) + Send + Sync),
    ) -> anyhow::Result<RebuildReport> {
        let svc = service(app);
        *svc.rebuild_dirty.lock().expect("poisoned") = Some(HashSet::new());
        let result = Self::rebuild_inner(app, progress).await;
        *svc.rebuild_dirty.lock().expect("poisoned") = None;
        result
    }

    async fn rebuild_inner(
        app: &AppState,
        progress: &(dyn Fn(usize, usize) + Send + Sync),
    ) -> anyhow::Result<RebuildReport> {
        let svc = service(app);
        // A store just restored or bulk-loaded (pg_restore, COPY) has no planner statistics
        // yet: without them the batched document query reads whole tables for every batch.
        match app.store.analyze_changed_tables().await {
            Ok(tables) if !tables.is_empty() => {
                tracing::info!(?tables, "planner statistics refreshed before the rebuild");
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "refreshing planner statistics failed"),
        }
        let ids: Vec<String> = sqlx::query("SELECT id FROM package ORDER BY id")
            .fetch_all(&app.store.pool)
            .await?
            .iter()
            .map(|r| r.s("id"))
            .collect();
        let mut report = RebuildReport::default();
        let mut target = svc.backend.rebuild().await?;
        progress(0, ids.len());
        for chunk in ids.chunks(BATCH as usize) {
            let set: BTreeSet<String> = chunk.iter().cloned().collect();
            let (docs, failed) = documents_lenient(app, &set).await;
            report.indexed += docs.len();
            report.failed.extend(failed);
            target.add(docs).await?;
            progress(report.indexed + report.failed.len(), ids.len());
        }
        target.flush().await?;
        // Replay what changed meanwhile, then swap, with the drain held off so nothing slips
        // between the replay and the swap.
        let _guard = svc.sync_lock.lock().await;
        let dirty: BTreeSet<String> = svc
            .rebuild_dirty
            .lock()
            .expect("poisoned")
            .take()
            .unwrap_or_default()
            .into_iter()
            .collect();
        if !dirty.is_empty() {
            let (docs, deletes) = documents(app, &dirty).await?;
            target.replace(docs).await?;
            target.delete(deletes).await?;
        }
        target.finish().await?;
        Ok(report)
    }

    /// Compares the index with the store.
    pub async fn check(app: &AppState) -> anyhow::Result<CheckReport> {
        let remove_deleted = app.config.catalog.search.remove_deleted_packages;
        let rows = sqlx::query("SELECT id, state, metadata_modified FROM package")
            .fetch_all(&app.store.pool)
            .await?;
        let indexed: std::collections::HashMap<String, String> =
            service(app).backend.indexed().await?.into_iter().collect();
        let mut report = CheckReport::default();
        let mut expected = HashSet::new();
        for r in &rows {
            let id = r.s("id");
            if remove_deleted && r.s("state") == "deleted" {
                continue;
            }
            report.checked += 1;
            match indexed.get(&id) {
                None => report.missing.push(id.clone()),
                Some(m) if *m != r.s("metadata_modified") => report.stale.push(id.clone()),
                Some(_) => {}
            }
            expected.insert(id);
        }
        report.extra = indexed
            .keys()
            .filter(|id| !expected.contains(*id))
            .cloned()
            .collect();
        report.missing.sort();
        report.stale.sort();
        report.extra.sort();
        Ok(report)
    }
}

/// The index documents of `ids`, and the ids to remove (purged, or deleted when deleted
/// datasets are not kept). Any failure fails the batch: the outbox keeps it for a retry.
async fn documents(
    app: &AppState,
    ids: &BTreeSet<String>,
) -> anyhow::Result<(Vec<IndexDocument>, Vec<String>)> {
    let mut upserts = Vec::new();
    let mut deletes = Vec::new();
    let mut vocabularies = None;
    let mut bundles = bundles_of(app, ids).await?;
    for id in ids {
        match document_of(app, id, bundles.remove(id), &mut vocabularies).await? {
            Some(doc) => upserts.push(doc),
            None => deletes.push(id.clone()),
        }
    }
    Ok((upserts, deletes))
}

/// The stored datasets of `ids` with their organizations and groups, read in one statement
/// per 500 ids, by id.
async fn bundles_of(
    app: &AppState,
    ids: &BTreeSet<String>,
) -> anyhow::Result<HashMap<String, Arc<PackageBundle>>> {
    let ids: Vec<String> = ids.iter().cloned().collect();
    let mut conn = app.store.pool.acquire().await?;
    Ok(
        catalog_framework::store::package_bundles_by_ids(&mut conn, &ids)
            .await?
            .into_iter()
            .map(|b| (b.row.id.clone(), Arc::new(b)))
            .collect(),
    )
}

/// Like [`documents`] for a rebuild: a failing dataset is reported and skipped.
async fn documents_lenient(
    app: &AppState,
    ids: &BTreeSet<String>,
) -> (Vec<IndexDocument>, Vec<(String, String)>) {
    use futures::stream::{self, StreamExt};
    let mut bundles = match bundles_of(app, ids).await {
        Ok(b) => b,
        Err(e) => {
            let e = e.to_string();
            return (
                Vec::new(),
                ids.iter().map(|id| (id.clone(), e.clone())).collect(),
            );
        }
    };
    // Several datasets at a time: the dictization of one may still read the store (a
    // plugin's additions), and on SQLite each query is a hand-off to the connection's thread.
    let work: Vec<(String, Option<Arc<PackageBundle>>)> = ids
        .iter()
        .map(|id| (id.clone(), bundles.remove(id)))
        .collect();
    let results: Vec<(String, anyhow::Result<Option<IndexDocument>>)> = stream::iter(work)
        .map(|(id, bundle)| {
            let app = app.clone();
            async move {
                let doc = document_of(&app, &id, bundle, &mut None).await;
                (id, doc)
            }
        })
        .buffered(REBUILD_CONCURRENCY)
        .collect()
        .await;
    let mut docs = Vec::with_capacity(results.len());
    let mut failed = Vec::new();
    for (id, r) in results {
        match r {
            Ok(Some(doc)) => docs.push(doc),
            Ok(None) => {}
            Err(e) => failed.push((id, e.to_string())),
        }
    }
    (docs, failed)
}

/// Drains the outbox every few seconds: picks up changes made by other processes (the CLI,
/// other API nodes) and retries after a failed sync.
pub fn spawn_background_sync(app: AppState) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        // A following node polls the feed four times a second (an indexed range read of
        // nothing, most of the time), so other nodes' writes show within a second.
        let every = if service(&app).follows_feed() {
            Duration::from_millis(250)
        } else {
            Duration::from_secs(2)
        };
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_slow = Instant::now();
        let mut last_gc = Instant::now();
        let mut rebuilding: Option<tokio::task::JoinHandle<()>> = None;
        let gc_every = Duration::from_secs(app.config.catalog.search.feed_gc_interval_secs.max(1));
        loop {
            tick.tick().await;
            if let Err(e) = SearchService::sync(&app).await {
                tracing::warn!(error = %e, "background search index sync failed");
            }
            if last_gc.elapsed() >= gc_every {
                last_gc = Instant::now();
                match SearchService::collect_garbage(&app).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(rows = n, "search feed retention removed old changes"),
                    Err(e) => tracing::warn!(error = %e, "search feed retention failed"),
                }
                match SearchService::fell_behind(&app).await {
                    Ok(false) => {}
                    // In a task of its own, so that the feed keeps being applied to the
                    // serving index (and replayed into the new one) while it runs.
                    Ok(true) if rebuilding.as_ref().is_none_or(|t| t.is_finished()) => {
                        tracing::warn!("this node missed changes removed by the feed's retention: rebuilding its search index");
                        let app = app.clone();
                        rebuilding = Some(tokio::spawn(async move {
                            if let Err(e) = SearchService::rebuild_from_head(&app, &|_, _| {}).await
                            {
                                tracing::error!(error = %e, "search index rebuild failed");
                            }
                        }));
                    }
                    Ok(true) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "checking the search feed position failed")
                    }
                }
            }
            if last_slow.elapsed() < Duration::from_secs(2) {
                continue;
            }
            last_slow = Instant::now();
            // Site settings another node changed at run time.
            match app.store.pool.acquire().await {
                Ok(mut conn) => {
                    if let Err(e) = app.runtime.refresh(&mut conn).await {
                        tracing::warn!(error = %e, "reloading the runtime configuration failed");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "reloading the runtime configuration failed"),
            }
        }
    })
}

/// The index document of dataset `id` from its stored bundle (`None`: not in the store), with
/// the vocabulary names (id → name) read once for a batch of documents: `vocabularies` is
/// filled at the first dataset that has a vocabulary tag.
async fn document_of(
    app: &AppState,
    id: &str,
    bundle: Option<Arc<PackageBundle>>,
    vocabularies: &mut Option<HashMap<String, String>>,
) -> anyhow::Result<Option<IndexDocument>> {
    let Some(bundle) = bundle else {
        return Ok(None);
    };
    let row = &bundle.row;
    if row.state == "deleted" && app.config.catalog.search.remove_deleted_packages {
        return Ok(None);
    }
    let mut ctx = ActionContext::new(app.clone(), None);
    ctx.ignore_auth = true;
    ctx.fill_caches = false;
    // package_show below reads the dataset from this bundle, not from the store.
    ctx.remember_bundle(bundle.clone());
    let mut params = serde_json::Map::new();
    params.insert("id".into(), json!(id));
    let dict: Value = ctx
        .call("package_show", params)
        .await
        .map_err(|e| anyhow::anyhow!("package_show {id}: {e:?}"))?;
    let labels = dataset_labels(row, app.config.catalog.auth.allow_dataset_collaborators);
    let has_vocabulary_tags = dict["tags"].as_array().is_some_and(|tags| {
        tags.iter()
            .any(|t| t["vocabulary_id"].as_str().is_some_and(|v| !v.is_empty()))
    });
    if has_vocabulary_tags && vocabularies.is_none() {
        let conn = ctx
            .db()
            .await
            .map_err(|e| anyhow::anyhow!("reading vocabularies: {e:?}"))?;
        let names = catalog_framework::store::vocabularies(conn)
            .await?
            .into_iter()
            .map(|v| (v.id, v.name))
            .collect();
        *vocabularies = Some(names);
    }
    let empty = HashMap::new();
    Ok(Some(IndexDocument::from_package_with_vocabularies(
        &dict,
        &labels,
        &app.config.catalog.site_id,
        &app.config.catalog.extra_resource_fields,
        vocabularies.as_ref().unwrap_or(&empty),
    )))
}
