//! The web front end: the pages a person browses (home, dataset search, dataset and resource
//! pages, organizations, groups) and what crawlers read (`/robots.txt`, `/sitemap.xml`), at
//! CKAN's URLs, in English and German (`/de/…` or `Accept-Language`).
//!
//! Every page reads through the Action API's actions, as the caller: a private dataset is on
//! a page exactly when `package_show` would give it to that caller. Pages are rendered from
//! templates in layers ([`templates`]): a plugin overrides or extends any template block by
//! block with [`register_templates!`], the operator with `catalog.web.extra_template_paths`.
//! See the book's theming chapter and examples/theme.
#![forbid(unsafe_code)]

mod admin;
mod forms;
mod harvest;
mod i18n;
mod pages;
mod publish;
mod render;
mod session;
pub mod templates;
mod user;

use std::sync::Arc;

use catalog_framework::prelude::*;

#[doc(hidden)]
pub mod __private {
    pub use catalog_framework::register_at;
}

/// What the pages share, made once at start-up: the template environment and the catalogs.
pub struct Web {
    env: minijinja::Environment<'static>,
    layers: Arc<templates::Layers>,
    sessions: std::sync::OnceLock<session::Sessions>,
    /// The dataset pages' derived parts, by the hash of the dict they came from.
    derived: std::sync::Mutex<std::collections::HashMap<[u8; 32], Arc<pages::Derived>>>,
    /// Anonymous visitors' dataset pages as rendered, by a hash of everything they show.
    rendered: std::sync::Mutex<pages::RenderedPages>,
}

impl Web {
    fn derived_get(&self, key: &[u8; 32]) -> Option<Arc<pages::Derived>> {
        let map = self.derived.lock().unwrap_or_else(|e| e.into_inner());
        map.get(key).cloned()
    }

    fn derived_put(&self, key: [u8; 32], value: Arc<pages::Derived>) {
        let mut map = self.derived.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= pages::DERIVED_ENTRIES {
            map.clear();
        }
        map.insert(key, value);
    }

    fn rendered_get(&self, key: &[u8; 32]) -> Option<Arc<pages::Rendered>> {
        let map = self.rendered.lock().unwrap_or_else(|e| e.into_inner());
        map.get(key)
    }

    fn rendered_put(&self, key: [u8; 32], value: Arc<pages::Rendered>) {
        let mut map = self.rendered.lock().unwrap_or_else(|e| e.into_inner());
        map.put(key, value);
    }

    /// The session secret and login limits, set up on first use (the secret may live in the
    /// data directory, which the app knows).
    fn sessions(&self, app: &AppState) -> &session::Sessions {
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

struct WebPlugin;

const MIGRATIONS: &[Migration] = &[Migration {
    version: "0001_web_session",
    sqlite: include_str!("../migrations/0001_web_session.sql"),
    postgres: include_str!("../migrations/0001_web_session.sql"),
}];

#[async_trait]
impl Plugin for WebPlugin {
    fn name(&self) -> &'static str {
        "web"
    }
    fn migrations(&self) -> &'static [Migration] {
        MIGRATIONS
    }
    fn configure(&self, setup: &mut Setup<'_>) -> anyhow::Result<()> {
        let sets = setup
            .registry
            .resolve::<templates::TemplateRegistration>("template set")?;
        let folders = extra_template_paths(setup.config);
        let layers = Arc::new(templates::Layers::load(
            sets.iter().map(|(n, s)| (n.clone(), &***s)).collect(),
            &folders,
        )?);
        let env = render::environment(layers.clone());
        // Every template must at least parse: a broken theme stops the start, not a visitor.
        for name in pages::TEMPLATES {
            env.get_template(name)
                .map_err(|e| anyhow::anyhow!("web template {name}: {e:#}"))?;
        }
        setup.insert(Web {
            env,
            layers,
            sessions: std::sync::OnceLock::new(),
            derived: Default::default(),
            rendered: Default::default(),
        });
        Ok(())
    }
    fn summary(&self, registry: &Registry) -> Vec<(&'static str, Value)> {
        let names = registry
            .resolve::<templates::TemplateRegistration>("template set")
            .map(|m| m.into_keys().collect::<Vec<_>>())
            .unwrap_or_default();
        vec![("web_template_sets", names.into())]
    }
}

/// `catalog.web.extra_template_paths` (CKAN's `extra_template_paths`): folders, comma- or
/// space-separated, or a list.
fn extra_template_paths(config: &catalog_framework::store::config::Config) -> Vec<String> {
    let web = config.catalog.other.get("web");
    match web.and_then(|w| w.get("extra_template_paths")) {
        Some(Value::String(s)) => s
            .split([',', ' '])
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

register_plugin!(WebPlugin);
catalog_framework::register_event_subscriber!("web-sessions", session::EndSessions);
register_routes!("web", pages::routes);
register_templates!("web", 0, pages::BUILT_IN);
catalog_framework::register_page!("web-home", pages::SharedHtml { path: "/" });
catalog_framework::register_page!(
    "web-dataset",
    pages::SharedHtml {
        path: "/dataset/{file}"
    }
);
catalog_framework::register_page!(
    "web-dataset-series",
    pages::SharedHtml {
        path: "/dataset_series/{file}"
    }
);

/// Every message the built-in templates pass to `_()`: what each catalog must translate.
#[cfg(test)]
pub(crate) fn messages_in_templates() -> Vec<String> {
    let re = regex_lite_messages();
    let mut out: Vec<String> = pages::BUILT_IN
        .iter()
        .flat_map(|(_, src)| re(src))
        .chain(pages::MESSAGES.iter().map(|m| m.to_string()))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The msgids of `_("…")` and `ngettext("…", …)` calls in a template's text (double-quoted
/// literals only, as the templates write them; `ngettext`'s singular is its msgid).
#[cfg(test)]
fn regex_lite_messages() -> impl Fn(&str) -> Vec<String> {
    |src: &str| {
        let mut out = Vec::new();
        let mut rest = src;
        while let Some((at, len)) = ["_(\"", "ngettext(\""]
            .iter()
            .filter_map(|o| rest.find(o).map(|at| (at, o.len())))
            .min()
        {
            let after = &rest[at + len..];
            let Some(end) = after.find('"') else { break };
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
        out
    }
}
