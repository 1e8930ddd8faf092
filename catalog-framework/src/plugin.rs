//! Plugins and their lifecycle (CKAN's `ckan.plugins`, bevy's plugin groups).
//!
//! A plugin is one crate. It registers a [`Plugin`] with [`register_plugin!`](crate::register_plugin)
//! and its extensions (actions, auth functions, schemas, routes, search backends, event
//! subscribers, and what other plugins' extension points take, such as DCAT profiles) with the other `register_*!` macros; each registration carries
//! the name of the crate it was made in, so switching a plugin off in `catalog.plugins`
//! removes everything its crate registered.
//!
//! At start-up, for each enabled plugin in name order: [`Plugin::configure`] (read and
//! validate its config section, put its settings in the app's [`Extensions`]), then its
//! [`Plugin::migrations`] (each applied once, recorded per plugin), then, once the app is
//! built, [`Plugin::start`].

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::config::Config;
use crate::context::AppState;
pub use crate::store::Migration;

/// What a plugin may do while the app is being configured, before it serves.
pub struct Setup<'a> {
    pub config: &'a Config,
    /// Every enabled registration: a plugin resolves its own extension points here
    /// ([`Registry::resolve`](crate::registry::Registry::resolve)).
    pub registry: &'a crate::registry::Registry,
    pub(crate) extensions: &'a mut Extensions,
}

impl<'a> Setup<'a> {
    /// What the host hands each plugin's `configure` hook, in turn.
    pub fn new(
        config: &'a Config,
        registry: &'a crate::registry::Registry,
        extensions: &'a mut Extensions,
    ) -> Setup<'a> {
        Setup {
            config,
            registry,
            extensions,
        }
    }

    /// The plugin's config section: the value at a dotted key (`catalogext.dcat`), or null.
    pub fn section(&self, dotted: &str) -> Value {
        config_section(self.config, dotted)
    }

    /// Keeps a value for the plugin's actions and routes: `ctx.app.extension::<T>()`.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.extensions.insert(value);
    }

    /// Makes `schema` the [`DatasetSchema`](crate::registry::DatasetSchema) of `dataset_type`
    /// from start-up on, in place of any registered with `register_dataset_schema!` (a
    /// plugin that reads dataset types from its configuration, as the scheming plugin does).
    pub fn add_dataset_schema(
        &mut self,
        dataset_type: &str,
        schema: Box<dyn crate::registry::DatasetSchema>,
    ) {
        self.extensions
            .dataset_schemas
            .push((dataset_type.to_string(), schema));
    }
}

/// The value at a dotted key of the configuration (`catalog.search`, `catalogext.dcat`).
pub fn config_section(config: &Config, dotted: &str) -> Value {
    let mut v = serde_json::to_value(config).unwrap_or(Value::Null);
    for part in dotted.split('.') {
        v = match v {
            Value::Object(mut m) => m.remove(part).unwrap_or(Value::Null),
            _ => Value::Null,
        };
    }
    v
}

/// A plugin: its name (as `catalog.plugins` and `status_show.extensions` spell it) and the
/// hooks of its lifecycle. Every hook has a default that does nothing.
#[async_trait]
pub trait Plugin: Send + Sync + 'static {
    /// The plugin's name: lower case, words joined by `_` (`-` is accepted in config).
    fn name(&self) -> &'static str;

    /// Whether the plugin is enabled when `catalog.plugins` is not set. Search backends are
    /// enabled only when `catalog.search.backend` names them.
    fn enabled_by_default(&self, _config: &Config) -> bool {
        true
    }

    /// Actions the plugin registers that this config switches off: they are left out of the
    /// registry, so a call answers as for an action that does not exist (CKAN registers
    /// `datastore_search_sql` only when `ckan.datastore.sqlsearch.enabled` is set).
    fn switched_off_actions(&self, _config: &Config) -> Vec<&'static str> {
        Vec::new()
    }

    /// Reads and validates the plugin's config section; an error stops start-up.
    fn configure(&self, _setup: &mut Setup<'_>) -> anyhow::Result<()> {
        Ok(())
    }

    /// The plugin's own tables, created and changed in version order.
    fn migrations(&self) -> &'static [Migration] {
        &[]
    }

    /// Entries the plugin adds to the registry's summary (logged at start-up and
    /// snapshot-tested), such as the names registered at its own extension points.
    fn summary(&self, _registry: &crate::registry::Registry) -> Vec<(&'static str, Value)> {
        Vec::new()
    }

    /// Queues of this plugin's background jobs that get workers of their own in
    /// `catalog serve` (name, number of workers), so that its jobs neither wait behind the
    /// `default` queue's nor hold them up. None by default. With `catalog.jobs.workers = 0` the
    /// server runs no worker at all, these included (`catalog jobs worker <queue> …` does).
    fn worker_queues(&self) -> Vec<(&'static str, usize)> {
        Vec::new()
    }

    /// Runs once the app is built and migrated, before the server accepts requests.
    async fn start(&self, _app: &AppState) -> anyhow::Result<()> {
        Ok(())
    }
}

