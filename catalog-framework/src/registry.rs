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
    /// True when the action's writes run in one store transaction (and, on SQLite, behind the
    /// single-writer lock): every action that is not side-effect free, except long-running
    /// maintenance (`search_index_rebuild`) that commits its own work in steps and must not
    /// hold the writer while it runs.
    fn transactional(&self) -> bool {
        !self.side_effect_free()
    }
    /// The text `help_show` returns.
    fn doc(&self) -> &'static str {
        ""
    }
    /// A JSON Schema of the action's parameters (for the OpenAPI description); `None` for an
    /// object of any keys.
    fn params_schema(&self) -> Option<Value> {
        None
    }
    /// True when another plugin wraps the implementation (a [`ChainedAction`]): its answer is
    /// then whatever the wrapper makes of it. Set by the framework only.
    fn is_wrapped(&self) -> bool {
        false
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

/// One registration record of an extension point: what a `register_*!` macro submits.
pub trait Registration: inventory::Collect {
    /// What the record builds (`Box<dyn Action>`, `Box<dyn DcatProfile>` …).
    type Target: 'static;
    fn name(&self) -> &'static str;
    fn priority(&self) -> i32;
    /// `CARGO_PKG_NAME` of the registering crate: its plugin switches it on and off.
    fn crate_name(&self) -> &'static str;
    fn builder(&self) -> fn() -> Self::Target;
}

/// Declares an extension point: a registration record type collected from every linked
/// crate. The framework declares its own with it; a plugin declares one for the extensions
/// other plugins add to it (the DCAT plugin's profiles), resolves it with
/// [`Registry::resolve`] and gives authors a `register_*!` macro that expands to
/// [`register_at!`](crate::register_at).
///
/// ```ignore
/// catalog_framework::extension_point!(
///     /// A profile, submitted with `register_profile!`.
///     pub ProfileRegistration, Box<dyn Profile>
/// );
/// ```
#[macro_export]
macro_rules! extension_point {
    ($(#[$m:meta])* $vis:vis $name:ident, $target:ty) => {
        $(#[$m])*
        $vis struct $name {
            pub name: &'static str,
            pub priority: i32,
            /// `CARGO_PKG_NAME` of the registering crate: its plugin switches it on and off.
            pub crate_name: &'static str,
            pub build: fn() -> $target,
        }
        $crate::__private::inventory::collect!($name);
        impl $crate::__private::Registration for $name {
            type Target = $target;
            fn name(&self) -> &'static str {
                self.name
            }
            fn priority(&self) -> i32 {
                self.priority
            }
            fn crate_name(&self) -> &'static str {
                self.crate_name
            }
            fn builder(&self) -> fn() -> $target {
                self.build
            }
        }
    };
}

use crate::extension_point as registration;

registration!(
    /// An [`Action`] submitted with [`register_action!`](crate::register_action).
    pub ActionRegistration, Box<dyn Action>
);
registration!(
    /// A [`ChainedAction`] submitted with [`register_chained_action!`](crate::register_chained_action).
    pub ChainedActionRegistration, Box<dyn ChainedAction>
);
registration!(
    /// An [`AuthFunction`] submitted with [`register_auth!`](crate::register_auth).
    pub AuthRegistration, Box<dyn AuthFunction>
);
registration!(
    /// A [`ChainedAuthFunction`] submitted with [`register_chained_auth!`](crate::register_chained_auth).
    pub ChainedAuthRegistration, Box<dyn ChainedAuthFunction>
);
registration!(
    /// A [`DatasetSchema`] for a dataset type, submitted with [`register_dataset_schema!`](crate::register_dataset_schema).
    pub DatasetSchemaRegistration, Box<dyn DatasetSchema>
);
registration!(
    /// Routes submitted with [`register_routes!`](crate::register_routes).
    pub RoutesRegistration, axum::Router<crate::context::AppState>
);

registration!(
    /// A search backend, submitted with [`register_search_backend!`](crate::register_search_backend).
    pub SearchBackendRegistration, Box<dyn crate::search::SearchBackendFactory>
);

registration!(
    /// An event subscriber, submitted with [`register_event_subscriber!`](crate::register_event_subscriber).
    pub EventSubscriberRegistration, Box<dyn crate::events::EventSubscriber>
);

registration!(
    /// A background job handler, submitted with [`register_job_handler!`](crate::register_job_handler).
    pub JobHandlerRegistration, Box<dyn crate::jobs::JobHandler>
);

/// Submits a registration record of the extension point `$reg` (a path to a type declared
/// with [`extension_point!`]), made in the calling crate: what every `register_*!` macro,
/// the framework's and plugins', expands to.
#[macro_export]
macro_rules! register_at {
    ($reg:path, $name:expr, $value:expr, $p:expr) => {
        $crate::__private::inventory::submit! {
            $reg {
                name: $name,
                priority: $p,
                crate_name: env!("CARGO_PKG_NAME"),
                build: || Box::new($value),
            }
        }
    };
}

/// The framework's extension points: `register_at!` with the record type under
/// `catalog_framework::registry`.
#[doc(hidden)]
#[macro_export]
macro_rules! __register {
    ($reg:ident, $name:expr, $value:expr, $p:expr) => {
        $crate::register_at!($crate::__private::$reg, $name, $value, $p);
    };
}

/// Registers an [`Action`]: `register_action!("package_show", PackageShow);`
/// or with an explicit priority (higher wins): `register_action!("package_show", Mine, priority = 10);`
#[macro_export]
macro_rules! register_action {
    ($name:expr, $value:expr) => {
        $crate::__register!(ActionRegistration, $name, $value, 0);
    };
    ($name:expr, $value:expr, priority = $p:expr) => {
        $crate::__register!(ActionRegistration, $name, $value, $p);
    };
}

/// Wraps the action registered under a name (CKAN's `@chained_action`):
/// `register_chained_action!("package_show", AddField);`. Several wrappers nest by
/// priority: the highest runs first.
#[macro_export]
macro_rules! register_chained_action {
    ($name:expr, $value:expr) => {
        $crate::__register!(ChainedActionRegistration, $name, $value, 0);
    };
    ($name:expr, $value:expr, priority = $p:expr) => {
        $crate::__register!(ChainedActionRegistration, $name, $value, $p);
    };
}

/// Registers an [`AuthFunction`] for an action name.
#[macro_export]
macro_rules! register_auth {
    ($name:expr, $value:expr) => {
        $crate::__register!(AuthRegistration, $name, $value, 0);
    };
    ($name:expr, $value:expr, priority = $p:expr) => {
        $crate::__register!(AuthRegistration, $name, $value, $p);
    };
}

/// Wraps the auth function of an action (CKAN's `@chained_auth_function`).
#[macro_export]
macro_rules! register_chained_auth {
    ($name:expr, $value:expr) => {
        $crate::__register!(ChainedAuthRegistration, $name, $value, 0);
    };
    ($name:expr, $value:expr, priority = $p:expr) => {
        $crate::__register!(ChainedAuthRegistration, $name, $value, $p);
    };
}

/// Registers a [`DatasetSchema`] for a dataset type.
#[macro_export]
macro_rules! register_dataset_schema {
    ($name:expr, $value:expr) => {
        $crate::__register!(DatasetSchemaRegistration, $name, $value, 0);
    };
    ($name:expr, $value:expr, priority = $p:expr) => {
        $crate::__register!(DatasetSchemaRegistration, $name, $value, $p);
    };
}

/// Registers extra routes: `register_routes!("download", routes);` where `fn routes() -> Router<AppState>`.
#[macro_export]
macro_rules! register_routes {
    ($name:expr, $f:path) => {
        $crate::register_routes!($name, $f, priority = 0);
    };
    ($name:expr, $f:path, priority = $p:expr) => {
        $crate::__private::inventory::submit! {
            $crate::__private::RoutesRegistration {
                name: $name, priority: $p, crate_name: env!("CARGO_PKG_NAME"), build: $f
            }
        }
    };
}

/// An override that can call the implementation it replaces (CKAN's `@chained_action`).
#[async_trait]
pub trait ChainedAction: Send + Sync + 'static {
    /// Overrides whether the action reads only; by default the wrapped action decides.
    fn side_effect_free(&self) -> Option<bool> {
        None
    }
    /// Replaces the help text; by default the wrapped action's.
    fn doc(&self) -> Option<&'static str> {
        None
    }
    /// Runs the action; `next` is the implementation this one wraps.
    async fn run(
        &self,
        next: &dyn Action,
        ctx: &mut ActionContext,
        params: Params,
    ) -> CkanResult<Value>;
}

