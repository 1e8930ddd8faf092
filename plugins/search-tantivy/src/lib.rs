//! The embedded search backend: a tantivy index in `<data dir>/search/tantivy/`.
//!
//! Layout of a document:
//! - `id`, `data` (the stored `package_show` dict), `mm_raw` (`metadata_modified` as stored);
//! - `s`, `t`, `g`: JSON objects holding CKAN's string fields (raw, exact, fast for facets),
//!   text fields (English analysis with stemming) and text_general fields (no stemming);
//! - `d`: JSON object of the dynamic date fields (`*_date`);
//! - `metadata_modified`, `metadata_created`: dates at microsecond precision, for ranges and
//!   sorting; `o`: a JSON object of every sortable string field, always present;
//! - `present`: the names of the fields a document has (`field:*`).
//!
//! Each index lives in a generation directory named by the `CURRENT` file, so a rebuild writes
//! a new generation while the old one serves and swaps by rewriting `CURRENT`.
//!
//! # Where things live
//!
//! - `lib.rs`: the backend, its factory and the rebuild.
//! - `schema.rs`: the document layout above, CKAN's two analyses and a dataset's document.
//! - `generation.rs`: one generation with its reader, writer and merge policy, and the
//!   `CURRENT` file.
//! - `search.rs`: answering a request on a generation (query and filters, page, facets);
//!   `query.rs`: the framework's query as tantivy's.
//! - `compact.rs`: the top-k of score and date sorts; `facets.rs`: counting the string facets;
//!   `cache.rs`: the answers of recent searches.
//! - `tests.rs`: the backend's tests.
#![forbid(unsafe_code)]

mod cache;
mod compact;
mod facets;
mod generation;
mod query;
mod schema;
mod search;

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use catalog_framework::plugin::SearchBackendPlugin;
use catalog_framework::prelude::*;
use catalog_framework::register_search_backend;
use catalog_framework::search::{
    IndexDocument, IndexRebuild, SearchBackend, SearchBackendFactory, SearchBackendInit,
    SearchHits, SearchRequest,
};

use generation::{
    merge_policy, new_generation_name, read_current, remove_stale_generations, write_current,
    Generation,
};
use search::search_blocking;

register_plugin!(SearchBackendPlugin {
    name: "search_tantivy",
    backend: "tantivy",
});
register_search_backend!("tantivy", TantivyFactory);

/// Memory of the writer that applies live changes.
const LIVE_WRITER_BYTES: usize = 50_000_000;
/// Memory of a rebuild's writer. 64 MB indexes as fast as 150 MB did and holds less (the
/// writer holds about twice its budget while it writes a segment); with merges of 4 segments
/// the index ends in as few segments, so searches are as fast (docs/BENCHMARKS.md).
const REBUILD_WRITER_BYTES: usize = 64_000_000;
/// Indexing threads of a rebuild's writer. One thread with the whole budget writes segments
/// twice as large as two threads would, so each document is merged about once less; the
/// store's reader and the merges keep the other core busy (docs/BENCHMARKS.md).
const REBUILD_THREADS: usize = 1;

/// Opens the tantivy backend for `catalog.search.backend = "tantivy"`.
pub struct TantivyFactory;

#[async_trait]
impl SearchBackendFactory for TantivyFactory {
    async fn open(&self, init: SearchBackendInit) -> anyhow::Result<Arc<dyn SearchBackend>> {
        let root = init.data_dir.join("search").join("tantivy");
        let backend = tokio::task::spawn_blocking(move || TantivyBackend::open(&root)).await??;
        Ok(Arc::new(backend))
    }
}

/// The tantivy search backend.
pub struct TantivyBackend {
    root: PathBuf,
    current: Arc<RwLock<Arc<Generation>>>,
}

impl TantivyBackend {
    /// Opens the current generation, or starts an empty one. An index written with another
    /// schema is set aside for an empty one, which the start-up rebuild then fills.
    pub fn open(root: &Path) -> anyhow::Result<TantivyBackend> {
        std::fs::create_dir_all(root)?;
        let name = read_current(root).unwrap_or_else(new_generation_name);
        let generation = match Generation::open(root, &name, LIVE_WRITER_BYTES, 1) {
            Ok(g) => g,
            Err(e) => {
                let fresh = new_generation_name();
                tracing::warn!(error = %e, old = %name, new = %fresh, "search index unusable; starting an empty one");
                Generation::open(root, &fresh, LIVE_WRITER_BYTES, 1)?
            }
        };
        if generation.writable() {
            write_current(root, &generation.name)?;
            remove_stale_generations(root, &generation.name);
        }
        Ok(TantivyBackend {
            root: root.to_path_buf(),
            current: Arc::new(RwLock::new(Arc::new(generation))),
        })
    }

