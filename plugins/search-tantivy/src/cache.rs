//! Answers of recent searches, for the index as it is now: a portal's front page and its
//! common facet links repeat the same queries, and an answer stays right until the index
//! changes. Entries belong to one reader generation (one commit); the first lookup after a
//! commit finds a new generation and empties the cache. Bounded in entries and bytes; an
//! answer larger than a sixteenth of the budget (a page of 1,000 whole datasets) is not kept.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use catalog_framework::search::SearchHits;

const MAX_ENTRIES: usize = 512;
const MAX_BYTES: usize = 32 << 20;

#[derive(Default)]
struct Inner {
    generation: u64,
    map: HashMap<String, SearchHits>,
    order: VecDeque<String>,
    bytes: usize,
}

/// The cache of one index generation's answers.
#[derive(Default)]
pub(crate) struct ResultCache(Mutex<Inner>);

fn size(key: &str, hits: &SearchHits) -> usize {
    let docs: usize = hits.docs.iter().map(|d| d.len() + 24).sum();
    let facets: usize = hits
        .facets
        .iter()
        .map(|(f, v)| f.len() + v.iter().map(|(s, _)| s.len() + 32).sum::<usize>())
        .sum();
    key.len() * 2 + docs + facets + 128
}

impl ResultCache {
    /// The answer to `key` if one was kept for reader generation `generation`.
    pub(crate) fn get(&self, generation: u64, key: &str) -> Option<SearchHits> {
        let inner = self.0.lock().ok()?;
        if inner.generation != generation {
            return None;
        }
        inner.map.get(key).cloned()
    }

    /// Keeps an answer for reader generation `generation`.
    pub(crate) fn put(&self, generation: u64, key: String, hits: &SearchHits) {
        let cost = size(&key, hits);
        if cost > MAX_BYTES / 16 {
            return;
        }
        let Ok(mut inner) = self.0.lock() else { return };
        if inner.generation != generation {
            if generation < inner.generation {
                return; // an answer from an older reader: not worth keeping
            }
            *inner = Inner {
                generation,
                ..Inner::default()
            };
        }
        if inner.map.contains_key(&key) {
            return;
        }
        while inner.map.len() >= MAX_ENTRIES || inner.bytes + cost > MAX_BYTES {
            let Some(old) = inner.order.pop_front() else {
                break;
            };
            if let Some(h) = inner.map.remove(&old) {
                inner.bytes -= size(&old, &h);
            }
        }
        inner.bytes += cost;
        inner.order.push_back(key.clone());
        inner.map.insert(key, hits.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(n: u64) -> SearchHits {
        SearchHits {
            count: n,
            docs: vec!["{}".into()],
            facets: Vec::new(),
        }
    }

    #[test]
    fn answers_belong_to_one_generation_and_the_cache_is_bounded() {
        let c = ResultCache::default();
        c.put(1, "q".into(), &hits(5));
        assert_eq!(c.get(1, "q").map(|h| h.count), Some(5));
        assert!(c.get(2, "q").is_none(), "another generation");
        c.put(2, "q2".into(), &hits(7));
        assert!(
            c.get(1, "q").is_none(),
            "a newer generation empties the cache"
        );
        c.put(1, "old".into(), &hits(1));
        assert!(
            c.get(2, "old").is_none(),
            "an older reader's answer is not kept"
        );
        for i in 0..(MAX_ENTRIES + 10) {
            c.put(2, format!("k{i}"), &hits(i as u64));
        }
        let inner = c.0.lock().unwrap();
        assert!(inner.map.len() <= MAX_ENTRIES);
        assert!(!inner.map.contains_key("k0"), "the oldest went first");
    }
}