/// An override of an auth function that can call the one it replaces.
#[async_trait]
pub trait ChainedAuthFunction: Send + Sync + 'static {
    /// Overrides anonymous access; by default the wrapped function decides.
    fn allow_anonymous(&self) -> Option<bool> {
        None
    }
    async fn check(
        &self,
        next: &dyn AuthFunction,
        ctx: &mut ActionContext,
        data: &Params,
    ) -> CkanResult<()>;
}

struct ActionChain {
    outer: Box<dyn ChainedAction>,
    next: Arc<Box<dyn Action>>,
}

#[async_trait]
impl Action for ActionChain {
    fn side_effect_free(&self) -> bool {
        self.outer
            .side_effect_free()
            .unwrap_or_else(|| self.next.side_effect_free())
    }
    fn transactional(&self) -> bool {
        match self.outer.side_effect_free() {
            Some(read) => !read,
            None => self.next.transactional(),
        }
    }
    fn doc(&self) -> &'static str {
        self.outer.doc().unwrap_or_else(|| self.next.doc())
    }
    fn params_schema(&self) -> Option<Value> {
        self.next.params_schema()
    }
    fn is_wrapped(&self) -> bool {
        true
    }
    async fn run(&self, ctx: &mut ActionContext, params: Params) -> CkanResult<Value> {
        self.outer
            .run(self.next.as_ref().as_ref(), ctx, params)
            .await
    }
}