    fn current(&self) -> Arc<Generation> {
        self.current.read().expect("poisoned").clone()
    }
}

#[async_trait]
impl SearchBackend for TantivyBackend {
    fn writable(&self) -> bool {
        self.current().writable()
    }

    async fn apply(&self, upserts: Vec<IndexDocument>, deletes: Vec<String>) -> anyhow::Result<()> {
        let gen = self.current();
        tokio::task::spawn_blocking(move || {
            gen.delete(&deletes)?;
            gen.add(&upserts)?;
            gen.commit()
        })
        .await?
    }

    async fn search(&self, req: &SearchRequest) -> CkanResult<SearchHits> {
        // Searches are short and CPU-bound: run them on the blocking pool so slow ones
        // (deep pages, unlimited facets) don't stall the request handlers.
        let gen = self.current();
        let req = req.clone();
        tokio::task::spawn_blocking(move || search_blocking(&gen, &req))
            .await
            .map_err(|e| internal(format!("search task: {e}")))?
    }

    async fn indexed(&self) -> anyhow::Result<Vec<(String, String)>> {
        let gen = self.current();
        tokio::task::spawn_blocking(move || {
            let searcher = gen.reader.searcher();
            let mut out = Vec::new();
            for seg in searcher.segment_readers() {
                let ff = seg.fast_fields();
                let (Some(ids), Some(mms)) = (ff.str("id")?, ff.str("mm_raw")?) else {
                    continue;
                };
                let alive = seg.alive_bitset();
                for doc in 0..seg.max_doc() {
                    if alive.is_some_and(|a| !a.is_alive(doc)) {
                        continue;
                    }
                    let mut id = String::new();
                    let mut mm = String::new();
                    if let Some(o) = ids.term_ords(doc).next() {
                        ids.ord_to_str(o, &mut id)?;
                    }
                    if let Some(o) = mms.term_ords(doc).next() {
                        mms.ord_to_str(o, &mut mm)?;
                    }
                    out.push((id, mm));
                }
            }
            Ok(out)
        })
        .await?
    }

    async fn rebuild(&self) -> anyhow::Result<Box<dyn IndexRebuild>> {
        // A rebuild swaps generations under a running server only from inside that server.
        drop(self.current().writer()?);
        let root = self.root.clone();
        let gen = tokio::task::spawn_blocking(move || {
            let gen = Generation::open(
                &root,
                &new_generation_name(),
                REBUILD_WRITER_BYTES,
                REBUILD_THREADS,
            )?;
            // Merges of 4 segments instead of 8: with the small writer budget a rebuild would
            // otherwise leave twice as many segments, and a search visits each.
            gen.writer()?.set_merge_policy(Box::new(merge_policy(4)));
            anyhow::Ok(gen)
        })
        .await??;
        Ok(Box::new(Rebuild {
            root: self.root.clone(),
            gen: Arc::new(gen),
            current: self.current.clone(),
        }))
    }
}

/// A rebuild writing a new generation beside the serving one.
struct Rebuild {
    root: PathBuf,
    gen: Arc<Generation>,
    current: Arc<RwLock<Arc<Generation>>>,
}

#[async_trait]
impl IndexRebuild for Rebuild {
    async fn add(&mut self, docs: Vec<IndexDocument>) -> anyhow::Result<()> {
        let gen = self.gen.clone();
        tokio::task::spawn_blocking(move || gen.add_new(&docs)).await?
    }

    async fn replace(&mut self, docs: Vec<IndexDocument>) -> anyhow::Result<()> {
        let gen = self.gen.clone();
        tokio::task::spawn_blocking(move || gen.add(&docs)).await?
    }

    async fn flush(&mut self) -> anyhow::Result<()> {
        let gen = self.gen.clone();
        tokio::task::spawn_blocking(move || {
            gen.commit()?;
            gen.live_merges()
        })
        .await?
    }

    async fn delete(&mut self, ids: Vec<String>) -> anyhow::Result<()> {
        self.gen.delete(&ids)
    }

    async fn finish(self: Box<Self>) -> anyhow::Result<()> {
        let gen = self.gen.clone();
        tokio::task::spawn_blocking(move || gen.commit()).await??;
        write_current(&self.root, &self.gen.name)?;
        let old = std::mem::replace(
            &mut *self.current.write().expect("poisoned"),
            self.gen.clone(),
        );
        let old_dir = self.root.join(&old.name);
        drop(old);
        // Searches still holding the old generation keep their mmaps; the files go when they end.
        if let Err(e) = std::fs::remove_dir_all(&old_dir) {
            tracing::warn!(dir = %old_dir.display(), error = %e, "could not remove the old index generation");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
