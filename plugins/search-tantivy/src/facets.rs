//! Facet counts by term ordinals (doc-values faceting, as Lucene and Solr do it): for each
//! matching document, the ordinals of its values in a segment's string column are counted in a
//! plain array; the ordinals with a count are turned into strings once per segment, and the
//! segments' counts are summed by string. This replaces tantivy's generic terms aggregation,
//! which buffers and de-duplicates (document, value) pairs and was two thirds of a faceted
//! front-page query at 300k datasets (docs/BENCHMARKS.md).

use std::collections::HashMap;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::StrColumn;
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader};

/// Counts the values of string fast-field columns (`s.<field>`) over the matching documents.
pub(crate) struct FacetCollector {
    /// The column names, one per facet field.
    pub columns: Vec<String>,
}

/// One segment's counters.
pub(crate) struct FacetSegmentCollector {
    columns: Vec<Option<StrColumn>>,
    counts: Vec<Vec<u32>>,
    /// Per column and ordinal: the last document counted for it, so that a document holding a
    /// value twice (two CSV resources) counts once, without sorting its values.
    last_doc: Vec<Vec<DocId>>,
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
        let mut counts = Vec::with_capacity(self.columns.len());
        let mut last_doc = Vec::with_capacity(self.columns.len());
        for name in &self.columns {
            let column = reader.fast_fields().str(name)?;
            let terms = column.as_ref().map_or(0, |c| c.num_terms());
            counts.push(vec![0u32; terms]);
            last_doc.push(vec![DocId::MAX; terms]);
            columns.push(column);
        }
        Ok(FacetSegmentCollector {
            columns,
            counts,
            last_doc,
        })
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

impl SegmentCollector for FacetSegmentCollector {
    type Fruit = FacetFruit;

    fn collect(&mut self, doc: DocId, _score: Score) {
        for ((column, counts), last) in self
            .columns
            .iter()
            .zip(self.counts.iter_mut())
            .zip(self.last_doc.iter_mut())
        {
            let Some(column) = column else { continue };
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
    }

    fn harvest(self) -> FacetFruit {
        let mut out = Vec::with_capacity(self.columns.len());
        let mut buf = String::new();
        for (column, counts) in self.columns.iter().zip(self.counts) {
            let mut values = HashMap::new();
            if let Some(column) = column {
                for (ord, n) in counts.into_iter().enumerate() {
                    if n == 0 {
                        continue;
                    }
                    if let Ok(true) = column.ord_to_str(ord as u64, &mut buf) {
                        values.insert(buf.clone(), u64::from(n));
                    }
                }
            }
            out.push(values);
        }
        out
    }
}
