//! The plugin's state, made once at start-up and shared by every page: the template
//! environment and its layers, the sessions, and the dataset pages' caches.

use std::sync::Arc;

use catalog_framework::prelude::*;

use crate::cache::{Derived, Rendered, RenderedPages, DERIVED_ENTRIES};
use crate::{session, templates};

/// What the pages share, made once at start-up: the template environment and the catalogs.
pub struct Web {
    /// The template environment, over the layers.
    pub(crate) env: minijinja::Environment<'static>,
    layers: Arc<templates::Layers>,
    sessions: std::sync::OnceLock<session::Sessions>,
    /// The dataset pages' derived parts, by the hash of the dict they came from.
    derived: std::sync::Mutex<std::collections::HashMap<[u8; 32], Arc<Derived>>>,
    /// Anonymous visitors' dataset pages as rendered, by a hash of everything they show.
    rendered: std::sync::Mutex<RenderedPages>,
}

impl Web {
    /// The state for a template environment and its layers, with no session set up yet and
    /// empty caches.
    pub(crate) fn new(env: minijinja::Environment<'static>, layers: Arc<templates::Layers>) -> Web {
        Web {
            env,
            layers,
            sessions: std::sync::OnceLock::new(),
            derived: Default::default(),
            rendered: Default::default(),
        }
    }

    pub(crate) fn derived_get(&self, key: &[u8; 32]) -> Option<Arc<Derived>> {
        let map = self.derived.lock().unwrap_or_else(|e| e.into_inner());
        map.get(key).cloned()
    }

    pub(crate) fn derived_put(&self, key: [u8; 32], value: Arc<Derived>) {
        let mut map = self.derived.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= DERIVED_ENTRIES {
            map.clear();
        }
        map.insert(key, value);
    }

    pub(crate) fn rendered_get(&self, key: &[u8; 32]) -> Option<Arc<Rendered>> {
        let map = self.rendered.lock().unwrap_or_else(|e| e.into_inner());
        map.get(key)
    }

    pub(crate) fn rendered_put(&self, key: [u8; 32], value: Arc<Rendered>) {
        let mut map = self.rendered.lock().unwrap_or_else(|e| e.into_inner());
        map.put(key, value);
    }

    /// The session secret and login limits, set up on first use (the secret may live in the
    /// data directory, which the app knows).
    pub(crate) fn sessions(&self, app: &AppState) -> &session::Sessions {
        self.sessions.get_or_init(|| {
            session::Sessions::load(&app.config, &app.data_dir).unwrap_or_else(|e| {
                tracing::warn!(
                    "web sessions: {e:#}; using a secret of this process only (sessions end at restart)"
                );
                session::Sessions::ephemeral(&app.config)
            })
        })
    }

    /// The template layers from the top down (the operator's folders, then the sets by
    /// priority): what `status` and the tests report.
    pub fn layers(&self) -> Vec<&str> {
        self.layers.names()
    }
}
