//! What the dataset pages keep between visits (the tables live in [`crate::state::Web`]): the
//! parts derived from a dataset's dict, and anonymous visitors' pages as rendered.

use std::sync::Arc;

/// What a dataset page derives from the dataset's dict alone: its notes as HTML and its
/// schema.org JSON-LD (the heavy part of the page). Kept per dict: the key is a hash of the
/// dict as the visitor got it, so any change to what the visitor sees (an edit, an
/// organization's new title, a relationship the visitor may read) is a new key, never a stale
/// entry.
pub(crate) struct Derived {
    pub(crate) notes_html: String,
    pub(crate) jsonld: Option<String>,
}

/// Dicts whose derived parts are kept, at most; past that the table starts again empty.
pub(crate) const DERIVED_ENTRIES: usize = 1_000;

/// A dataset page as rendered for anonymous visitors: the body, its ETag and modification
/// time.
pub(crate) struct Rendered {
    pub(crate) body: bytes::Bytes,
    pub(crate) etag: String,
    pub(crate) modified: Option<String>,
}

/// The rendered pages kept, bounded in bytes and entries: past either bound the table starts
/// again empty.
#[derive(Default)]
pub(crate) struct RenderedPages {
    pages: std::collections::HashMap<[u8; 32], Arc<Rendered>>,
    bytes: usize,
}

const RENDERED_BYTES: usize = 64 * 1024 * 1024;
const RENDERED_ENTRIES: usize = 4_096;

impl RenderedPages {
    pub(crate) fn get(&self, key: &[u8; 32]) -> Option<Arc<Rendered>> {
        self.pages.get(key).cloned()
    }

    pub(crate) fn put(&mut self, key: [u8; 32], page: Arc<Rendered>) {
        if self.pages.len() >= RENDERED_ENTRIES || self.bytes + page.body.len() > RENDERED_BYTES {
            self.pages.clear();
            self.bytes = 0;
        }
        self.bytes += page.body.len();
        if let Some(old) = self.pages.insert(key, page) {
            self.bytes -= old.body.len();
        }
    }
}
