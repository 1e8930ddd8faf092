//! A cache of rendered `package_show` dicts for the embedded (single-process) deployment.
//!
//! Entries are dropped when the search indexer drains a dataset from the outbox, which every
//! committed change to a dataset (or to a group it belongs to) passes through before the
//! writing request answers. A reader that started before an invalidation never stores what it
//! read (the generation check), so a stale dict cannot be cached after the change.
//!
//! It is enabled on SQLite only: on PostgreSQL other API nodes write too, and this node would
//! not see their outbox.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use serde_json::Value;

use crate::store_queries::PackageRow;

/// Entries kept at most; the cache is emptied when it would grow past this.
const CAPACITY: usize = 50_000;

/// A dataset's row (for authorization) and its `package_show` dict.
pub struct CachedPackage {
    pub row: PackageRow,
    pub dict: Value,
}

pub struct PackageCache {
    enabled: bool,
    generation: AtomicU64,
    /// Keyed by id and by name.
    entries: RwLock<HashMap<String, Arc<CachedPackage>>>,
}

impl PackageCache {
    pub fn new(enabled: bool) -> PackageCache {
        PackageCache {
            enabled,
            generation: AtomicU64::new(0),
            entries: RwLock::default(),
        }
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
            .get(id_or_name)
            .cloned()
    }

    /// Stores an entry read under `generation`, unless something was invalidated since.
    pub fn put(&self, generation: u64, entry: CachedPackage) {
        if !self.enabled {
            return;
        }
        let mut map = self.entries.write().expect("poisoned");
        if self.generation() != generation {
            return;
        }
        if map.len() + 2 > CAPACITY {
            map.clear();
        }
        let entry = Arc::new(entry);
        map.insert(entry.row.id.clone(), entry.clone());
        map.insert(entry.row.name.clone(), entry);
    }

    /// Drops the entries of these dataset ids.
    pub fn invalidate<'a>(&self, ids: impl IntoIterator<Item = &'a String>) {
        if !self.enabled {
            return;
        }
        let mut map = self.entries.write().expect("poisoned");
        self.generation.fetch_add(1, Ordering::AcqRel);
        for id in ids {
            if let Some(e) = map.remove(id) {
                if map.get(&e.row.name).is_some_and(|n| n.row.id == *id) {
                    map.remove(&e.row.name);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            data: String::new(),
        }
    }

    #[test]
    fn stale_reads_are_not_stored_and_invalidation_drops_both_keys() {
        let c = PackageCache::new(true);
        let g = c.generation();
        c.put(
            g,
            CachedPackage {
                row: row("1", "a"),
                dict: Value::Null,
            },
        );
        assert!(c.get("1").is_some() && c.get("a").is_some());
        let before = c.generation();
        c.invalidate(&["1".to_string()]);
        assert!(c.get("1").is_none() && c.get("a").is_none());
        c.put(
            before,
            CachedPackage {
                row: row("1", "a"),
                dict: Value::Null,
            },
        );
        assert!(
            c.get("1").is_none(),
            "a read from before the invalidation is dropped"
        );
        assert!(PackageCache::new(false).get("1").is_none());
    }
}
