//! Deep pages (`start` in the thousands) of score and date sorts — CKAN's default
//! `score desc, metadata_modified desc` among them.
//!
//! tantivy's `TopDocs` with an offset keeps a heap of `start + rows` entries per segment with
//! general (erased) sort keys: at `start=100000` over 285k matches that was ~220 ms and tens of
//! MiB per request (docs/BENCHMARKS.md). Here every match is kept as two integers and its
//! address (24 bytes), and the page is found by selection (`select_nth_unstable`, linear) and a
//! sort of the page only. Ties of score and date are ordered by index position (as Solr orders
//! its ties), not by id as shallow pages are.

use std::cmp::Ordering;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::{DateTime, DocAddress, DocId, Score, SegmentOrdinal, SegmentReader};

/// Where a sort key comes from.
#[derive(Debug, Clone)]
pub(crate) enum Key {
    Score,
    /// A date fast field (`metadata_modified`, `metadata_created`).
    Date(String),
}

/// One match: its sort keys as integers (ascending order) and its address.
type Entry = ([i64; 2], DocAddress);

/// Collects every match with its keys (at most two).
pub(crate) struct DeepCollector {
    pub keys: Vec<Key>,
}

pub(crate) struct DeepSegment {
    segment: SegmentOrdinal,
    keys: Vec<Key>,
    dates: Vec<Option<Column<DateTime>>>,
    out: Vec<Entry>,
}

/// A score as an integer with the same order.
fn score_key(s: Score) -> i64 {
    let bits = s.to_bits() as i32;
    i64::from(bits ^ ((bits >> 31) & 0x7fff_ffff))
}

impl Collector for DeepCollector {
    type Fruit = Vec<Entry>;
    type Child = DeepSegment;

    fn for_segment(
        &self,
        segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<DeepSegment> {
        let mut dates = Vec::with_capacity(self.keys.len());
        for k in &self.keys {
            dates.push(match k {
                Key::Score => None,
                Key::Date(f) => Some(reader.fast_fields().date(f)?),
            });
        }
        Ok(DeepSegment {
            segment,
            keys: self.keys.clone(),
            dates,
            out: Vec::with_capacity(reader.num_docs() as usize),
        })
    }

    fn requires_scoring(&self) -> bool {
        self.keys.iter().any(|k| matches!(k, Key::Score))
    }

    fn merge_fruits(&self, fruits: Vec<Vec<Entry>>) -> tantivy::Result<Vec<Entry>> {
        let mut all = Vec::with_capacity(fruits.iter().map(Vec::len).sum());
        for f in fruits {
            all.extend(f);
        }
        Ok(all)
    }
}

impl SegmentCollector for DeepSegment {
    type Fruit = Vec<Entry>;

    fn collect(&mut self, doc: DocId, score: Score) {
        let mut k = [0i64; 2];
        for (i, (key, date)) in self.keys.iter().zip(&self.dates).enumerate().take(2) {
            k[i] = match (key, date) {
                (Key::Score, _) => score_key(score),
                (Key::Date(_), Some(col)) => col
                    .first(doc)
                    .map_or(i64::MIN, DateTime::into_timestamp_micros),
                (Key::Date(_), None) => i64::MIN,
            };
        }
        self.out.push((k, DocAddress::new(self.segment, doc)));
    }

    fn harvest(self) -> Vec<Entry> {
        self.out
    }
}

/// The page `[start, start + rows)` of `entries` in the order the keys and directions give
/// (ties by address).
pub(crate) fn page(
    mut entries: Vec<Entry>,
    descending: &[bool],
    start: usize,
    rows: usize,
) -> Vec<DocAddress> {
    let cmp = |a: &Entry, b: &Entry| -> Ordering {
        for (i, desc) in descending.iter().enumerate().take(2) {
            let o = a.0[i].cmp(&b.0[i]);
            let o = if *desc { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        a.1.cmp(&b.1)
    };
    if start >= entries.len() || rows == 0 {
        return Vec::new();
    }
    entries.select_nth_unstable_by(start, cmp);
    let rest = &mut entries[start..];
    if rest.len() > rows {
        rest.select_nth_unstable_by(rows, cmp);
    }
    let take = rows.min(rest.len());
    let window = &mut rest[..take];
    window.sort_unstable_by(cmp);
    window.iter().map(|e| e.1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_keys_keep_the_order_of_scores() {
        let scores = [-2.5f32, -0.0, 0.0, 0.1, 1.0, 7.25, f32::MAX];
        for w in scores.windows(2) {
            assert!(score_key(w[0]) <= score_key(w[1]), "{w:?}");
        }
    }

    #[test]
    fn a_page_is_the_slice_of_the_full_sort() {
        let entries: Vec<Entry> = (0..1000u32)
            .map(|i| {
                (
                    [(i % 7) as i64, (i * 7919 % 1000) as i64],
                    DocAddress::new(i % 3, i),
                )
            })
            .collect();
        let mut full = entries.clone();
        let desc = [true, false];
        full.sort_by(|a, b| {
            b.0[0]
                .cmp(&a.0[0])
                .then(a.0[1].cmp(&b.0[1]))
                .then(a.1.cmp(&b.1))
        });
        for (start, rows) in [(0, 20), (500, 20), (990, 20), (999, 5), (1000, 20)] {
            let want: Vec<DocAddress> = full.iter().skip(start).take(rows).map(|e| e.1).collect();
            assert_eq!(page(entries.clone(), &desc, start, rows), want, "{start}");
        }
    }
}
