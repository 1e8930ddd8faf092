//! Validators by name, as a schema file's `validators`, `create_validators` and
//! `output_validators` strings name them (`"ignore_missing unicode_safe"`,
//! `"if_empty_same_as(name)"`), with CKAN's navl semantics: each runs on one field's value in
//! turn; an error is added and the next still runs (CKAN's `Invalid`), or the chain stops
//! (`StopOnError`). CKAN's own validators, ckanext-scheming's and ckanext-dcat's are registered
//! here (`ckan.rs`, `scheming.rs`, `dcat.rs`); a plugin adds more with
//! [`register_scheming_validator!`](crate::register_scheming_validator).

use std::sync::Arc;

use catalog_framework::prelude::*;

pub mod ckan;
pub mod dcat;
mod literal;
pub mod scheming;

/// What a validator sees: one field's value (`None` = the key is missing, CKAN's `missing`),
/// the errors so far, and the dict the field is in.
pub struct Slot<'a> {
    pub key: &'a str,
    pub value: Option<Value>,
    pub errors: Vec<String>,
    /// The dict the field belongs to (the dataset, a resource or a subfield item), as sent.
    pub siblings: &'a Params,
    pub run: &'a Run<'a>,
}

impl Slot<'_> {
    /// The value, or null when missing.
    pub fn get(&self) -> &Value {
        self.value.as_ref().unwrap_or(&Value::Null)
    }
    /// Missing or null (CKAN's `value is missing or value is None`).
    pub fn is_missing(&self) -> bool {
        matches!(self.value, None | Some(Value::Null))
    }
    /// Whether the field's value was set to something Python reads as true.
    pub fn is_truthy(&self) -> bool {
        catalog_framework::validators::python_truthy(self.value.as_ref())
    }
}

/// The write a validation belongs to.
pub struct Run<'a> {
    pub op: SchemaOp,
    pub is_sysadmin: bool,
    pub config: &'a Config,
    /// The dataset's `state` as sent (`draft` relaxes required fields when the schema says so).
    pub state: Option<&'a str>,
    /// Whether the field is a resource's (`if_empty_guess_format` reads the resource's `url`).
    pub in_resource: bool,
}

/// Whether to run the next validator of the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Next,
    Stop,
}

/// One validator or converter of a field's chain.
pub trait Validator: Send + Sync + 'static {
    fn run(&self, slot: &mut Slot<'_>) -> Flow;
}

/// What a validator is built from: its literal arguments (`default('x')` → `["x"]`), the
/// field it validates and the whole schema (ckanext-scheming's "scheming validators" read
/// `required`, `choices` and `draft_fields_required`).
pub struct Build<'a> {
    pub args: &'a [Value],
    pub field: &'a Map<String, Value>,
    pub schema: &'a Map<String, Value>,
}

impl Build<'_> {
    fn required(&self) -> bool {
        field_required(self.field)
    }
}

/// `field['required']`, or a guess from its validators (ckanext-scheming's
/// `scheming_field_required`).
pub fn field_required(field: &Map<String, Value>) -> bool {
    match field.get("required") {
        Some(v) => catalog_framework::validators::python_truthy(Some(v)),
        None => field
            .get("validators")
            .and_then(Value::as_str)
            .is_some_and(|v| v.split_whitespace().any(|n| n == "not_empty")),
    }
}

/// Builds a validator by name; an error is a start-up error naming the schema file's field.
pub trait ValidatorFactory: Send + Sync + 'static {
    fn build(&self, b: &Build<'_>) -> Result<Arc<dyn Validator>, String>;
}

