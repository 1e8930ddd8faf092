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
#![forbid(unsafe_code)]

mod cache;
mod compact;
mod facets;
mod query;

use facets::{FacetCollector, FacetFruit};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use catalog_framework::error::search_error;
use catalog_framework::plugin::SearchBackendPlugin;
use catalog_framework::prelude::*;
use catalog_framework::register_search_backend;
use catalog_framework::search::fields::{kind, FieldKind, SORTABLE};
use catalog_framework::search::{
    IndexDocument, IndexRebuild, SearchBackend, SearchBackendFactory, SearchBackendInit,
    SearchHits, SearchRequest, SortField,
};
use tantivy::aggregation::agg_req::Aggregations;
use tantivy::aggregation::agg_result::AggregationResults;
use tantivy::aggregation::{AggContextParams, AggregationCollector, AggregationLimitsGuard};
use tantivy::collector::sort_key::SortByErasedType;
use tantivy::collector::{Count, TopDocs};
use tantivy::directory::MmapDirectory;
use tantivy::query::{BooleanQuery, Occur};
use tantivy::schema::{
    DateOptions, DateTimePrecision, Field, IndexRecordOption, JsonObjectOptions, OwnedValue,
    Schema, TextFieldIndexing, TextOptions, Value as _, FAST, STORED, STRING,
};
use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer,
    TextAnalyzer,
};
use tantivy::{
    DateTime, Index, IndexReader, IndexWriter, Order, ReloadPolicy, TantivyDocument, Term,
};

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

/// The fields of the schema.
#[derive(Clone, Copy)]
pub(crate) struct Fields {
    pub id: Field,
    pub data: Field,
    pub mm_raw: Field,
    pub s: Field,
    pub t: Field,
    pub g: Field,
    pub d: Field,
    pub o: Field,
    pub present: Field,
    pub modified: Field,
    pub created: Field,
}

pub(crate) const EN: &str = "catalog_en";
pub(crate) const GENERAL: &str = "catalog_general";

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text_json = |tokenizer: &str| {
        JsonObjectOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(tokenizer)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
    };
    let date = DateOptions::default()
        .set_indexed()
        .set_fast()
        .set_precision(DateTimePrecision::Microseconds);
    let f = Fields {
        id: b.add_text_field("id", STRING | STORED | FAST),
        data: b.add_text_field("data", TextOptions::default().set_stored()),
        mm_raw: b.add_text_field("mm_raw", TextOptions::default().set_fast("raw")),
        s: b.add_json_field(
            "s",
            JsonObjectOptions::default()
                .set_indexing_options(
                    TextFieldIndexing::default()
                        .set_tokenizer("raw")
                        .set_index_option(IndexRecordOption::Basic),
                )
                .set_fast("raw"),
        ),
        t: b.add_json_field("t", text_json(EN)),
        g: b.add_json_field("g", text_json(GENERAL)),
        d: b.add_json_field(
            "d",
            JsonObjectOptions::default()
                .set_indexing_options(TextFieldIndexing::default())
                .set_fast("raw"),
        ),
        o: b.add_json_field("o", JsonObjectOptions::default().set_fast("raw")),
        present: b.add_text_field("present", STRING),
        modified: b.add_date_field("metadata_modified", date.clone()),
        created: b.add_date_field("metadata_created", date),
    };
    (b.build(), f)
}

/// CKAN's `text` analysis (less word-delimiter splitting and synonyms).
pub(crate) fn en_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(100))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .filter(Stemmer::new(Language::English))
        .build()
}

/// CKAN's `text_general` analysis.
pub(crate) fn general_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(100))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .build()
}

/// One index generation: the index, its reader and its writer.
struct Generation {
    name: String,
    /// The directory holding the generations (where `CURRENT` is).
    root: PathBuf,
    index: Index,
    reader: IndexReader,
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
    f: Fields,
    /// Answers of recent searches on this generation's current reader.
    answers: cache::ResultCache,
    /// The large segments' facet columns, decoded for counting.
    uninverted: Arc<facets::UninvertedColumns>,
}

