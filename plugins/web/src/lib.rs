//! The web front end: the pages a person browses (home, dataset search, dataset and resource
//! pages, organizations, groups) and what crawlers read (`/robots.txt`, `/sitemap.xml`), at
//! CKAN's URLs, in English and German (`/de/…` or `Accept-Language`).
//!
//! Every page reads through the Action API's actions, as the caller: a private dataset is on
//! a page exactly when `package_show` would give it to that caller. Pages are rendered from
//! templates in layers ([`templates`]): a plugin overrides or extends any template block by
//! block with [`register_templates!`], the operator with `catalog.web.extra_template_paths`.
//! See the book's theming chapter and examples/theme.
//!
//! # Where things live
//!
//! - Which handler answers which URL: `routes`, the only module that imports the page and
//!   form files. It chains the routes the form files declare (`user::routes` …) and routes
//!   the pages' handlers.
//! - The pages a person browses, one file per page family in `pages/`: `home`, `search`
//!   (`/dataset/`, and the search the organization, group and dashboard pages run), `dataset`
//!   (with its activity stream), `resource` (with its table previews), `group` (organizations
//!   and groups), `sitemap` (with `/robots.txt`), `stylesheet`; `pages/mod.rs` holds what
//!   the pages share (pagination, alternates).
//! - The form pages: `user` (login, logout, registration, a user's page, the dashboard and
//!   API tokens), `publish` (creating, editing and deleting datasets and resources,
//!   following), `admin` (the sysadmin's config and trash), `harvest` (the harvest sources'
//!   pages); `forms` is what they share (reading a posted form, the CSRF check, redirects).
//! - What every handler starts from: `visit` (the visitor and language, an action's params,
//!   the error page). Below it: `render` (the template environment's functions and filters,
//!   rendering a page and answering with it), `session` (session cookies, CSRF tokens, login
//!   limits), `i18n` (locales and message catalogs), [`templates`] (the layers).
//! - `state`: [`Web`], the state made at start-up, with `cache`'s tables of the dataset pages'
//!   derived parts and rendered pages; `built_in`: the built-in template set and the list of
//!   templates checked at start-up.
//!
//! Imports run one way: `routes` → the page and form files (`user`'s dashboard runs
//! `pages::search`'s search) → `forms` → `visit` → `render` → `state` → `cache`, `session`,
//! `i18n`, `templates`.
#![forbid(unsafe_code)]

mod admin;
mod built_in;
mod cache;
mod forms;
mod harvest;
mod i18n;
mod pages;
mod publish;
mod render;
mod routes;
mod session;
mod state;
pub mod templates;
mod user;
mod visit;

use std::sync::Arc;

use catalog_framework::migration;
use catalog_framework::prelude::*;

pub use state::Web;

#[doc(hidden)]
pub mod __private {
    pub use catalog_framework::register_at;
}

struct WebPlugin;

const MIGRATIONS: &[Migration] = &[migration!("../migrations", "0001_web_session", portable)];

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
        for name in built_in::TEMPLATES {
            env.get_template(name)
                .map_err(|e| anyhow::anyhow!("web template {name}: {e:#}"))?;
        }
        setup.insert(Web::new(env, layers));
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
register_routes!("web", routes::routes);
register_templates!("web", 0, built_in::BUILT_IN);
catalog_framework::register_page!("web-home", routes::SharedHtml { path: "/" });
catalog_framework::register_page!(
    "web-dataset",
    routes::SharedHtml {
        path: "/dataset/{file}"
    }
);
catalog_framework::register_page!(
    "web-dataset-series",
    routes::SharedHtml {
        path: "/dataset_series/{file}"
    }
);
