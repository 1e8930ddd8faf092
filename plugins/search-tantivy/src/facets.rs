//! Facet counts by term ordinals (doc-values faceting, as Lucene and Solr do it): for each
//! matching document, the ordinals of its values in a segment's string column are counted in a
//! plain array; the ordinals with a count are turned into strings once per segment, and the
//! segments' counts are summed by string. This replaces tantivy's generic terms aggregation,
//! which buffers and de-duplicates (document, value) pairs and was two thirds of a faceted
//! front-page query at 300k datasets (docs/BENCHMARKS.md).
//!
//! Reading a document's ordinals from the column (its optional index's rank, then the
//! bit-packed start offsets and values) costs 40-80 ns; a front-page query over 549k matches
//! at one million datasets spent 20-35 ms on each of its five facets. So a large segment's
//! facet column is decoded once, "uninverted" as Solr's `UnInvertedField` does, into each
//! document's ordinal (single-valued columns) or the start of its distinct ordinals and the
//! ordinals (16 bits when the column has fewer than 65,535 values), kept while the segment is
//! in the index ([`Uninverted`]); matches are counted in blocks, a column at a time. Segments
//! are immutable, so a decoded column never goes stale; small (young) segments are read
//! directly; the decoded columns together stay within [`UNINVERT_BUDGET`] bytes, beyond which
//! columns are read directly.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::StrColumn;
use tantivy::index::SegmentId;
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader};

/// Segments with fewer documents are read directly.
const UNINVERT_MIN_DOCS: u32 = 50_000;
/// The most memory the decoded columns of one index take together.
const UNINVERT_BUDGET: usize = 48 << 20;

/// A segment's string column decoded for counting.
pub(crate) enum Uninverted {
    /// At most one value a document (an organization, a licence): its ordinal, or one past
    /// the last ordinal when it has none.
    Single(Ords),
    /// Per document the start of its distinct ordinals in `ords` (one more start than
    /// documents).
    Multi { starts: Vec<u32>, ords: Ords },
}

/// Ordinals, in 16 bits when the column has fewer than 65,535 values.
pub(crate) enum Ords {
    U16(Vec<u16>),
    U32(Vec<u32>),
}

impl Ords {
    fn new(ords: Vec<u32>, terms: usize) -> Ords {
        if terms < usize::from(u16::MAX) {
            Ords::U16(ords.into_iter().map(|o| o as u16).collect())
        } else {
            Ords::U32(ords)
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Ords::U16(v) => v.len() * 2,
            Ords::U32(v) => v.len() * 4,
        }
    }
}

/// An ordinal as an index into the counts.
trait Ordinal: Copy {
    fn index(self) -> usize;
}

impl Ordinal for u16 {
    #[inline]
    fn index(self) -> usize {
        usize::from(self)
    }
}

impl Ordinal for u32 {
    #[inline]
    fn index(self) -> usize {
        self as usize
    }
}

impl Uninverted {
    /// Decodes `column` (of `max_doc` documents); `None` when it has more than 2^32 values.
    fn build(column: &StrColumn, max_doc: DocId) -> Option<Uninverted> {
        let terms = column.num_terms();
        let none = u32::try_from(terms).ok()?;
        let mut starts: Vec<u32> = Vec::with_capacity(max_doc as usize + 1);
        let mut ords: Vec<u32> = Vec::with_capacity(max_doc as usize);
        let mut doc_ords: Vec<u32> = Vec::new();
        let mut single = true;
        for doc in 0..max_doc {
            doc_ords.clear();
            doc_ords.extend(column.term_ords(doc).map(|o| o as u32));
            doc_ords.sort_unstable();
            doc_ords.dedup();
            single &= doc_ords.len() <= 1;
            starts.push(u32::try_from(ords.len()).ok()?);
            ords.extend_from_slice(&doc_ords);
        }
        starts.push(u32::try_from(ords.len()).ok()?);
        Some(if single {
            let per_doc = starts
                .windows(2)
                .map(|w| {
                    if w[0] < w[1] {
                        ords[w[0] as usize]
                    } else {
                        none
                    }
                })
                .collect();
            Uninverted::Single(Ords::new(per_doc, terms))
        } else {
            ords.shrink_to_fit();
            Uninverted::Multi {
                starts,
                ords: Ords::new(ords, terms),
            }
        })
    }

    fn bytes(&self) -> usize {
        match self {
            Uninverted::Single(ords) => ords.bytes(),
            Uninverted::Multi { starts, ords } => starts.len() * 4 + ords.bytes(),
        }
    }

