//! Extension points and their registry.
//!
//! Plugins submit const registrations (a name, a priority and a constructor `fn`) through the
//! `register_*!` macros. At start-up [`Registry::build`] collects them once: for each name the
//! highest priority wins, an equal-priority clash is an error, and the result is frozen.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::context::ActionContext;
use crate::error::CkanResult;

/// Parameters of an action: the decoded JSON object (or query string / form fields).
pub type Params = Map<String, Value>;

/// One Action API function (`package_show`, …).
#[async_trait]
pub trait Action: Send + Sync + 'static {
    /// True for actions that read only; only those may be called with GET.
    fn side_effect_free(&self) -> bool {
        false
    }
    /// The text `help_show` returns.
    fn doc(&self) -> &'static str {
        ""
    }
    async fn run(&self, ctx: &mut ActionContext, params: Params) -> CkanResult<Value>;
}

/// Decides whether the caller may run an action. Sysadmins never reach it (CKAN's bypass).
#[async_trait]
pub trait AuthFunction: Send + Sync + 'static {
    /// CKAN's `auth_allow_anonymous_access`: when false, anonymous callers are refused before
    /// [`AuthFunction::check`] runs.
    fn allow_anonymous(&self) -> bool {
        false
    }
    async fn check(&self, ctx: &mut ActionContext, data: &Params) -> CkanResult<()>;
}

/// Whether a dataset dict is being created or updated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaOp {
    Create,
    Update,
}

/// What a schema may know about the call.
pub struct SchemaContext<'a> {
    pub op: SchemaOp,
    pub is_sysadmin: bool,
    pub config: &'a crate::config::Config,
}

/// Validates and converts the dataset dicts of one dataset type.
pub trait DatasetSchema: Send + Sync + 'static {
    /// Checks and normalises `data` in place. Field errors go into the returned error dict.
    fn validate(&self, data: &mut Params, ctx: &SchemaContext<'_>) -> CkanResult<()>;
    /// Adjusts a stored dict for output (`package_show`). The default leaves it as stored.
    fn show(&self, _dict: &mut Params) {}
}

/// Extra HTTP routes a plugin serves beside the Action API (downloads, RDF …).
pub type RouterFn = fn() -> axum::Router<crate::context::AppState>;