/// A plugin that has nothing but a name: `register_plugin!("my_plugin");`.
pub struct NamedPlugin(pub &'static str);

#[async_trait]
impl Plugin for NamedPlugin {
    fn name(&self) -> &'static str {
        self.0
    }
}

/// The plugin of a search backend: enabled by default only when `catalog.search.backend`
/// names its backend, so `status_show` lists the backend in use and not the others.
pub struct SearchBackendPlugin {
    pub name: &'static str,
    /// The backend's name in `catalog.search.backend`.
    pub backend: &'static str,
}

#[async_trait]
impl Plugin for SearchBackendPlugin {
    fn name(&self) -> &'static str {
        self.name
    }
    fn enabled_by_default(&self, config: &Config) -> bool {
        config.catalog.search.backend == self.backend
    }
}

/// A [`Plugin`] registered from a crate.
pub struct PluginRegistration {
    /// `CARGO_PKG_NAME` of the registering crate.
    pub crate_name: &'static str,
    pub build: fn() -> Box<dyn Plugin>,
}
inventory::collect!(PluginRegistration);

/// Registers the crate's plugin: `register_plugin!("my_plugin");` for a plugin with only a
/// name, or `register_plugin!(MyPlugin);` for a type implementing [`Plugin`].
#[macro_export]
macro_rules! register_plugin {
    ($name:literal) => {
        $crate::register_plugin!($crate::__private::NamedPlugin($name));
    };
    ($value:expr) => {
        $crate::__private::inventory::submit! {
            $crate::__private::PluginRegistration {
                crate_name: env!("CARGO_PKG_NAME"),
                build: || Box::new($value),
            }
        }
    };
}

/// Values plugins keep for the app's lifetime, one per type.
#[derive(Default)]
pub struct Extensions {
    map: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    /// Dataset schemas plugins added while configuring ([`Setup::add_dataset_schema`]), for
    /// the registry to adopt ([`Registry::adopt_dataset_schemas`](crate::registry::Registry::adopt_dataset_schemas)).
    pub(crate) dataset_schemas: Vec<(String, Box<dyn crate::registry::DatasetSchema>)>,
}

impl Extensions {
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.map.insert(TypeId::of::<T>(), Arc::new(value));
    }

    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.map.get(&TypeId::of::<T>())?.downcast_ref()
    }
}

/// The registered plugins and which of them are enabled.
pub struct PluginSet {
    /// Enabled plugins by name.
    pub(crate) enabled: BTreeMap<&'static str, Arc<dyn Plugin>>,
    /// Crates of registered plugins that are not enabled: their registrations are left out.
    pub(crate) disabled_crates: BTreeSet<&'static str>,
    /// Actions the enabled plugins switch off under this config.
    pub(crate) switched_off: BTreeSet<&'static str>,
}

/// `my-plugin` and `my_plugin` name one plugin.
fn normalize(name: &str) -> String {
    name.trim().replace('-', "_")
}

impl PluginSet {
    /// Every registered plugin, enabled.
    pub fn all() -> anyhow::Result<PluginSet> {
        Self::choose(|_| true, None)
    }

