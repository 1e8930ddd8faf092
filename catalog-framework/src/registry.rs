//! The registry: what every enabled plugin registered, collected once at start-up.
//!
//! Plugins submit const registrations (a name, a priority and a constructor `fn`) through the
//! `register_*!` macros. At start-up [`Registry::build`] collects them once: for each name the
//! highest priority wins, an equal-priority clash is an error, and the result is frozen.
//!
//! The registry knows the Action API's own extension points (actions, auth functions and
//! their chained wrappers, dataset schemas). Every other extension point declares its record
//! beside its trait with `extension_point!(…, collected("key", "label"))` (search backends,
//! event subscribers, job handlers, routes): the registry collects those generically, without
//! naming them, and they are found by record type with [`Registry::extensions`].

use std::any::TypeId;
use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::context::ActionContext;
use crate::error::CkanResult;
pub use crate::store::registration::{Collected, RegistryClash};
pub use crate::store::{Params, Registration};

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
    async fn run(&self, ctx: &mut ActionContext, params: Params) -> CkanResult<Value>;
    /// The action's answer, which may be serialized already ([`Answer::Serialized`]); by
    /// default [`Action::run`]'s value. The HTTP layer asks for this; nested calls and
    /// wrappers get [`Action::run`]'s value.
    async fn answer(&self, ctx: &mut ActionContext, params: Params) -> CkanResult<Answer> {
        self.run(ctx, params).await.map(Answer::Value)
    }
}

/// What an action answers: a JSON value, or one that is also serialized already (a cached
/// `package_show`), which the HTTP layer writes into the envelope as it is instead of
/// serializing the value again.
pub enum Answer {
    Value(Value),
    Serialized(Arc<dyn SerializedValue>),
}

/// A value kept with its JSON text (in CKAN's layout).
pub trait SerializedValue: Send + Sync + 'static {
    fn value(&self) -> &Value;
    fn json(&self) -> &str;
}

impl SerializedValue for crate::store::CachedPackage {
    fn value(&self) -> &Value {
        &self.dict
    }
    fn json(&self) -> &str {
        &self.json
    }
}

impl Answer {
    /// The answer as a value (a serialized one's value is copied).
    pub fn into_value(self) -> Value {
        match self {
            Answer::Value(v) => v,
            Answer::Serialized(s) => s.value().clone(),
        }
    }
}