macro_rules! registration {
    ($(#[$m:meta])* $name:ident, $target:ty) => {
        $(#[$m])*
        pub struct $name {
            pub name: &'static str,
            pub priority: i32,
            pub build: fn() -> $target,
        }
        inventory::collect!($name);
    };
}

registration!(
    /// An [`Action`] submitted with [`register_action!`](crate::register_action).
    ActionRegistration, Box<dyn Action>
);
registration!(
    /// An [`AuthFunction`] submitted with [`register_auth!`](crate::register_auth).
    AuthRegistration, Box<dyn AuthFunction>
);
registration!(
    /// A [`DatasetSchema`] for a dataset type, submitted with [`register_dataset_schema!`](crate::register_dataset_schema).
    DatasetSchemaRegistration, Box<dyn DatasetSchema>
);
registration!(
    /// Routes submitted with [`register_routes!`](crate::register_routes).
    RoutesRegistration, axum::Router<crate::context::AppState>
);

registration!(
    /// A search backend, submitted with [`register_search_backend!`](crate::register_search_backend).
    SearchBackendRegistration, Box<dyn crate::search::SearchBackendFactory>
);

registration!(
    /// A DCAT profile, submitted with [`register_dcat_profile!`](crate::register_dcat_profile).
    DcatProfileRegistration, Box<dyn crate::dcat::DcatProfile>
);

/// A plugin's name, as `status_show` lists it in `extensions`.
pub struct PluginRegistration {
    pub name: &'static str,
}
inventory::collect!(PluginRegistration);

/// Registers an [`Action`]: `register_action!("package_show", PackageShow);`
/// or with an explicit priority (higher wins): `register_action!("package_show", Mine, priority = 10);`
#[macro_export]
macro_rules! register_action {
    ($name:literal, $value:expr) => {
        $crate::register_action!($name, $value, priority = 0);
    };
    ($name:literal, $value:expr, priority = $p:expr) => {
        $crate::__private::inventory::submit! {
            $crate::registry::ActionRegistration { name: $name, priority: $p, build: || Box::new($value) }
        }
    };
}

/// Registers an [`AuthFunction`] for an action name.
#[macro_export]
macro_rules! register_auth {
    ($name:literal, $value:expr) => {
        $crate::register_auth!($name, $value, priority = 0);
    };
    ($name:literal, $value:expr, priority = $p:expr) => {
        $crate::__private::inventory::submit! {
            $crate::registry::AuthRegistration { name: $name, priority: $p, build: || Box::new($value) }
        }
    };
}

/// Registers a [`DatasetSchema`] for a dataset type.
#[macro_export]
macro_rules! register_dataset_schema {
    ($name:literal, $value:expr) => {
        $crate::register_dataset_schema!($name, $value, priority = 0);
    };
    ($name:literal, $value:expr, priority = $p:expr) => {
        $crate::__private::inventory::submit! {
            $crate::registry::DatasetSchemaRegistration { name: $name, priority: $p, build: || Box::new($value) }
        }
    };
}

/// Registers extra routes: `register_routes!("download", routes);` where `fn routes() -> Router<AppState>`.
#[macro_export]
macro_rules! register_routes {
    ($name:literal, $f:path) => {
        $crate::register_routes!($name, $f, priority = 0);
    };
    ($name:literal, $f:path, priority = $p:expr) => {
        $crate::__private::inventory::submit! {
            $crate::registry::RoutesRegistration { name: $name, priority: $p, build: $f }
        }
    };
}

/// Names a plugin for `status_show`'s `extensions`.
#[macro_export]
macro_rules! register_plugin {
    ($name:literal) => {
        $crate::__private::inventory::submit! {
            $crate::registry::PluginRegistration { name: $name }
        }
    };
}

/// A registry-building failure: two registrations of one name at one priority.
#[derive(Debug, thiserror::Error)]
#[error("{kind} `{name}` is registered twice at priority {priority}; give one of them a higher priority")]
pub struct RegistryClash {
    pub kind: &'static str,
    pub name: String,
    pub priority: i32,
}

/// The winning registration of a name so far: priority, constructor, how many share that priority.
type Best<T> = (i32, fn() -> T, usize);

fn resolve<T>(
    kind: &'static str,
    entries: impl Iterator<Item = (&'static str, i32, fn() -> T)>,
) -> Result<BTreeMap<String, Arc<T>>, RegistryClash> {
    let mut best: BTreeMap<&'static str, Best<T>> = BTreeMap::new();
    for (name, priority, build) in entries {
        match best.get_mut(name) {
            Some(cur) if cur.0 == priority => cur.2 += 1,
            Some(cur) if cur.0 > priority => {}
            _ => {
                best.insert(name, (priority, build, 1));
            }
        }
    }
    let mut out = BTreeMap::new();
    for (name, (priority, build, count)) in best {
        if count > 1 {
            return Err(RegistryClash {
                kind,
                name: name.to_string(),
                priority,
            });
        }
        out.insert(name.to_string(), Arc::new(build()));
    }
    Ok(out)
}

/// The frozen set of everything registered, built once at start-up.
pub struct Registry {
    actions: BTreeMap<String, Arc<Box<dyn Action>>>,
    auth: BTreeMap<String, Arc<Box<dyn AuthFunction>>>,
    schemas: BTreeMap<String, Arc<Box<dyn DatasetSchema>>>,
    routes: BTreeMap<String, Arc<axum::Router<crate::context::AppState>>>,
    search_backends: BTreeMap<String, Arc<Box<dyn crate::search::SearchBackendFactory>>>,
    dcat_profiles: BTreeMap<String, Arc<Box<dyn crate::dcat::DcatProfile>>>,
    plugins: Vec<&'static str>,
}

impl Registry {
    /// Collects every registration linked into the binary.
    pub fn build() -> Result<Registry, RegistryClash> {
        let actions = resolve(
            "action",
            inventory::iter::<ActionRegistration>().map(|r| (r.name, r.priority, r.build)),
        )?;
        let auth = resolve(
            "auth function",
            inventory::iter::<AuthRegistration>().map(|r| (r.name, r.priority, r.build)),
        )?;
        let schemas = resolve(
            "dataset schema",
            inventory::iter::<DatasetSchemaRegistration>().map(|r| (r.name, r.priority, r.build)),
        )?;
        let routes = resolve(
            "routes",
            inventory::iter::<RoutesRegistration>().map(|r| (r.name, r.priority, r.build)),
        )?;
        let search_backends = resolve(
            "search backend",
            inventory::iter::<SearchBackendRegistration>().map(|r| (r.name, r.priority, r.build)),
        )?;
        let dcat_profiles = resolve(
            "DCAT profile",
            inventory::iter::<DcatProfileRegistration>().map(|r| (r.name, r.priority, r.build)),
        )?;
        let mut plugins: Vec<&'static str> = inventory::iter::<PluginRegistration>()
            .map(|p| p.name)
            .collect();
        plugins.sort_unstable();
        plugins.dedup();
        Ok(Registry {
            actions,
            auth,
            schemas,
            routes,
            search_backends,
            dcat_profiles,
            plugins,
        })
    }

    pub fn action(&self, name: &str) -> Option<&Arc<Box<dyn Action>>> {
        self.actions.get(name)
    }

    pub fn auth(&self, name: &str) -> Option<&Arc<Box<dyn AuthFunction>>> {
        self.auth.get(name)
    }

    pub fn schema(&self, dataset_type: &str) -> Option<&Arc<Box<dyn DatasetSchema>>> {
        self.schemas
            .get(dataset_type)
            .or_else(|| self.schemas.get("dataset"))
    }

    pub fn routes(&self) -> impl Iterator<Item = &axum::Router<crate::context::AppState>> {
        self.routes.values().map(|r| r.as_ref())
    }

    pub fn search_backend(
        &self,
        name: &str,
    ) -> Option<&Arc<Box<dyn crate::search::SearchBackendFactory>>> {
        self.search_backends.get(name)
    }

    pub fn dcat_profile(&self, name: &str) -> Option<&Arc<Box<dyn crate::dcat::DcatProfile>>> {
        self.dcat_profiles.get(name)
    }

    /// True when some plugin registered a DCAT profile.
    pub fn has_dcat_profiles(&self) -> bool {
        !self.dcat_profiles.is_empty()
    }

    pub fn plugins(&self) -> &[&'static str] {
        &self.plugins
    }

    /// Every registered name by kind: logged at start-up and snapshot-tested.
    pub fn summary(&self) -> Value {
        let names = |m: Vec<&String>| Value::from(m.into_iter().cloned().collect::<Vec<_>>());
        serde_json::json!({
            "actions": names(self.actions.keys().collect()),
            "auth_functions": names(self.auth.keys().collect()),
            "dataset_schemas": names(self.schemas.keys().collect()),
            "routes": names(self.routes.keys().collect()),
            "search_backends": names(self.search_backends.keys().collect()),
            "dcat_profiles": names(self.dcat_profiles.keys().collect()),
            "plugins": self.plugins,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one() -> Box<dyn Fn() -> i32> {
        Box::new(|| 1)
    }
    fn two() -> Box<dyn Fn() -> i32> {
        Box::new(|| 2)
    }

    #[test]
    fn higher_priority_wins_and_equal_priority_clashes() {
        let m = resolve::<Box<dyn Fn() -> i32>>(
            "x",
            [("a", 0, one as fn() -> _), ("a", 5, two)].into_iter(),
        )
        .unwrap();
        assert_eq!((m["a"])(), 2);
        let err = resolve::<Box<dyn Fn() -> i32>>(
            "x",
            [("a", 1, one as fn() -> _), ("a", 1, two)].into_iter(),
        )
        .err()
        .unwrap();
        assert_eq!(err.name, "a");
        assert!(err.to_string().contains("registered twice"));
    }
}
