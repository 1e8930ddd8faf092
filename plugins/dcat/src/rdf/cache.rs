//! Serialized dataset documents, keyed by everything they are made of: the dataset dict as
//! `package_show` gives it to the caller (hashed from its JSON text), the format, the profile
//! names and the site title. A dataset that changes (or whose organization is renamed) has
//! another dict, so another key: nothing is ever invalidated, old entries just age out.
//! Bounded in bytes; a document over a sixteenth of the budget is not kept.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

const MAX_BYTES: usize = 32 << 20;

#[derive(Default)]
struct Inner {
    map: HashMap<u64, Arc<[u8]>>,
    order: VecDeque<u64>,
    bytes: usize,
}

/// The cache (one per application, in the plugin's start-up state).
#[derive(Default)]
pub struct RenderCache(Mutex<Inner>);

impl RenderCache {
    /// The key of a document: its dataset's JSON text and how it is rendered.
    pub fn key(dataset_json: &[u8], format: &str, profiles: &[&str], site_title: &str) -> u64 {
        let mut h = DefaultHasher::new();
        dataset_json.hash(&mut h);
        format.hash(&mut h);
        profiles.hash(&mut h);
        site_title.hash(&mut h);
        h.finish()
    }

    pub fn get(&self, key: u64) -> Option<Arc<[u8]>> {
        self.0.lock().ok()?.map.get(&key).cloned()
    }

    pub fn put(&self, key: u64, body: &[u8]) {
        if body.len() > MAX_BYTES / 16 {
            return;
        }
        let Ok(mut inner) = self.0.lock() else { return };
        if inner.map.contains_key(&key) {
            return;
        }
        while inner.bytes + body.len() > MAX_BYTES {
            let Some(old) = inner.order.pop_front() else {
                break;
            };
            if let Some(b) = inner.map.remove(&old) {
                inner.bytes -= b.len();
            }
        }
        inner.bytes += body.len();
        inner.order.push_back(key);
        inner.map.insert(key, Arc::from(body));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_kept_by_content_and_the_cache_is_bounded() {
        let c = RenderCache::default();
        let k1 = RenderCache::key(b"{\"id\":1}", "ttl", &["euro_dcat_ap_3"], "Site");
        let k2 = RenderCache::key(
            b"{\"id\":1,\"title\":\"x\"}",
            "ttl",
            &["euro_dcat_ap_3"],
            "Site",
        );
        let k3 = RenderCache::key(b"{\"id\":1}", "xml", &["euro_dcat_ap_3"], "Site");
        assert!(k1 != k2 && k1 != k3);
        c.put(k1, b"doc");
        assert_eq!(c.get(k1).as_deref(), Some(&b"doc"[..]));
        assert!(c.get(k2).is_none());
        let big = vec![0u8; MAX_BYTES / 16 - 1];
        for i in 0..40u64 {
            c.put(100 + i, &big);
        }
        let inner = c.0.lock().unwrap();
        assert!(inner.bytes <= MAX_BYTES);
        assert!(!inner.map.contains_key(&k1), "the oldest went first");
    }
}