impl From<Value> for Answer {
    fn from(v: Value) -> Answer {
        Answer::Value(v)
    }
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
    async fn run(&self, ctx: &mut ActionContext, params: Params) -> CkanResult<Value> {
        ctx.enter_wrapper();
        let result = self
            .outer
            .run(self.next.as_ref().as_ref(), ctx, params)
            .await;
        ctx.leave_wrapper();
        result
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

/// The frozen set of everything registered, built once at start-up.
pub struct Registry {
    actions: BTreeMap<String, Arc<Box<dyn Action>>>,
    auth: BTreeMap<String, Arc<Box<dyn AuthFunction>>>,
    schemas: BTreeMap<String, Arc<Box<dyn DatasetSchema>>>,
    /// The collected extension points, in key order.
    collected: Vec<Collected>,
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

    /// Collects every registration linked into the binary but those of the plugins named (a
    /// test binary's own plugin, beside the shipped ones).
    pub fn build_without(plugins: &[&str]) -> anyhow::Result<Registry> {
        Self::with_plugins(crate::plugin::PluginSet::all_but(plugins)?)
    }

    /// Collects the registrations of the plugins `catalog.plugins` enables.
    pub fn for_config(config: &crate::config::Config) -> anyhow::Result<Registry> {
        Self::with_plugins(crate::plugin::PluginSet::from_config(config)?)
    }

    fn with_plugins(plugins: crate::plugin::PluginSet) -> anyhow::Result<Registry> {
        use crate::store::registration::resolve;
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
        actions.retain(|name, _| !plugins.switched_off.contains(name.as_str()));
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
        let enabled = |crate_name: &str| plugins.includes(crate_name);
        let mut collected = Vec::new();
        for point in crate::store::registration::extension_points() {
            collected.push((point.collect)(&enabled)?);
        }
        Ok(Registry {
            actions,
            auth,
            schemas,
            collected,
            plugins,
        })
    }

    pub fn action(&self, name: &str) -> Option<&Arc<Box<dyn Action>>> {
        self.actions.get(name)
    }

    pub fn auth(&self, name: &str) -> Option<&Arc<Box<dyn AuthFunction>>> {
        self.auth.get(name)
    }

    /// Takes the dataset schemas plugins added in their `configure` hook
    /// ([`Setup::add_dataset_schema`](crate::plugin::Setup::add_dataset_schema)): each replaces
    /// the registered schema of its type. The host calls this once, after configuring.
    pub fn adopt_dataset_schemas(&mut self, extensions: &mut crate::plugin::Extensions) {
        for (t, schema) in extensions.dataset_schemas.drain(..) {
            self.schemas.insert(t, Arc::new(schema));
        }
    }

    pub fn schema(&self, dataset_type: &str) -> Option<&Arc<Box<dyn DatasetSchema>>> {
        self.schemas
            .get(dataset_type)
            .or_else(|| self.schemas.get("dataset"))
    }

    /// The enabled registrations of a collected extension point (one declared
    /// `collected(…)`), by name. Asking for a record type that is not collected is a
    /// programming error (a panic naming it).
    pub fn extensions<R: Registration>(&self) -> &BTreeMap<String, Arc<R::Target>> {
        self.collected
            .iter()
            .find(|c| c.type_id == TypeId::of::<R>())
            .and_then(|c| c.entries.downcast_ref::<BTreeMap<String, Arc<R::Target>>>())
            .unwrap_or_else(|| {
                panic!(
                    "{} is not a collected extension point",
                    std::any::type_name::<R>()
                )
            })
    }

    /// The registrations of an extension point made by enabled plugins, by name, the
    /// highest priority winning; two of one name and priority are an error naming `kind`.
    pub fn resolve<R: Registration>(
        &self,
        kind: &'static str,
    ) -> Result<BTreeMap<String, Arc<R::Target>>, RegistryClash> {
        crate::store::registration::resolve_enabled::<R>(kind, &|c| self.plugins.includes(c))
    }

    /// The enabled plugins' names, sorted (`status_show`'s `extensions`).
    pub fn plugins(&self) -> Vec<&'static str> {
        self.plugins.names()
    }

    /// The enabled plugins, for their lifecycle hooks.
    pub fn plugin_set(&self) -> &crate::plugin::PluginSet {
        &self.plugins
    }

    /// Every registered action, by name.
    pub fn actions(&self) -> impl Iterator<Item = (&str, &Arc<Box<dyn Action>>)> {
        self.actions.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// One line for the start-up log: the enabled plugins and how many of each kind are
    /// registered (the names are in [`Registry::summary`], logged at DEBUG).
    pub fn short_summary(&self) -> String {
        let mut counts = vec![
            format!("{} actions", self.actions.len()),
            format!("{} auth functions", self.auth.len()),
            format!("{} dataset schemas", self.schemas.len()),
        ];
        for c in &self.collected {
            counts.push(format!("{} {}s", c.names.len(), c.label));
        }
        format!(
            "plugins: {}; {}",
            self.plugins.names().join(", "),
            counts.join(", ")
        )
    }

    /// Every registered name by kind: logged at start-up (DEBUG) and snapshot-tested.
    pub fn summary(&self) -> Value {
        let names = |m: Vec<&String>| Value::from(m.into_iter().cloned().collect::<Vec<_>>());
        let mut summary = serde_json::json!({
            "actions": names(self.actions.keys().collect()),
            "auth_functions": names(self.auth.keys().collect()),
            "dataset_schemas": names(self.schemas.keys().collect()),
        });
        let out = summary.as_object_mut().expect("an object");
        for c in self.collected.iter().filter(|c| c.listed) {
            out.insert(c.key.to_string(), Value::from(c.names.clone()));
        }
        for p in self.plugins.iter() {
            for (key, value) in p.summary(self) {
                out.insert(key.to_string(), value);
            }
        }
        out.insert("plugins".into(), self.plugins.names().into());
        summary
    }
}
