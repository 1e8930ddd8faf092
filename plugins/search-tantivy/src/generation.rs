//! One index generation (a directory named by `CURRENT`) with its reader and writer, the
//! merge policy, and the `CURRENT` file.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use catalog_framework::search::IndexDocument;
use tantivy::directory::MmapDirectory;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, Term};

use crate::cache::ResultCache;
use crate::facets::UninvertedColumns;
use crate::schema::{en_analyzer, general_analyzer, schema, to_doc, Fields, EN, GENERAL};

/// One index generation: the index, its reader and its writer.
pub(crate) struct Generation {
    pub(crate) name: String,
    /// The directory holding the generations (where `CURRENT` is).
    root: PathBuf,
    index: Index,
    pub(crate) reader: IndexReader,
    /// The writer's memory and threads.
    writer_bytes: usize,
    threads: usize,
    /// `None` while another process (a running server) holds the index's writer lock: this
    /// process may search but not write. Taken at the first write after that process lets it
    /// go (a server restarted before the old one has exited takes over the index then).
    writer: Mutex<Option<IndexWriter>>,
    /// Set when the process that held the writer swapped in another generation: this one is
    /// not written to again.
    replaced: std::sync::atomic::AtomicBool,
    pub(crate) f: Fields,
    /// Answers of recent searches on this generation's current reader.
    pub(crate) answers: ResultCache,
    /// The large segments' facet columns, decoded for counting.
    pub(crate) uninverted: Arc<UninvertedColumns>,
}

impl Generation {
    pub(crate) fn open(
        root: &Path,
        name: &str,
        writer_bytes: usize,
        threads: usize,
    ) -> anyhow::Result<Generation> {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir)?;
        let (schema, f) = schema();
        let mut index = Index::open_or_create(MmapDirectory::open(&dir)?, schema)?;
        // A search collects its segments on up to this many threads: a lone query uses every
        // core (under load the queries themselves keep the cores busy).
        index.set_multithread_executor(search_threads())?;
        index.tokenizers().register(EN, en_analyzer());
        index.tokenizers().register(GENERAL, general_analyzer());
        let writer = take_writer(&index, threads, writer_bytes)?;
        if writer.is_none() {
            // A command beside a running server, or a server restarted before the old
            // process exited (which waits for it): the host says which.
            tracing::info!(dir = %dir.display(), "the search index is locked by another process (a running server?): opened for reading");
        }
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Generation {
            name: name.to_string(),
            root: root.to_path_buf(),
            index,
            reader,
            writer_bytes,
            threads,
            writer: Mutex::new(writer),
            replaced: Default::default(),
            f,
            answers: Default::default(),
            uninverted: Default::default(),
        })
    }

    /// The writer, taken now if another process held it until now.
    pub(crate) fn writer(&self) -> anyhow::Result<WriterGuard<'_>> {
        let mut w = self.writer.lock().expect("writer poisoned");
        if w.is_none() {
            *w = self.take_released_writer()?;
        }
        if w.is_none() {
            anyhow::bail!(
                "the search index {} is locked by another process (a running `catalog serve`): \
                 stop it, or rebuild through the server with the search_index_rebuild action",
                self.name
            );
        }
        Ok(WriterGuard(w))
    }

    /// The writer of a generation opened read-only, if the process that held it has let it go
    /// and this generation is still the current one (that process may have swapped in a
    /// rebuilt generation before it exited: this one is then stale, and only a restart opens
    /// the new one).
    fn take_released_writer(&self) -> anyhow::Result<Option<IndexWriter>> {
        use std::sync::atomic::Ordering;
        if self.replaced.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let Some(w) = take_writer(&self.index, self.threads, self.writer_bytes)? else {
            return Ok(None);
        };
        if read_current(&self.root).as_deref() != Some(self.name.as_str()) {
            self.replaced.store(true, Ordering::Relaxed);
            tracing::warn!(
                generation = %self.name,
                "the search index was replaced by the process that held it; restart to open the new one"
            );
            return Ok(None);
        }
        tracing::info!(generation = %self.name, "took over the search index from the process that held it");
        self.reader.reload()?;
        Ok(Some(w))
    }

    /// Whether this process holds (or can now take) the writer.
    pub(crate) fn writable(&self) -> bool {
        self.writer().is_ok()
    }

    /// Adds documents, replacing those of the same ids.
    pub(crate) fn add(&self, docs: &[IndexDocument]) -> anyhow::Result<()> {
        let w = self.writer()?;
        for d in docs {
            w.delete_term(Term::from_field_text(self.f.id, &d.id));
            w.add_document(to_doc(&self.f, d))?;
        }
        Ok(())
    }

    /// Adds documents whose ids are not in the index (a rebuild's first pass): no deletion is
    /// queued for them (each queued deletion holds a query until the commit).
    pub(crate) fn add_new(&self, docs: &[IndexDocument]) -> anyhow::Result<()> {
        let w = self.writer()?;
        for d in docs {
            w.add_document(to_doc(&self.f, d))?;
        }
        Ok(())
    }

    pub(crate) fn delete(&self, ids: &[String]) -> anyhow::Result<()> {
        let w = self.writer()?;
        for id in ids {
            w.delete_term(Term::from_field_text(self.f.id, id));
        }
        Ok(())
    }

    pub(crate) fn commit(&self) -> anyhow::Result<()> {
        let started = std::time::Instant::now();
        self.writer()?.commit()?;
        let committed = std::time::Instant::now();
        self.reader.reload()?;
        tracing::debug!(
            commit_ms = (committed - started).as_secs_f64() * 1e3,
            reload_ms = committed.elapsed().as_secs_f64() * 1e3,
            segments = self.reader.searcher().segment_readers().len(),
            "search index commit"
        );
        Ok(())
    }

    /// Lets the writer merge as a live index's does (a rebuild merges 4 segments at a time,
    /// not 8).
    pub(crate) fn live_merges(&self) -> anyhow::Result<()> {
        self.writer()?.set_merge_policy(Box::new(merge_policy(8)));
        Ok(())
    }
}