    /// Counts the values of a block of documents (in increasing order).
    fn count(&self, docs: &[DocId], counts: &mut [u32]) {
        match self {
            Uninverted::Single(Ords::U16(o)) => count_single(o, docs, counts),
            Uninverted::Single(Ords::U32(o)) => count_single(o, docs, counts),
            Uninverted::Multi {
                starts,
                ords: Ords::U16(o),
            } => count_multi(starts, o, docs, counts),
            Uninverted::Multi {
                starts,
                ords: Ords::U32(o),
            } => count_multi(starts, o, docs, counts),
        }
    }
}

#[inline]
fn count_single<T: Ordinal>(ords: &[T], docs: &[DocId], counts: &mut [u32]) {
    for &doc in docs {
        if let Some(o) = ords.get(doc as usize) {
            // One past the last ordinal (no value) has no counter.
            if let Some(c) = counts.get_mut(o.index()) {
                *c += 1;
            }
        }
    }
}

#[inline]
fn count_multi<T: Ordinal>(starts: &[u32], ords: &[T], docs: &[DocId], counts: &mut [u32]) {
    for &doc in docs {
        let doc = doc as usize;
        let (Some(&from), Some(&to)) = (starts.get(doc), starts.get(doc + 1)) else {
            continue;
        };
        for o in ords.get(from as usize..to as usize).unwrap_or_default() {
            if let Some(c) = counts.get_mut(o.index()) {
                *c += 1;
            }
        }
    }
}

/// The decoded columns of one index, by segment and column.
pub(crate) struct UninvertedColumns {
    /// Segments with fewer documents are read directly.
    min_docs: u32,
    inner: Mutex<UninvertedInner>,
}

impl Default for UninvertedColumns {
    fn default() -> Self {
        UninvertedColumns::new(UNINVERT_MIN_DOCS)
    }
}

#[derive(Default)]
struct UninvertedInner {
    /// `None`: the column is read directly (more than 2^32 values, or over budget).
    columns: HashMap<(SegmentId, String), Option<Arc<Uninverted>>>,
    bytes: usize,
}

impl UninvertedColumns {
    pub(crate) fn new(min_docs: u32) -> UninvertedColumns {
        UninvertedColumns {
            min_docs,
            inner: Mutex::default(),
        }
    }

    /// Forgets the columns of segments no longer in the index (merged away).
    pub(crate) fn retain_segments(&self, searcher: &tantivy::Searcher) {
        let live: Vec<SegmentId> = searcher
            .segment_readers()
            .iter()
            .map(SegmentReader::segment_id)
            .collect();
        let mut inner = self.inner.lock().expect("poisoned");
        if inner.columns.keys().all(|(s, _)| live.contains(s)) {
            return;
        }
        inner.columns.retain(|(s, _), _| live.contains(s));
        inner.bytes = inner.columns.values().flatten().map(|u| u.bytes()).sum();
    }

    /// The decoded column `name` of a segment, decoding it on first use if the segment is
    /// large enough and the budget allows.
    fn get(
        &self,
        reader: &SegmentReader,
        name: &str,
        column: &StrColumn,
    ) -> Option<Arc<Uninverted>> {
        if reader.max_doc() < self.min_docs {
            return None;
        }
        let key = (reader.segment_id(), name.to_string());
        {
            let inner = self.inner.lock().expect("poisoned");
            if let Some(found) = inner.columns.get(&key) {
                return found.clone();
            }
            // A decoded column takes at least a byte a document.
            if inner.bytes + reader.max_doc() as usize > UNINVERT_BUDGET {
                return None;
            }
        }
        let built = Uninverted::build(column, reader.max_doc()).map(Arc::new);
        let mut inner = self.inner.lock().expect("poisoned");
        let size = built.as_ref().map_or(0, |u| u.bytes());
        if inner.bytes + size > UNINVERT_BUDGET {
            // Over budget: read this column directly from now on, not decode it again.
            inner.columns.insert(key, None);
            return None;
        }
        if let Some(found) = inner.columns.get(&key) {
            return found.clone();
        }
        inner.bytes += size;
        inner.columns.insert(key, built.clone());
        built
    }
}

/// Counts the values of string fast-field columns (`s.<field>`) over the matching documents.
pub(crate) struct FacetCollector {
    /// The column names, one per facet field.
    pub columns: Vec<String>,
    /// The index's decoded columns.
    pub uninverted: Arc<UninvertedColumns>,
}

