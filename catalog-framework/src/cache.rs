//! A cache of rendered `package_show` dicts.
//!
//! Entries are dropped when the search indexer applies a dataset's change from the outbox (the
//! change feed), which every committed change to a dataset (or to a group it belongs to)
//! passes through, on the writing node before the writing request answers. A reader that
//! started before an invalidation never stores what it read (the generation check), so a stale
//! dict cannot be cached after the change.
//!
//! On PostgreSQL it is enabled where each node follows the change feed (the default local
//! search index): another node's write reaches this node's cache within the feed's polling
//! interval (a quarter second), and at once for the client that made it (read-your-writes,
//! ADR 0006). With a shared search index (`postgres` backend) nodes do not follow the feed and
//! the cache is off.
//!
//! It holds at most `catalog.cache.package_show_bytes`, counted by [`heap_bytes`] (the
//! allocations of the row and of the parsed dict); past that, entries are dropped until it is
//! back under nine tenths of the budget.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use serde_json::Value;

use crate::store::CachedPackage;

/// What the allocator adds to each allocation (header and rounding), on average.
const ALLOCATION_OVERHEAD: usize = 16;

/// The heap memory a `serde_json::Value` tree holds: every string, array and map allocation
/// with the allocator's overhead (a map entry holds its hash, key and value; the index table a
/// slot per entry, at most 7/8 full). Within a few percent of what the allocator reports for
/// dataset dicts.
pub fn heap_bytes(v: &Value) -> usize {
    let value = std::mem::size_of::<Value>();
    let mut total = 0;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => total += s.capacity() + ALLOCATION_OVERHEAD,
            Value::Array(a) => {
                total += a.capacity() * value + ALLOCATION_OVERHEAD;
                stack.extend(a);
            }
            Value::Object(m) => {
                let entry = 8 + std::mem::size_of::<String>() + value;
                total += m.len() * (entry + 8 * 8 / 7 + 1) + 2 * ALLOCATION_OVERHEAD;
                for (k, v) in m {
                    total += k.capacity() + ALLOCATION_OVERHEAD;
                    stack.push(v);
                }
            }
            _ => {}
        }
    }
    total
}

/// The memory of a cached entry, in bytes.
fn entry_cost(entry: &CachedPackage) -> usize {
    let row = &entry.row;
    let strings = [
        &row.id,
        &row.name,
        &row.dataset_type,
        &row.state,
        &row.metadata_modified,
        &row.data,
    ];
    std::mem::size_of::<CachedPackage>()
        + strings
            .iter()
            .map(|s| s.capacity() + ALLOCATION_OVERHEAD)
            .sum::<usize>()
        + heap_bytes(&entry.dict)
        + entry.json.len()
        + ALLOCATION_OVERHEAD
}

/// A held entry and its cost, computed once.
#[derive(Clone)]
struct Slot {
    entry: Arc<CachedPackage>,
    cost: usize,
}

#[derive(Default)]
struct Entries {
    /// Keyed by id and by name.
    map: HashMap<String, Slot>,
    /// Bytes of the distinct entries.
    bytes: usize,
}

impl Entries {
    fn remove(&mut self, id: &str) {
        if let Some(slot) = self.map.remove(id) {
            self.bytes -= slot.cost;
            let name = &slot.entry.row.name;
            if self.map.get(name).is_some_and(|n| n.entry.row.id == id) {
                self.map.remove(name);
            }
        }
    }

    /// Drops entries (in the map's arbitrary order: a random eviction) until `target` bytes.
    fn shrink(&mut self, target: usize) {
        let excess = self.bytes.saturating_sub(target);
        let mut freed = 0;
        let mut victims = Vec::new();
        for (key, slot) in &self.map {
            if freed >= excess {
                break;
            }
            if *key == slot.entry.row.id {
                freed += slot.cost;
                victims.push(key.clone());
            }
        }
        for id in victims {
            self.remove(&id);
        }
    }
}

pub struct PackageCache {
    enabled: bool,
    budget: usize,
    generation: AtomicU64,
    entries: RwLock<Entries>,
}

