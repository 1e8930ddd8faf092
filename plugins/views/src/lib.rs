//! Resource views, as CKAN 2.12 keeps them: the `resource_view_*` actions, the default views
//! made when resources are created (`catalog.views.default_views`), and the view types CKAN
//! ships (`image_view`, `text_view`, `webpage_view`, `datatables_view`). See
//! book/src/user-guide/resource-views.md.
//!
//! Its extension point is the view type ([`view_type::ResourceView`]): a crate that adds one
//! depends on this one, imports [`prelude`] and registers it with
//! [`register_resource_view!`].
#![forbid(unsafe_code)]

mod actions;
mod auth;
mod defaults;
mod resources;
mod store;
pub mod types;
mod validate;
pub mod view_type;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use catalog_framework::migration;
use catalog_framework::prelude::*;

use view_type::{ConfigKey, ConfigRule, ResourceView, ResourceViewRegistration, ViewContext};

/// What a view type crate needs, with `catalog_framework::prelude::*`:
/// `use catalog_plugin_views::prelude::*;`.
pub mod prelude {
    pub use crate::register_resource_view;
    pub use crate::view_type::{
        ConfigKey, ConfigRule, ResourceView, ResourceViewRegistration, ViewContext, ViewInfo,
    };
}

#[doc(hidden)]
pub mod __private {
    pub use catalog_framework::register_at;
}

/// The plugin's state, built at start-up: the view types of enabled plugins and the settings.
pub struct Views {
    types: BTreeMap<String, Arc<Box<dyn ResourceView>>>,
    /// `catalog.views.default_views`, the unknown types left out, in the configured order.
    pub default_views: Vec<String>,
    /// What `can_view` consults.
    pub context: ViewContext,
    /// Config defaults replaced by settings (`catalog.datatables.ellipsis_length`), by view
    /// type and key.
    defaults: HashMap<(String, &'static str), Value>,
}

impl Views {
    /// The view type registered under `name`.
    pub fn view_type(&self, name: &str) -> Option<&Arc<Box<dyn ResourceView>>> {
        self.types.get(name)
    }

    /// The registered view types' names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.types.keys().map(String::as_str).collect()
    }

    /// A config key's default value, as its setting or its rule gives it.
    fn default_of(&self, view_type: &str, key: &ConfigKey) -> Option<Value> {
        if let Some(v) = self.defaults.get(&(view_type.to_string(), key.name)) {
            return Some(v.clone());
        }
        match key.rule {
            ConfigRule::Bool(b) => Some(json!(b)),
            ConfigRule::Natural(n) => Some(json!(n)),
            ConfigRule::Default(s) => Some(json!(s)),
            ConfigRule::OptionalText | ConfigRule::Optional => None,
        }
    }

    fn load(setup: &Setup<'_>) -> anyhow::Result<Views> {
        let types = setup
            .registry
            .resolve::<ResourceViewRegistration>("resource view")?;
        let key = "catalog.views.default_views";
        let configured = match setup.section(key) {
            Value::Null => vec!["image_view".to_string(), "datatables_view".to_string()],
            v => words(&v).ok_or_else(|| {
                anyhow::anyhow!("{key} must be a space-separated list of view types, not {v}")
            })?,
        };
        let mut default_views = Vec::new();
        for name in configured {
            if !types.contains_key(&name) {
                tracing::warn!(view_type = %name, "{key}: no view type of this name; skipped");
            } else if !default_views.contains(&name) {
                default_views.push(name);
            }
        }
        let formats = |name: &str, default: &str| -> anyhow::Result<Vec<String>> {
            let key = format!("catalog.preview.{name}");
            let list = match setup.section(&key) {
                Value::Null => words(&json!(default)),
                v => words(&v),
            };
            let list = list.ok_or_else(|| anyhow::anyhow!("{key} must list formats"))?;
            Ok(list.into_iter().map(|f| f.to_lowercase()).collect())
        };
        let context = ViewContext {
            site_url: setup.config.site_url().to_string(),
            image_formats: formats("image_formats", "png jpeg jpg gif")?,
            text_formats: formats("text_formats", "text/plain txt plain")?,
            xml_formats: formats("xml_formats", "xml rdf rdf+xml owl+xml atom rss")?,
            json_formats: formats("json_formats", "json")?,
            jsonp_formats: formats("jsonp_formats", "jsonp")?,
        };
        let mut defaults = HashMap::new();
        for (name, t) in &types {
            for k in t.info().schema {
                let Some(setting) = k.default_from else {
                    continue;
                };
                let v = setup.section(setting);
                if v.is_null() {
                    continue;
                }
                let bad = || anyhow::anyhow!("{setting}: {v} is not a valid default");
                let value = match k.rule {
                    ConfigRule::Natural(_) => {
                        json!(validate::natural(&v).map_err(|_| bad())?)
                    }
                    ConfigRule::Bool(_) => json!(validate::boolean(&v)),
                    ConfigRule::Default(_) => {
                        json!(v.as_str().map(str::to_string).ok_or_else(bad)?)
                    }
                    ConfigRule::OptionalText | ConfigRule::Optional => v.clone(),
                };
                defaults.insert((name.clone(), k.name), value);
            }
        }
        Ok(Views {
            types,
            default_views,
            context,
            defaults,
        })
    }
}

/// A list setting: a space- (or comma-) separated string, or a list of strings.
fn words(v: &Value) -> Option<Vec<String>> {
    match v {
        Value::String(s) => Some(
            s.split([' ', ',', '\n', '\t'])
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect(),
        ),
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map(str::to_string))
            .collect(),
        _ => None,
    }
}

/// The plugin: its table, its settings and its view types.
pub struct ViewsPlugin;

const MIGRATIONS: &[Migration] = &[migration!("../migrations", "0001_resource_view", portable)];

impl Plugin for ViewsPlugin {
    fn name(&self) -> &'static str {
        "views"
    }

    fn configure(&self, setup: &mut Setup<'_>) -> anyhow::Result<()> {
        let views = Views::load(setup)?;
        setup.insert(views);
        Ok(())
    }

    fn migrations(&self) -> &'static [Migration] {
        MIGRATIONS
    }

    fn summary(&self, registry: &Registry) -> Vec<(&'static str, Value)> {
        let names = registry
            .resolve::<ResourceViewRegistration>("resource view")
            .map(|m| m.into_keys().collect::<Vec<_>>())
            .unwrap_or_default();
        vec![("resource_view_types", names.into())]
    }
}

register_plugin!(ViewsPlugin);
register_event_subscriber!("views", defaults::DefaultViews);