impl Generation {
    fn open(
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
    fn writer(&self) -> anyhow::Result<WriterGuard<'_>> {
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
    fn writable(&self) -> bool {
        self.writer().is_ok()
    }

    /// Adds documents, replacing those of the same ids.
    fn add(&self, docs: &[IndexDocument]) -> anyhow::Result<()> {
        let w = self.writer()?;
        for d in docs {
            w.delete_term(Term::from_field_text(self.f.id, &d.id));
            w.add_document(to_doc(&self.f, d))?;
        }
        Ok(())
    }

    /// Adds documents whose ids are not in the index (a rebuild's first pass): no deletion is
    /// queued for them (each queued deletion holds a query until the commit).
    fn add_new(&self, docs: &[IndexDocument]) -> anyhow::Result<()> {
        let w = self.writer()?;
        for d in docs {
            w.add_document(to_doc(&self.f, d))?;
        }
        Ok(())
    }

    fn delete(&self, ids: &[String]) -> anyhow::Result<()> {
        let w = self.writer()?;
        for id in ids {
            w.delete_term(Term::from_field_text(self.f.id, id));
        }
        Ok(())
    }

    fn commit(&self) -> anyhow::Result<()> {
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
    fn live_merges(&self) -> anyhow::Result<()> {
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
struct WriterGuard<'a>(std::sync::MutexGuard<'a, Option<IndexWriter>>);

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
const MERGE_MAX_DOCS: usize = 50_000;

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
fn merge_policy(segments: usize) -> tantivy::indexer::LogMergePolicy {
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

/// The tantivy search backend.
pub struct TantivyBackend {
    root: PathBuf,
    current: Arc<RwLock<Arc<Generation>>>,
}

fn read_current(root: &Path) -> Option<String> {
    std::fs::read_to_string(root.join("CURRENT"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn write_current(root: &Path, name: &str) -> anyhow::Result<()> {
    let tmp = root.join("CURRENT.tmp");
    std::fs::write(&tmp, name)?;
    std::fs::rename(tmp, root.join("CURRENT"))?;
    Ok(())
}

fn new_generation_name() -> String {
    format!("gen-{}", chrono::Utc::now().format("%Y%m%dT%H%M%S%.6f"))
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

fn search_blocking(gen: &Generation, req: &SearchRequest) -> CkanResult<SearchHits> {
    let searcher = gen.reader.searcher();
    let generation = searcher.generation().generation_id();
    let key = format!("{req:?}");
    if let Some(hits) = gen.answers.get(generation, &key) {
        return Ok(hits);
    }
    let hits = search_uncached(gen, &searcher, req)?;
    gen.answers.put(generation, key, &hits);
    Ok(hits)
}

fn search_uncached(
    gen: &Generation,
    searcher: &tantivy::Searcher,
    req: &SearchRequest,
) -> CkanResult<SearchHits> {
    let builder = query::Builder::new(&gen.f);
    let main = builder.build(&req.query)?;
    let mut clauses: Vec<(Occur, Box<dyn tantivy::query::Query>)> = vec![(Occur::Must, main)];
    for fq in &req.filters {
        clauses.push((
            Occur::Must,
            Box::new(tantivy::query::ConstScoreQuery::new(
                builder.build(fq)?,
                0.0,
            )),
        ));
    }
    let q = BooleanQuery::new(clauses);
    // Count, page and string facets in one pass over the matches.
    let facet_columns: Vec<String> = req
        .facet_fields
        .iter()
        .filter(|f| kind(f) == FieldKind::String)
        .map(|f| format!("s.{f}"))
        .collect();
    gen.uninverted.retain_segments(searcher);
    let facets_wanted = FacetCollector {
        columns: facet_columns,
        uninverted: gen.uninverted.clone(),
    };
    let (count, addrs, mut by_column) = if req.rows == 0 {
        let (count, fruit) = searcher
            .search(&q, &(Count, facets_wanted))
            .map_err(engine_error)?;
        (count, Vec::new(), fruit)
    } else {
        top_docs(searcher, &q, req, facets_wanted)?
    };
    let mut docs = Vec::with_capacity(addrs.len());
    for a in addrs {
        let d: TantivyDocument = searcher.doc(a).map_err(engine_error)?;
        docs.push(
            d.get_first(gen.f.data)
                .and_then(|v| v.as_str())
                .unwrap_or("{}")
                .to_string(),
        );
    }
    // Date facets (rare) by tantivy's aggregation; text fields hold tokens, not values: none.
    let dated: Vec<String> = req
        .facet_fields
        .iter()
        .filter(|f| kind(f) == FieldKind::Date)
        .cloned()
        .collect();
    let mut dated_counts = if dated.is_empty() || count == 0 {
        Vec::new()
    } else {
        facet_counts(searcher, &q, req, &dated)?
    };
    let mut facets = Vec::with_capacity(req.facet_fields.len());
    // The string facets' counts, in the order of their columns.
    let mut string_counts = by_column.iter_mut();
    for field in &req.facet_fields {
        let values = match kind(field) {
            FieldKind::String => {
                let counts = string_counts.next().map(std::mem::take).unwrap_or_default();
                ranked(counts.into_iter().collect(), req)
            }
            FieldKind::Date => dated_counts
                .iter_mut()
                .find(|(f, _)| f == field)
                .map(|(_, v)| std::mem::take(v))
                .unwrap_or_default(),
            FieldKind::Text | FieldKind::TextGeneral => Vec::new(),
        };
        facets.push((field.clone(), values));
    }
    Ok(SearchHits {
        count: count as u64,
        docs,
        facets,
    })
}

fn remove_stale_generations(root: &Path, keep: &str) {
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

pub(crate) fn engine_error(e: impl std::fmt::Display) -> CkanError {
    search_error(format!(
        "Search engine returned an error running query: {e}"
    ))
}

/// The column a sort key reads.
fn sort_column(field: &SortField) -> CkanResult<SortByErasedType> {
    match field {
        SortField::Score => Ok(SortByErasedType::for_score()),
        SortField::Field(f) if f == "metadata_modified" || f == "metadata_created" => {
            Ok(SortByErasedType::for_field(f))
        }
        SortField::Field(f) if SORTABLE.contains(&f.as_str()) => {
            Ok(SortByErasedType::for_field(format!("o.{f}")))
        }
        SortField::Field(f) => Err(search_error(format!(
            "Search engine returned an error running query: can not sort on undefined field: {f}"
        ))),
    }
}

fn order(desc: bool) -> Order {
    if desc {
        Order::Desc
    } else {
        Order::Asc
    }
}

/// The page of document addresses, by the requested sort keys then by id, with the count and
/// the facets of the same pass.
fn top_docs(
    searcher: &tantivy::Searcher,
    q: &dyn tantivy::query::Query,
    req: &SearchRequest,
    facets: FacetCollector,
) -> CkanResult<(usize, Vec<tantivy::DocAddress>, FacetFruit)> {
    // Score and date sorts (at most two keys, a date among them) take the compact top-k of
    // [`compact`]. A sort by score alone stays general: without a `q` every match ties on it,
    // and the compact path reads the id of every tied match.
    let keys: Option<Vec<(compact::Key, bool)>> = req
        .sort
        .iter()
        .take(3)
        .map(|k| match &k.field {
            SortField::Score => Some((compact::Key::Score, k.descending)),
            SortField::Field(f) if f == "metadata_modified" || f == "metadata_created" => {
                Some((compact::Key::Date(f.clone()), k.descending))
            }
            SortField::Field(_) => None,
        })
        .collect();
    let dated = |k: &Vec<(compact::Key, bool)>| {
        k.len() <= 2 && k.iter().any(|(k, _)| matches!(k, compact::Key::Date(_)))
    };
    if let Some(keys) = keys.filter(dated) {
        let top = compact::TopCollector {
            keys,
            limit: req.start.saturating_add(req.rows),
        };
        let ((count, entries), fruit) = searcher.search(q, &(top, facets)).map_err(engine_error)?;
        let page = compact::page(searcher, entries, req.start, req.rows).map_err(engine_error)?;
        return Ok((count, page, fruit));
    }
    general_top_docs(searcher, q, req, facets)
}

/// [`top_docs`] for any sort, by tantivy's `TopDocs` on erased sort keys.
fn general_top_docs(
    searcher: &tantivy::Searcher,
    q: &dyn tantivy::query::Query,
    req: &SearchRequest,
    facets: FacetCollector,
) -> CkanResult<(usize, Vec<tantivy::DocAddress>, FacetFruit)> {
    let mut keys: Vec<(SortByErasedType, Order)> = Vec::new();
    for k in req.sort.iter().take(3) {
        keys.push((sort_column(&k.field)?, order(k.descending)));
    }
    if !req
        .sort
        .iter()
        .take(3)
        .any(|k| k.field == SortField::Field("id".into()))
    {
        keys.push((SortByErasedType::for_field("o.id"), Order::Asc));
    }
    let top = TopDocs::with_limit(req.rows).and_offset(req.start);
    let mut it = keys.into_iter();
    let k1 = it.next().expect("at least the id key");
    match (it.next(), it.next(), it.next()) {
        (None, _, _) => collect(searcher, q, top.order_by(k1), facets),
        (Some(k2), None, _) => collect(searcher, q, top.order_by((k1, k2)), facets),
        (Some(k2), Some(k3), None) => collect(searcher, q, top.order_by((k1, k2, k3)), facets),
        (Some(k2), Some(k3), Some(k4)) => {
            collect(searcher, q, top.order_by((k1, k2, k3, k4)), facets)
        }
    }
}

fn collect<K, C>(
    searcher: &tantivy::Searcher,
    q: &dyn tantivy::query::Query,
    collector: C,
    facets: FacetCollector,
) -> CkanResult<(usize, Vec<tantivy::DocAddress>, FacetFruit)>
where
    C: tantivy::collector::Collector<Fruit = Vec<(K, tantivy::DocAddress)>>,
{
    let (count, top, fruit) = searcher
        .search(q, &(Count, collector, facets))
        .map_err(engine_error)?;
    Ok((count, top.into_iter().map(|(_, a)| a).collect(), fruit))
}

/// A facet's values by count (descending) then value, cut at the limit, as Solr returns them.
fn ranked(mut values: Vec<(String, u64)>, req: &SearchRequest) -> Vec<(String, u64)> {
    values.retain(|(_, c)| *c >= req.facet_mincount.max(1));
    values.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    if let Some(l) = req.facet_limit {
        values.truncate(l);
    }
    values
}

/// One field's facet: `(field, [(value, count)])`.
type Facet = (String, Vec<(String, u64)>);

/// Facet counts of date fields by terms aggregations (string fields: [`FacetCollector`]).
fn facet_counts(
    searcher: &tantivy::Searcher,
    q: &dyn tantivy::query::Query,
    req: &SearchRequest,
    fields: &[String],
) -> CkanResult<Vec<Facet>> {
    // Ask for more than the limit so that ties at the cut are broken by value, as Solr does.
    let size = req.facet_limit.map(|l| l + 100).unwrap_or(100_000);
    let mut aggs = serde_json::Map::new();
    for (i, field) in fields.iter().enumerate() {
        let column = match kind(field) {
            FieldKind::String => format!("s.{field}"),
            FieldKind::Date if field == "metadata_modified" || field == "metadata_created" => {
                field.clone()
            }
            FieldKind::Date => format!("d.{field}"),
            // Text fields hold tokens, not values: no facet (Solr would count tokens).
            FieldKind::Text | FieldKind::TextGeneral => continue,
        };
        aggs.insert(
            format!("f{i}"),
            json!({"terms": {"field": column, "size": size, "segment_size": size,
                   "min_doc_count": req.facet_mincount.max(1)}}),
        );
    }
    let parsed: Aggregations = serde_json::from_value(Value::Object(aggs)).map_err(engine_error)?;
    let collector = AggregationCollector::from_aggs(
        parsed,
        AggContextParams::new(AggregationLimitsGuard::default(), Default::default()),
    );
    let res: AggregationResults = searcher.search(q, &collector).map_err(engine_error)?;
    let res = serde_json::to_value(&res).map_err(engine_error)?;
    let mut out = Vec::new();
    for (i, field) in fields.iter().enumerate() {
        let values: Vec<(String, u64)> = res
            .get(format!("f{i}"))
            .and_then(|a| a.get("buckets"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|b| {
                let key = match b.get("key_as_string").or_else(|| b.get("key"))? {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                Some((key, b.get("doc_count")?.as_u64()?))
            })
            .collect();
        out.push((field.clone(), ranked(values, req)));
    }
    Ok(out)
}

fn to_doc(f: &Fields, d: &IndexDocument) -> TantivyDocument {
    let mut doc = TantivyDocument::new();
    doc.add_text(f.id, &d.id);
    doc.add_text(f.data, &d.data);
    doc.add_text(f.mm_raw, &d.metadata_modified);
    let mut s: BTreeMap<String, Vec<OwnedValue>> = BTreeMap::new();
    let mut t: BTreeMap<String, Vec<OwnedValue>> = BTreeMap::new();
    let mut g: BTreeMap<String, Vec<OwnedValue>> = BTreeMap::new();
    let mut dates: BTreeMap<String, Vec<OwnedValue>> = BTreeMap::new();
    let mut present: Vec<&str> = Vec::new();
    // Each value once per field, in first-seen order: a set, not a scan of the list (a
    // dataset may carry thousands of tags).
    let mut seen: std::collections::HashSet<(&str, &str)> = std::collections::HashSet::new();
    for (field, value) in &d.fields {
        let target = match kind(field) {
            FieldKind::String => &mut s,
            FieldKind::Text => &mut t,
            FieldKind::TextGeneral => &mut g,
            FieldKind::Date => continue,
        };
        if seen.insert((field, value)) {
            target
                .entry(field.clone())
                .or_default()
                .push(OwnedValue::Str(value.clone()));
        }
        present.push(field);
    }
    for (field, at) in &d.dates {
        let dt = tantivy_date(at.timestamp_micros());
        match field.as_str() {
            "metadata_modified" => doc.add_date(f.modified, dt),
            "metadata_created" => doc.add_date(f.created, dt),
            _ => dates
                .entry(field.clone())
                .or_default()
                .push(OwnedValue::Date(dt)),
        }
        present.push(field);
    }
    present.sort_unstable();
    present.dedup();
    for p in present {
        doc.add_text(f.present, p);
    }
    let obj = |m: BTreeMap<String, Vec<OwnedValue>>| -> BTreeMap<String, OwnedValue> {
        m.into_iter()
            .map(|(k, mut v)| {
                let v = if v.len() == 1 {
                    v.pop().expect("one")
                } else {
                    OwnedValue::Array(v)
                };
                (k, v)
            })
            .collect()
    };
    doc.add_object(f.s, obj(s));
    doc.add_object(f.t, obj(t));
    doc.add_object(f.g, obj(g));
    doc.add_object(f.d, obj(dates));
    // Every sortable string, always present, so each segment has the columns.
    let sort: BTreeMap<String, OwnedValue> = SORTABLE
        .iter()
        .filter(|k| !k.starts_with("metadata_"))
        .map(|k| {
            let v = if *k == "id" {
                Some(d.id.as_str())
            } else {
                d.first(k)
            };
            (k.to_string(), OwnedValue::Str(v.unwrap_or("").to_string()))
        })
        .collect();
    doc.add_object(f.o, sort);
    doc
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

/// A tantivy date from microseconds, clamped to what its nanosecond timestamps hold (years
/// 1677–2262): `from_timestamp_micros` overflows, and panics, outside that range.
pub(crate) fn tantivy_date(micros: i64) -> DateTime {
    const LIMIT: i64 = i64::MAX / 1_000;
    DateTime::from_timestamp_micros(micros.clamp(-LIMIT, LIMIT))
}