/// A factory that is a plain function.
pub struct FnFactory(pub fn(&Build<'_>) -> Result<Arc<dyn Validator>, String>);

impl ValidatorFactory for FnFactory {
    fn build(&self, b: &Build<'_>) -> Result<Arc<dyn Validator>, String> {
        (self.0)(b)
    }
}

catalog_framework::extension_point!(
    /// A validator a schema file can name, submitted with
    /// [`register_scheming_validator!`](crate::register_scheming_validator).
    pub SchemingValidatorRegistration, Box<dyn ValidatorFactory>
);

/// Registers a validator schema files can name:
/// `register_scheming_validator!("my_validator", |b| Ok(Arc::new(MyValidator)));`
/// (a function of [`Build`] returning the validator, or an error for bad arguments).
#[macro_export]
macro_rules! register_scheming_validator {
    ($name:expr, $build:expr) => {
        catalog_framework::register_at!(
            $crate::validators::SchemingValidatorRegistration,
            $name,
            $crate::validators::FnFactory($build),
            0
        );
    };
}

/// A chain of validators, as a field's `validators` string names them.
pub type Chain = Vec<Arc<dyn Validator>>;

/// The validator factories by name, resolved once at start-up.
pub struct Library {
    factories: std::collections::BTreeMap<String, Arc<Box<dyn ValidatorFactory>>>,
}

impl Library {
    /// The validators of the enabled plugins.
    pub fn from_registry(registry: &Registry) -> anyhow::Result<Library> {
        Ok(Library {
            factories: registry.resolve::<SchemingValidatorRegistration>("scheming validator")?,
        })
    }

    /// Every validator linked into the binary (for `catalog scheming check` and tests).
    pub fn linked() -> anyhow::Result<Library> {
        Ok(Library {
            factories: catalog_framework::store::registration::resolve_enabled::<
                SchemingValidatorRegistration,
            >("scheming validator", &|_| true)?,
        })
    }

    pub fn contains(&self, name: &str) -> bool {
        self.factories.contains_key(name)
    }

    /// The chain a validators string names (`"ignore_missing default('x')"`): an unknown name
    /// or bad arguments is an error naming it.
    pub fn chain(
        &self,
        spec: &str,
        field: &Map<String, Value>,
        schema: &Map<String, Value>,
    ) -> Result<Chain, String> {
        let mut out = Vec::new();
        for part in spec.split_whitespace() {
            let (name, args) = match part.split_once('(') {
                Some((name, rest)) if rest.ends_with(')') => {
                    (name, literal::arguments(&rest[..rest.len() - 1]))
                }
                _ => (part, Vec::new()),
            };
            let Some(factory) = self.factories.get(name) else {
                return Err(format!("validator/converter not found: {name:?}"));
            };
            let v = factory
                .build(&Build {
                    args: &args,
                    field,
                    schema,
                })
                .map_err(|e| format!("validator {name:?}: {e}"))?;
            out.push(v);
        }
        Ok(out)
    }
}

/// Runs a chain on one field; the value left (or `None` when a validator removed the key) and
/// the errors.
pub fn run_chain(
    chain: &Chain,
    key: &str,
    value: Option<Value>,
    siblings: &Params,
    run: &Run<'_>,
) -> (Option<Value>, Vec<String>) {
    let mut slot = Slot {
        key,
        value,
        errors: Vec::new(),
        siblings,
        run,
    };
    for v in chain {
        if v.run(&mut slot) == Flow::Stop {
            break;
        }
    }
    (slot.value, slot.errors)
}

/// A validator that is a closure over the slot.
pub struct FnValidator<F>(pub F);

impl<F> Validator for FnValidator<F>
where
    F: Fn(&mut Slot<'_>) -> Flow + Send + Sync + 'static,
{
    fn run(&self, slot: &mut Slot<'_>) -> Flow {
        (self.0)(slot)
    }
}

/// A validator from a closure.
pub fn validator<F>(f: F) -> Arc<dyn Validator>
where
    F: Fn(&mut Slot<'_>) -> Flow + Send + Sync + 'static,
{
    Arc::new(FnValidator(f))
}

/// A one-argument CKAN validator (`def v(value)`): runs on a present value, its error added
/// with the chain going on (CKAN's `Invalid`).
pub fn on_value<F>(f: F) -> Arc<dyn Validator>
where
    F: Fn(Value) -> Result<Value, String> + Send + Sync + 'static,
{
    validator(move |slot| {
        if let Some(v) = slot.value.take() {
            match f(v.clone()) {
                Ok(out) => slot.value = Some(out),
                Err(e) => {
                    slot.value = Some(v);
                    slot.errors.push(e);
                }
            }
        }
        Flow::Next
    })
}

/// Python's `repr` of a string (`'text'`, or `"it's"`), as CKAN's messages print values.
pub fn py_repr_str(s: &str) -> String {
    catalog_framework::error::python_repr(s)
}

/// Python's `repr` of a JSON value (`['a', 1, True, None]`).
pub fn py_repr(v: &Value) -> String {
    match v {
        Value::String(s) => py_repr_str(s),
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(py_repr).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", py_repr_str(k), py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Python's class name of a JSON value, as navl's messages print it (`<class 'str'>`).
pub fn py_class(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "<class 'str'>",
        Value::Null => "<class 'NoneType'>",
        Value::Bool(_) => "<class 'bool'>",
        Value::Number(n) if n.is_f64() => "<class 'float'>",
        Value::Number(_) => "<class 'int'>",
        Value::Array(_) => "<class 'list'>",
        Value::Object(_) => "<class 'dict'>",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_reprs() {
        assert_eq!(
            py_repr(&json!(["a", "it's", 1, true, null])),
            "['a', \"it's\", 1, True, None]"
        );
        assert_eq!(py_class(&json!({})), "<class 'dict'>");
        assert_eq!(py_class(&json!(1.5)), "<class 'float'>");
    }

    #[test]
    fn chains_parse_names_and_arguments() {
        let lib = Library::linked().unwrap();
        let field = Map::new();
        let schema = Map::new();
        assert_eq!(
            lib.chain("ignore_missing default('x') unicode_safe", &field, &schema)
                .unwrap()
                .len(),
            3
        );
        let err = lib
            .chain("ignore_missing no_such_thing", &field, &schema)
            .err()
            .unwrap();
        assert_eq!(err, "validator/converter not found: \"no_such_thing\"");
    }
}