struct AuthChain {
    outer: Box<dyn ChainedAuthFunction>,
    next: Arc<Box<dyn AuthFunction>>,
}

#[async_trait]
impl AuthFunction for AuthChain {
    fn allow_anonymous(&self) -> bool {
        self.outer
            .allow_anonymous()
            .unwrap_or_else(|| self.next.allow_anonymous())
    }
    async fn check(&self, ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
        self.outer
            .check(self.next.as_ref().as_ref(), ctx, data)
            .await
    }
}

/// Wraps each base entry in the chained registrations of its name, lowest priority innermost.
fn chain<B: ?Sized, C: ?Sized>(
    kind: &'static str,
    base: &mut BTreeMap<String, Arc<Box<B>>>,
    mut wrappers: Vec<(&'static str, i32, Box<C>)>,
    wrap: impl Fn(Box<C>, Arc<Box<B>>) -> Box<B>,
) -> anyhow::Result<()> {
    wrappers.sort_by_key(|(name, p, _)| (*name, *p));
    for pair in wrappers.windows(2) {
        if pair[0].0 == pair[1].0 && pair[0].1 == pair[1].1 {
            anyhow::bail!(RegistryClash {
                kind: if kind == "action" {
                    "chained action"
                } else {
                    "chained auth function"
                },
                name: pair[0].0.to_string(),
                priority: pair[0].1,
            });
        }
    }
    for (name, _, outer) in wrappers {
        let Some(next) = base.get(name).cloned() else {
            anyhow::bail!(
                "chained {kind} `{name}` wraps nothing: no {kind} of that name is registered"
            );
        };
        base.insert(name.to_string(), Arc::new(wrap(outer, next)));
    }
    Ok(())
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
    subscribers: Vec<Arc<Box<dyn crate::events::EventSubscriber>>>,
    job_handlers: BTreeMap<String, Arc<Box<dyn crate::jobs::JobHandler>>>,
    plugins: crate::plugin::PluginSet,
}

/// The registrations of one kind made by enabled plugins.
macro_rules! enabled {
    ($plugins:expr, $reg:ty) => {
        inventory::iter::<$reg>()
            .filter(|r| $plugins.includes(r.crate_name))
            .map(|r| (r.name, r.priority, r.build))
    };
}

impl Registry {
    /// Collects every registration linked into the binary, every plugin enabled.
    pub fn build() -> anyhow::Result<Registry> {
        Self::with_plugins(crate::plugin::PluginSet::all()?)
    }

    /// Collects the registrations of the plugins `catalog.plugins` enables.
    pub fn for_config(config: &crate::config::Config) -> anyhow::Result<Registry> {
        Self::with_plugins(crate::plugin::PluginSet::from_config(config)?)
    }

    fn with_plugins(plugins: crate::plugin::PluginSet) -> anyhow::Result<Registry> {
        let mut actions = resolve("action", enabled!(plugins, ActionRegistration))?;
        chain(
            "action",
            &mut actions,
            inventory::iter::<ChainedActionRegistration>()
                .filter(|r| plugins.includes(r.crate_name))
                .map(|r| (r.name, r.priority, (r.build)()))
                .collect(),
            |outer, next| Box::new(ActionChain { outer, next }),
        )?;
        let mut auth = resolve("auth function", enabled!(plugins, AuthRegistration))?;
        chain(
            "auth function",
            &mut auth,
            inventory::iter::<ChainedAuthRegistration>()
                .filter(|r| plugins.includes(r.crate_name))
                .map(|r| (r.name, r.priority, (r.build)()))
                .collect(),
            |outer, next| Box::new(AuthChain { outer, next }),
        )?;
        let schemas = resolve(
            "dataset schema",
            enabled!(plugins, DatasetSchemaRegistration),
        )?;
        let routes = resolve("routes", enabled!(plugins, RoutesRegistration))?;
        let search_backends = resolve(
            "search backend",
            enabled!(plugins, SearchBackendRegistration),
        )?;
        let subscribers = resolve(
            "event subscriber",
            enabled!(plugins, EventSubscriberRegistration),
        )?
        .into_values()
        .collect();
        let job_handlers = resolve("job handler", enabled!(plugins, JobHandlerRegistration))?;
        Ok(Registry {
            actions,
            auth,
            schemas,
            routes,
            search_backends,
            subscribers,
            job_handlers,
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

    /// The registrations of an extension point made by enabled plugins, by name, the
    /// highest priority winning; two of one name and priority are an error naming `kind`.
    pub fn resolve<R: Registration>(
        &self,
        kind: &'static str,
    ) -> Result<BTreeMap<String, Arc<R::Target>>, RegistryClash> {
        resolve(
            kind,
            inventory::iter::<R>()
                .filter(|r| self.plugins.includes(r.crate_name()))
                .map(|r| (r.name(), r.priority(), r.builder())),
        )
    }

    /// The enabled plugins' names, sorted (`status_show`'s `extensions`).
    pub fn plugins(&self) -> Vec<&'static str> {
        self.plugins.names()
    }

    /// The enabled plugins, for their lifecycle hooks.
    pub fn plugin_set(&self) -> &crate::plugin::PluginSet {
        &self.plugins
    }

    /// The enabled event subscribers, in name order.
    pub fn subscribers(&self) -> &[Arc<Box<dyn crate::events::EventSubscriber>>] {
        &self.subscribers
    }

    /// The job handler of a job kind.
    pub fn job_handler(&self, kind: &str) -> Option<&Arc<Box<dyn crate::jobs::JobHandler>>> {
        self.job_handlers.get(kind)
    }

    /// The job kinds this process can run, sorted.
    pub fn job_kinds(&self) -> Vec<String> {
        self.job_handlers.keys().cloned().collect()
    }

    /// Every registered action, by name.
    pub fn actions(&self) -> impl Iterator<Item = (&str, &Arc<Box<dyn Action>>)> {
        self.actions.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Every registered name by kind: logged at start-up and snapshot-tested.
    /// One line for the start-up log: the enabled plugins and how many of each kind are
    /// registered (the names are in [`Registry::summary`], logged at DEBUG).
    pub fn short_summary(&self) -> String {
        format!(
            "plugins: {}; {} actions, {} auth functions, {} routes, {} dataset schemas, {} search backends, {} job handlers",
            self.plugins.names().join(", "),
            self.actions.len(),
            self.auth.len(),
            self.routes.len(),
            self.schemas.len(),
            self.search_backends.len(),
            self.job_handlers.len(),
        )
    }

    pub fn summary(&self) -> Value {
        let names = |m: Vec<&String>| Value::from(m.into_iter().cloned().collect::<Vec<_>>());
        let mut summary = serde_json::json!({
            "actions": names(self.actions.keys().collect()),
            "auth_functions": names(self.auth.keys().collect()),
            "dataset_schemas": names(self.schemas.keys().collect()),
            "job_handlers": names(self.job_handlers.keys().collect()),
            "routes": names(self.routes.keys().collect()),
            "search_backends": names(self.search_backends.keys().collect()),
        });
        let out = summary.as_object_mut().expect("an object");
        for p in self.plugins.iter() {
            for (key, value) in p.summary(self) {
                out.insert(key.to_string(), value);
            }
        }
        out.insert("plugins".into(), self.plugins.names().into());
        summary
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