/// The index's writer with the live merge policy; `None` when another process holds its lock.
fn take_writer(
    index: &Index,
    threads: usize,
    writer_bytes: usize,
) -> anyhow::Result<Option<IndexWriter>> {
    match index.writer_with_num_threads(threads, writer_bytes) {
        Ok(w) => {
            w.set_merge_policy(Box::new(merge_policy(8)));
            Ok(Some(w))
        }
        Err(tantivy::TantivyError::LockFailure(..)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// A held writer (the lock of [`Generation::writer`], which holds one).
pub(crate) struct WriterGuard<'a>(std::sync::MutexGuard<'a, Option<IndexWriter>>);

impl std::ops::Deref for WriterGuard<'_> {
    type Target = IndexWriter;
    fn deref(&self) -> &IndexWriter {
        self.0.as_ref().expect("a guard holds a writer")
    }
}

impl std::ops::DerefMut for WriterGuard<'_> {
    fn deref_mut(&mut self) -> &mut IndexWriter {
        self.0.as_mut().expect("a guard holds a writer")
    }
}

/// Segments with more documents than this are not merged further, in a rebuild or live.
/// Merging the large segments of a big index is what made a rebuild at 1,000,000 datasets slow
/// and its memory peak (the merged segments' files mapped at once: 1.2 GiB); capped, the
/// rebuild ran 1.5x faster with a 489 MiB peak, and searches over the 17 segments it leaves
/// (11 of ~87k) were as fast as over 14 with two of ~347k (docs/BENCHMARKS.md). The server's
/// own merges stay as small.
pub(crate) const MERGE_MAX_DOCS: usize = 50_000;

/// Segments with fewer documents than this are all of one size for the merge policy, so a
/// merge of small segments rewrites at most about this many documents. Tantivy's default,
/// 10,000, made the server's merges grow with the catalog: its index commits every few
/// writes, so during a bulk load every eighth commit merged the newest segments into the
/// largest one under 10,000 documents, rewriting it again and again (the merge thread was 41 %
/// of the server's CPU in a `ckanapi load`, and the load slowed as the catalog grew). With a
/// small floor, segments grow by merges of a size, each document rewritten a few times.
const MERGE_MIN_LAYER_DOCS: u32 = 200;

/// The log merge policy, merging `segments` segments of a size at a time, from
/// [`MERGE_MIN_LAYER_DOCS`] up to [`MERGE_MAX_DOCS`].
pub(crate) fn merge_policy(segments: usize) -> tantivy::indexer::LogMergePolicy {
    let mut p = tantivy::indexer::LogMergePolicy::default();
    p.set_min_num_segments(segments);
    p.set_min_layer_size(MERGE_MIN_LAYER_DOCS);
    p.set_max_docs_before_merge(MERGE_MAX_DOCS);
    p
}

/// Threads a search collects segments on: the machine's cores, at most 4.
fn search_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

/// The generation `CURRENT` names, if any.
pub(crate) fn read_current(root: &Path) -> Option<String> {
    std::fs::read_to_string(root.join("CURRENT"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Names `name` the current generation (written aside, then renamed over `CURRENT`).
pub(crate) fn write_current(root: &Path, name: &str) -> anyhow::Result<()> {
    let tmp = root.join("CURRENT.tmp");
    std::fs::write(&tmp, name)?;
    std::fs::rename(tmp, root.join("CURRENT"))?;
    Ok(())
}

/// A new generation's directory name, from the time.
pub(crate) fn new_generation_name() -> String {
    format!("gen-{}", chrono::Utc::now().format("%Y%m%dT%H%M%S%.6f"))
}

/// Removes the generation directories other than `keep`.
pub(crate) fn remove_stale_generations(root: &Path, keep: &str) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with("gen-") && name != keep && e.path().is_dir() {
            if let Err(err) = std::fs::remove_dir_all(e.path()) {
                tracing::warn!(dir = %name, error = %err, "could not remove an old index generation");
            }
        }
    }
}