impl PackageCache {
    /// A cache of at most `budget` bytes.
    pub fn new(enabled: bool, budget: usize) -> PackageCache {
        PackageCache {
            enabled: enabled && budget > 0,
            budget,
            generation: AtomicU64::new(0),
            entries: RwLock::default(),
        }
    }

    /// The bytes held.
    pub fn bytes(&self) -> usize {
        self.entries.read().expect("poisoned").bytes
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Read before loading from the store; pass to [`PackageCache::put`].
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    pub fn get(&self, id_or_name: &str) -> Option<Arc<CachedPackage>> {
        if !self.enabled {
            return None;
        }
        self.entries
            .read()
            .expect("poisoned")
            .map
            .get(id_or_name)
            .map(|s| s.entry.clone())
    }

    /// Stores an entry read under `generation`, unless something was invalidated since;
    /// returns it either way.
    pub fn put(&self, generation: u64, entry: CachedPackage) -> Arc<CachedPackage> {
        let entry = Arc::new(entry);
        if !self.enabled {
            return entry;
        }
        let cost = entry_cost(&entry);
        if cost > self.budget / 10 {
            // One huge dataset would push out a tenth of the cache.
            return entry;
        }
        let mut entries = self.entries.write().expect("poisoned");
        if self.generation() != generation {
            return entry;
        }
        entries.remove(&entry.row.id);
        if entries.bytes + cost > self.budget {
            entries.shrink(self.budget / 10 * 9 - cost);
        }
        let slot = Slot {
            entry: entry.clone(),
            cost,
        };
        entries.map.insert(slot.entry.row.id.clone(), slot.clone());
        entries.map.insert(slot.entry.row.name.clone(), slot);
        entries.bytes += cost;
        entry
    }

    /// Drops the entries of these dataset ids.
    pub fn invalidate<'a>(&self, ids: impl IntoIterator<Item = &'a String>) {
        if !self.enabled {
            return;
        }
        let mut entries = self.entries.write().expect("poisoned");
        self.generation.fetch_add(1, Ordering::AcqRel);
        for id in ids {
            entries.remove(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::PackageRow;

    fn row(id: &str, name: &str) -> PackageRow {
        PackageRow {
            id: id.into(),
            name: name.into(),
            dataset_type: "dataset".into(),
            state: "active".into(),
            private: false,
            owner_org: None,
            creator_user_id: None,
            metadata_modified: String::new(),
            data: "x".repeat(1000),
        }
    }

    #[test]
    fn the_cache_stays_within_its_byte_budget() {
        let budget = 1_000_000;
        let c = PackageCache::new(true, budget);
        for i in 0..10_000 {
            let g = c.generation();
            c.put(
                g,
                CachedPackage::new(row(&format!("id-{i}"), &format!("name-{i}")), Value::Null),
            );
            assert!(c.bytes() <= budget, "{} bytes after {i} entries", c.bytes());
        }
        let held = c.entries.read().unwrap().map.len();
        assert!(held > 100, "the cache still holds entries ({held} keys)");
        // Every held entry is there under both keys, and the byte count matches them.
        let entries = c.entries.read().unwrap();
        let distinct: std::collections::HashSet<&str> = entries
            .map
            .values()
            .map(|s| s.entry.row.id.as_str())
            .collect();
        assert_eq!(entries.map.len(), 2 * distinct.len());
        let sum: usize = entries
            .map
            .iter()
            .filter(|(k, s)| **k == s.entry.row.id)
            .map(|(_, s)| s.cost)
            .sum();
        assert_eq!(sum, entries.bytes);
    }

    #[test]
    fn stale_reads_are_not_stored_and_invalidation_drops_both_keys() {
        let c = PackageCache::new(true, 10_000_000);
        let g = c.generation();
        c.put(g, CachedPackage::new(row("1", "a"), Value::Null));
        assert!(c.get("1").is_some() && c.get("a").is_some());
        let before = c.generation();
        c.invalidate(&["1".to_string()]);
        assert!(c.get("1").is_none() && c.get("a").is_none());
        c.put(before, CachedPackage::new(row("1", "a"), Value::Null));
        assert!(
            c.get("1").is_none(),
            "a read from before the invalidation is dropped"
        );
        assert!(PackageCache::new(false, 10_000_000).get("1").is_none());
        assert_eq!(c.bytes(), 0);
    }
}
