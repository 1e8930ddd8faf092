//! Score and date sorts — CKAN's default `score desc, metadata_modified desc` among them — on
//! compact keys.
//!
//! tantivy's `TopDocs` ordered by erased sort keys reads every key of every match (the score,
//! the date and, for our tie-break, the `o.id` column) into general values and pushes each
//! match through its heap: ~90 ns a match, 60-70 ms for a page of 20 over the 549k matches of
//! a common word at one million datasets (docs/BENCHMARKS.md). Here a match's keys are two
//! integers, larger first (a descending key as is, an ascending one bit-inverted):
//!
//! a match whose first key is below the current threshold (the `start + rows`-th best seen so
//! far in its segment) is dropped without reading its second key; the rest go to a buffer that
//! is cut back to the best `start + rows` (ties at the cut kept) by selection
//! (`select_nth_unstable`, linear) whenever it doubles, so a segment keeps at most twice the
//! page's end (24 bytes a match) and the cuts run on the search threads. Ties of both keys are
//! ordered by id, as the general sort does, on shallow and deep pages alike (so paging through
//! a result neither repeats nor skips a tied dataset), and the id is read only for the matches
//! in a run of ties ([`page`]). Deep pages took ~220 ms with `TopDocs` at `start=100000` over
//! 285k matches (and tens of MiB a request), then ~70 ms keeping every match and selecting once
//! at one million datasets (docs/BENCHMARKS.md).

use std::cmp::Ordering;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::{Column, StrColumn};
use tantivy::{DateTime, DocAddress, DocId, Score, SegmentOrdinal, SegmentReader};

/// Where a sort key comes from.
#[derive(Debug, Clone)]
pub(crate) enum Key {
    Score,
    /// A date fast field (`metadata_modified`, `metadata_created`).
    Date(String),
}

/// A match's sort keys as integers: the larger sorts first.
pub(crate) type Rank = [i64; 2];

/// One match: its rank and its address.
pub(crate) type Entry = (Rank, DocAddress);

/// A score as an integer with the same order.
fn score_key(s: Score) -> i64 {
    let bits = s.to_bits() as i32;
    i64::from(bits ^ ((bits >> 31) & 0x7fff_ffff))
}

/// Better first: the larger rank.
fn better(a: &Rank, b: &Rank) -> Ordering {
    b.cmp(a)
}

/// The sort keys (one or two, each with its direction) as one segment reads them.
struct SegmentKeys {
    keys: Vec<(Key, bool)>,
    dates: Vec<Option<Column<DateTime>>>,
}

impl SegmentKeys {
    fn open(keys: &[(Key, bool)], reader: &SegmentReader) -> tantivy::Result<SegmentKeys> {
        let mut dates = Vec::with_capacity(keys.len());
        for (k, _) in keys {
            dates.push(match k {
                Key::Score => None,
                Key::Date(f) => Some(reader.fast_fields().date(f)?),
            });
        }
        Ok(SegmentKeys {
            keys: keys.to_vec(),
            dates,
        })
    }

    /// Key `i` of a match (0 when there is no such key).
    #[inline]
    fn get(&self, i: usize, doc: DocId, score: Score) -> i64 {
        let Some((key, descending)) = self.keys.get(i) else {
            return 0;
        };
        let v = match (key, &self.dates[i]) {
            (Key::Score, _) => score_key(score),
            (Key::Date(_), Some(col)) => col
                .first(doc)
                .map_or(i64::MIN, DateTime::into_timestamp_micros),
            (Key::Date(_), None) => i64::MIN,
        };
        if *descending {
            v
        } else {
            !v
        }
    }
}

fn requires_scoring(keys: &[(Key, bool)]) -> bool {
    keys.iter().any(|(k, _)| matches!(k, Key::Score))
}

/// Collects the count of the matches and the best `limit` of them, with every match tied with
/// the last.
pub(crate) struct TopCollector {
    pub keys: Vec<(Key, bool)>,
    /// `start + rows`, at least 1.
    pub limit: usize,
}

pub(crate) struct TopSegment {
    segment: SegmentOrdinal,
    keys: SegmentKeys,
    limit: usize,
    count: usize,
    /// The best matches so far, with more below the threshold until the next cut.
    out: Vec<Entry>,
    /// Cut `out` when it reaches this length.
    cap: usize,
    /// The rank of the `limit`-th best match at the last cut: anything below it is out.
    threshold: Option<Rank>,
}

impl TopSegment {
    /// Keeps the best `limit` matches and those tied with the last of them.
    fn cut(&mut self) {
        cut(&mut self.out, self.limit);
        if self.out.len() >= self.limit {
            self.threshold = self.out.iter().map(|e| e.0).min();
        }
        // Many ties at the cut: let the buffer grow rather than cut again at once.
        self.cap = self.cap.max(self.out.len().saturating_mul(2));
    }
}

/// Keeps the best `limit` entries and every entry tied with the last of them, in no order.
fn cut(entries: &mut Vec<Entry>, limit: usize) {
    if entries.len() <= limit || limit == 0 {
        return;
    }
    entries.select_nth_unstable_by(limit - 1, |a, b| better(&a.0, &b.0));
    let last = entries[limit - 1].0;
    entries.retain(|e| e.0 >= last);
}