/// How a segment's column is read.
enum Source {
    /// Not in this segment.
    None,
    /// Each document's ordinals from the column; the last document counted for each ordinal,
    /// so that a document holding a value twice (two CSV resources) counts once.
    Column(StrColumn, Vec<DocId>),
    /// From the decoded column.
    Uninverted(Arc<Uninverted>),
}

/// Matching documents are counted in blocks of this many, one column at a time.
const BLOCK: usize = 1024;

/// One segment's counters.
pub(crate) struct FacetSegmentCollector {
    /// Per column: the dictionary (for the strings), how it is read and the counts by ordinal.
    columns: Vec<(Option<StrColumn>, Source, Vec<u32>)>,
    /// Matching documents not counted yet.
    block: Vec<DocId>,
}

impl FacetSegmentCollector {
    fn count_block(&mut self) {
        for (_, source, counts) in &mut self.columns {
            match source {
                Source::None => {}
                Source::Column(column, last) => {
                    for &doc in &self.block {
                        count_from_column(column, last, counts, doc);
                    }
                }
                Source::Uninverted(u) => u.count(&self.block, counts),
            }
        }
        self.block.clear();
    }
}

/// Per column: value → number of documents.
pub(crate) type FacetFruit = Vec<HashMap<String, u64>>;

impl Collector for FacetCollector {
    type Fruit = FacetFruit;
    type Child = FacetSegmentCollector;

    fn for_segment(
        &self,
        _segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<FacetSegmentCollector> {
        let mut columns = Vec::with_capacity(self.columns.len());
        for name in &self.columns {
            let column = reader.fast_fields().str(name)?;
            let Some(col) = column else {
                columns.push((None, Source::None, Vec::new()));
                continue;
            };
            let terms = col.num_terms();
            let source = match self.uninverted.get(reader, name, &col) {
                Some(u) => Source::Uninverted(u),
                None => Source::Column(col.clone(), vec![DocId::MAX; terms]),
            };
            columns.push((Some(col), source, vec![0u32; terms]));
        }
        let block = if columns.is_empty() {
            Vec::new()
        } else {
            Vec::with_capacity(BLOCK)
        };
        Ok(FacetSegmentCollector { columns, block })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<FacetFruit>) -> tantivy::Result<FacetFruit> {
        let mut out: FacetFruit = vec![HashMap::new(); self.columns.len()];
        for fruit in fruits {
            for (total, part) in out.iter_mut().zip(fruit) {
                if total.is_empty() {
                    *total = part;
                    continue;
                }
                for (value, n) in part {
                    *total.entry(value).or_insert(0) += n;
                }
            }
        }
        Ok(out)
    }
}

/// Counts one document's distinct ordinals from the column.
#[inline]
fn count_from_column(column: &StrColumn, last: &mut [DocId], counts: &mut [u32], doc: DocId) {
    for ord in column.term_ords(doc) {
        let ord = ord as usize;
        if let (Some(c), Some(l)) = (counts.get_mut(ord), last.get_mut(ord)) {
            if *l != doc {
                *l = doc;
                *c += 1;
            }
        }
    }
}

impl SegmentCollector for FacetSegmentCollector {
    type Fruit = FacetFruit;

    #[inline]
    fn collect(&mut self, doc: DocId, _score: Score) {
        if self.columns.is_empty() {
            return;
        }
        self.block.push(doc);
        if self.block.len() >= BLOCK {
            self.count_block();
        }
    }

    fn collect_block(&mut self, docs: &[DocId]) {
        if self.columns.is_empty() {
            return;
        }
        self.block.extend_from_slice(docs);
        if self.block.len() >= BLOCK {
            self.count_block();
        }
    }

    fn harvest(mut self) -> FacetFruit {
        self.count_block();
        let mut out = Vec::with_capacity(self.columns.len());
        for (column, _, counts) in self.columns {
            let mut values = HashMap::new();
            if let Some(column) = column {
                // The strings of the counted ordinals, in one walk of the dictionary.
                let ords: Vec<u64> = (0..counts.len() as u64)
                    .filter(|&o| counts[o as usize] > 0)
                    .collect();
                let mut counted = ords.iter();
                let _ = column.dictionary().sorted_ords_to_term_cb(&ords, |term| {
                    if let (Some(&o), Ok(value)) = (counted.next(), std::str::from_utf8(term)) {
                        values.insert(value.to_string(), u64::from(counts[o as usize]));
                    }
                });
            }
            out.push(values);
        }
        out
    }
}