    /// Every registered plugin but the ones named, enabled.
    pub fn all_but(names: &[&str]) -> anyhow::Result<PluginSet> {
        Self::choose(|p| !names.contains(&p.name()), None)
    }

    /// The plugins `catalog.plugins` names, or the ones enabled by default when it is unset.
    /// A name no plugin has is an error that lists the registered ones.
    pub fn from_config(config: &Config) -> anyhow::Result<PluginSet> {
        let mut set = match &config.catalog.plugins {
            None => Self::choose(|p| p.enabled_by_default(config), None)?,
            Some(list) => Self::choose(|_| false, Some(&list.0))?,
        };
        set.switched_off = set
            .enabled
            .values()
            .flat_map(|p| p.switched_off_actions(config))
            .collect();
        Ok(set)
    }

    fn choose(
        default: impl Fn(&dyn Plugin) -> bool,
        named: Option<&[String]>,
    ) -> anyhow::Result<PluginSet> {
        let mut registered: BTreeMap<&'static str, (&'static str, Arc<dyn Plugin>)> =
            BTreeMap::new();
        for r in inventory::iter::<PluginRegistration>() {
            let plugin: Arc<dyn Plugin> = Arc::from((r.build)());
            let name = plugin.name();
            if name.is_empty()
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
            {
                anyhow::bail!(
                    "plugin name `{name}` (crate {}) must be lower case letters, digits and `_`",
                    r.crate_name
                );
            }
            if let Some((other, _)) = registered.get(name) {
                if *other == r.crate_name {
                    anyhow::bail!("plugin `{name}` is registered twice by {other}");
                } else {
                    anyhow::bail!(
                        "plugin `{}` is registered by two crates: {other} and {}",
                        plugin.name(),
                        r.crate_name
                    );
                }
            }
            registered.insert(plugin.name(), (r.crate_name, plugin));
        }
        let wanted: BTreeSet<String> = match named {
            Some(names) => {
                let wanted: BTreeSet<String> = names.iter().map(|n| normalize(n)).collect();
                let unknown: Vec<&String> = wanted
                    .iter()
                    .filter(|n| !registered.contains_key(n.as_str()))
                    .collect();
                if !unknown.is_empty() {
                    anyhow::bail!(
                        "catalog.plugins names unknown plugins {unknown:?} (registered: {})",
                        registered.keys().copied().collect::<Vec<_>>().join(", ")
                    );
                }
                wanted
            }
            None => registered
                .iter()
                .filter(|(_, (_, p))| default(p.as_ref()))
                .map(|(n, _)| n.to_string())
                .collect(),
        };
        let mut set = PluginSet {
            enabled: BTreeMap::new(),
            disabled_crates: BTreeSet::new(),
            switched_off: BTreeSet::new(),
        };
        // A crate with an enabled plugin keeps its registrations even if it registered a
        // second, disabled plugin.
        let enabled_crates: BTreeSet<&str> = registered
            .iter()
            .filter(|(name, _)| wanted.contains(**name))
            .map(|(_, (crate_name, _))| *crate_name)
            .collect();
        for (name, (crate_name, plugin)) in registered {
            if wanted.contains(name) {
                set.enabled.insert(name, plugin);
            } else if !enabled_crates.contains(crate_name) {
                set.disabled_crates.insert(crate_name);
            }
        }
        Ok(set)
    }

    /// Whether registrations made in `crate_name` are in: crates without a plugin always are.
    pub fn includes(&self, crate_name: &str) -> bool {
        !self.disabled_crates.contains(crate_name)
    }

    /// Enabled plugin names, sorted.
    pub fn names(&self) -> Vec<&'static str> {
        self.enabled.keys().copied().collect()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Plugin>> {
        self.enabled.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_names_are_normalized() {
        assert_eq!(normalize("search-postgres"), "search_postgres");
    }

    #[test]
    fn config_sections_are_read_by_dotted_key() {
        let c = Config::default();
        assert_eq!(config_section(&c, "catalog.search.backend"), "tantivy");
        assert!(config_section(&c, "catalogext.nothing.here").is_null());
    }
}