impl Collector for TopCollector {
    type Fruit = (usize, Vec<Entry>);
    type Child = TopSegment;

    fn for_segment(
        &self,
        segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<TopSegment> {
        let limit = self.limit.max(1);
        Ok(TopSegment {
            segment,
            keys: SegmentKeys::open(&self.keys, reader)?,
            limit,
            count: 0,
            out: Vec::new(),
            cap: limit.saturating_mul(2).saturating_add(64),
            threshold: None,
        })
    }

    fn requires_scoring(&self) -> bool {
        requires_scoring(&self.keys)
    }

    fn merge_fruits(&self, fruits: Vec<(usize, Vec<Entry>)>) -> tantivy::Result<Self::Fruit> {
        let count = fruits.iter().map(|f| f.0).sum();
        let mut all: Vec<Entry> = Vec::with_capacity(fruits.iter().map(|f| f.1.len()).sum());
        for (_, entries) in fruits {
            all.extend(entries);
        }
        Ok((count, all))
    }
}

impl SegmentCollector for TopSegment {
    type Fruit = (usize, Vec<Entry>);

    #[inline]
    fn collect(&mut self, doc: DocId, score: Score) {
        self.count += 1;
        let first = self.keys.get(0, doc, score);
        let second = match self.threshold {
            Some(t) if first < t[0] => return,
            Some(t) if first == t[0] => {
                let second = self.keys.get(1, doc, score);
                if second < t[1] {
                    return;
                }
                second
            }
            _ => self.keys.get(1, doc, score),
        };
        self.out
            .push(([first, second], DocAddress::new(self.segment, doc)));
        if self.out.len() >= self.cap {
            self.cut();
        }
    }

    fn harvest(mut self) -> Self::Fruit {
        cut(&mut self.out, self.limit);
        (self.count, self.out)
    }
}

/// The page `[start, start + rows)` of the segments' best matches: by rank, ties by id (read
/// from the `o.id` column only for the matches in a run of ties). Only the matches ranked at or
/// below the page's first are sorted: those ranked above it all come before the page.
pub(crate) fn page(
    searcher: &tantivy::Searcher,
    mut entries: Vec<Entry>,
    start: usize,
    rows: usize,
) -> tantivy::Result<Vec<DocAddress>> {
    cut(&mut entries, start.saturating_add(rows));
    if start >= entries.len() || rows == 0 {
        return Ok(Vec::new());
    }
    entries.select_nth_unstable_by(start, |a, b| better(&a.0, &b.0));
    let first = entries[start].0;
    let mut rest: Vec<Entry> = entries.iter().copied().filter(|e| e.0 <= first).collect();
    // The matches ranked above `first` (at most `start`) come first; the rest of the page's
    // predecessors are ties of `first` with smaller ids.
    let skip = start - (entries.len() - rest.len());
    rest.sort_unstable_by(|a, b| better(&a.0, &b.0));
    let mut ids = Ids::new(searcher);
    let mut i = 0;
    while i < rest.len() && i < skip + rows {
        let mut j = i + 1;
        while j < rest.len() && rest[j].0 == rest[i].0 {
            j += 1;
        }
        if j - i > 1 {
            let mut run: Vec<(String, Entry)> = Vec::with_capacity(j - i);
            for e in &rest[i..j] {
                run.push((ids.get(e.1)?, *e));
            }
            run.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            for (slot, (_, e)) in rest[i..j].iter_mut().zip(run) {
                *slot = e;
            }
        }
        i = j;
    }
    Ok(rest
        .into_iter()
        .skip(skip)
        .take(rows)
        .map(|e| e.1)
        .collect())
}

/// Reads the `o.id` of matches, opening each segment's column once.
struct Ids<'a> {
    searcher: &'a tantivy::Searcher,
    columns: Vec<Option<Option<StrColumn>>>,
    buf: String,
}

impl<'a> Ids<'a> {
    fn new(searcher: &'a tantivy::Searcher) -> Ids<'a> {
        Ids {
            searcher,
            columns: vec![None; searcher.segment_readers().len()],
            buf: String::new(),
        }
    }

    fn get(&mut self, addr: DocAddress) -> tantivy::Result<String> {
        let slot = &mut self.columns[addr.segment_ord as usize];
        if slot.is_none() {
            *slot = Some(
                self.searcher
                    .segment_reader(addr.segment_ord)
                    .fast_fields()
                    .str("o.id")?,
            );
        }
        self.buf.clear();
        if let Some(Some(col)) = slot {
            if let Some(ord) = col.term_ords(addr.doc_id).next() {
                col.ord_to_str(ord, &mut self.buf)?;
            }
        }
        Ok(self.buf.clone())
    }
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
    fn a_cut_keeps_the_best_and_the_ties_at_the_cut() {
        let mut entries: Vec<Entry> = [5, 1, 3, 3, 3, 9, 0, 3]
            .iter()
            .enumerate()
            .map(|(i, r)| ([*r, 0], DocAddress::new(0, i as u32)))
            .collect();
        cut(&mut entries, 3);
        let mut ranks: Vec<i64> = entries.iter().map(|e| e.0[0]).collect();
        ranks.sort_unstable();
        assert_eq!(ranks, [3, 3, 3, 3, 5, 9]);
    }
}
