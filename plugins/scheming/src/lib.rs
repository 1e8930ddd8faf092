//! Dataset, group and organization types from ckanext-scheming schema files (YAML or JSON), so
//! that a CKAN portal's schema files load unchanged (spec/scheming.md). Inactive until a
//! schema file is configured: `catalog.scheming.dataset_schemas` (CKAN's
//! `scheming.dataset_schemas`), `…group_schemas`, `…organization_schemas`, `…presets`.
//!
//! Where things live:
//! - `lib.rs`: the plugin, its settings and start-up (schemas loaded, each dataset type
//!   registered as a [`DatasetSchema`]).
//! - `yaml.rs`: YAML read as PyYAML reads it, with lines for errors and a bound on aliases.
//! - `schema.rs`: a schema file read, checked and expanded (presets), its validators built.
//! - `builtin.rs` and `schemas/`: our equivalents of the files ckanext-scheming and
//!   ckanext-dcat ship, under their `module:file` names.
//! - `validators/`: validators by name — CKAN's (`ckan.rs`), ckanext-scheming's
//!   (`scheming.rs`), ckanext-dcat's (`dcat.rs`); the extension point plugins add theirs at.
//! - `dataset.rs`: a dataset type's validation and show, as ckanext-scheming does them.
//! - `actions.rs`: the six `scheming_*_schema_{list,show}` actions.
#![forbid(unsafe_code)]

use std::sync::Arc;

use catalog_framework::prelude::*;

mod actions;
pub mod builtin;
pub mod dataset;
pub mod schema;
pub mod validators;
pub mod yaml;

use schema::{Kind, Loader, Presets, SchemaSet};

/// The plugin's settings (`catalog.scheming.*`; CKAN's `scheming.*`).
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub dataset_schemas: Vec<String>,
    pub group_schemas: Vec<String>,
    pub organization_schemas: Vec<String>,
    pub presets: Vec<String>,
    /// Field keys accepted beyond ckanext-scheming's own (a portal's templates may read more).
    pub extra_field_keys: Vec<String>,
}

/// A list setting: a list, or CKAN's space-separated string.
fn names(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => s.split_whitespace().map(String::from).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .flat_map(|s| s.split_whitespace().map(String::from).collect::<Vec<_>>())
            .collect(),
        _ => Vec::new(),
    }
}

impl Settings {
    pub fn from_config(config: &Config) -> Settings {
        let section = config.catalog.other.get("scheming");
        let get = |k: &str| names(section.and_then(|s| s.get(k)));
        let presets = get("presets");
        Settings {
            dataset_schemas: get("dataset_schemas"),
            group_schemas: get("group_schemas"),
            organization_schemas: get("organization_schemas"),
            presets: if presets.is_empty() {
                vec![builtin::DEFAULT_PRESETS.to_string()]
            } else {
                presets
            },
            extra_field_keys: get("extra_field_keys"),
        }
    }

    /// Whether any schema file is configured (the plugin is inactive otherwise).
    pub fn active(&self) -> bool {
        !(self.dataset_schemas.is_empty()
            && self.group_schemas.is_empty()
            && self.organization_schemas.is_empty())
    }
}

/// The loaded schemas, for the actions.
pub struct Scheming {
    pub datasets: SchemaSet,
    pub groups: SchemaSet,
    pub organizations: SchemaSet,
}

impl Scheming {
    /// Reads and checks every configured file; the first bad one is the error.
    pub fn load(settings: &Settings, library: &validators::Library) -> Result<Scheming, String> {
        let presets = Presets::load(&settings.presets)?;
        let loader = Loader {
            presets: &presets,
            library,
            extra_keys: &settings.extra_field_keys,
        };
        Ok(Scheming {
            datasets: SchemaSet::load(&loader, &settings.dataset_schemas, Kind::Dataset)?,
            groups: SchemaSet::load(&loader, &settings.group_schemas, Kind::Group)?,
            organizations: SchemaSet::load(
                &loader,
                &settings.organization_schemas,
                Kind::Organization,
            )?,
        })
    }
}

/// What the command-line checks load schemas with, outside a running app: every linked
/// validator and the configured presets.
struct Offline {
    library: validators::Library,
    presets: Presets,
}

impl Offline {
    fn new(settings: &Settings) -> Result<Offline, String> {
        Ok(Offline {
            library: validators::Library::linked().map_err(|e| format!("{e:#}"))?,
            presets: Presets::load(&settings.presets)?,
        })
    }

    fn loader<'a>(&'a self, settings: &'a Settings) -> Loader<'a> {
        Loader {
            presets: &self.presets,
            library: &self.library,
            extra_keys: &settings.extra_field_keys,
        }
    }
}

/// `catalog scheming check FILE…`: checks each file as start-up would (its kind read from its
/// keys, a presets file by its `presets` list) without starting anything. One line per file:
/// `FILE: ok (…)`, or the error; `Err` when any file is bad.
pub fn check_files(files: &[String], settings: &Settings) -> Result<Vec<String>, Vec<String>> {
    let offline = Offline::new(settings).map_err(|e| vec![e])?;
    let loader = offline.loader(settings);
    let mut lines = Vec::new();
    let mut bad = false;
    for file in files {
        let line = schema::read_source(file).and_then(|(source, doc)| {
            if doc.value.get("presets").is_some() {
                return Presets::load(std::slice::from_ref(file))
                    .map(|_| format!("{file}: ok (presets)"));
            }
            let kind = Kind::of(&doc.value);
            let s = loader.load_document(source, &doc, kind)?;
            let resources = if kind == Kind::Dataset {
                format!(", {} resource fields", s.resource_fields.len())
            } else {
                String::new()
            };
            Ok(format!(
                "{file}: ok ({} type `{}`, {} fields{resources})",
                kind.name(),
                s.type_name,
                s.fields.len()
            ))
        });
        bad |= line.is_err();
        lines.push(line.unwrap_or_else(|e| e));
    }
    if bad {
        Err(lines)
    } else {
        Ok(lines)
    }
}

/// What [`validate_file`] found: the stored dict or the error object, and the time the
/// validations took.
pub struct Validated {
    pub result: Result<Value, Value>,
    pub elapsed: std::time::Duration,
}

/// `catalog scheming validate`: validates `dict` against the dataset schema in `schema_file`
/// `repeat` times (as a sysadmin's write would be), timing only the validations.
pub fn validate_file(
    schema_file: &str,
    settings: &Settings,
    config: &Config,
    dict: &Value,
    op: SchemaOp,
    repeat: u32,
) -> Result<Validated, String> {
    let offline = Offline::new(settings)?;
    let schema = Arc::new(offline.loader(settings).load(schema_file, Kind::Dataset)?);
    let Some(input) = dict.as_object() else {
        return Err("the dataset must be a JSON object".into());
    };
    let dataset = dataset::SchemingDataset { schema };
    let ctx = SchemaContext {
        op,
        is_sysadmin: true,
        config,
    };
    let started = std::time::Instant::now();
    let mut last = Err(Value::Null);
    for _ in 0..repeat.max(1) {
        let mut data = input.clone();
        last = match dataset.validate(&mut data, &ctx) {
            Ok(()) => Ok(Value::Object(data)),
            Err(e) => Err(e.to_error_object()),
        };
    }
    Ok(Validated {
        result: last,
        elapsed: started.elapsed(),
    })
}

const ACTIONS: &[&str] = &[
    "scheming_dataset_schema_list",
    "scheming_dataset_schema_show",
    "scheming_group_schema_list",
    "scheming_group_schema_show",
    "scheming_organization_schema_list",
    "scheming_organization_schema_show",
];

struct SchemingPlugin;

#[async_trait]
impl Plugin for SchemingPlugin {
    fn name(&self) -> &'static str {
        "scheming"
    }

    fn switched_off_actions(&self, config: &Config) -> Vec<&'static str> {
        if Settings::from_config(config).active() {
            Vec::new()
        } else {
            ACTIONS.to_vec()
        }
    }

    fn configure(&self, setup: &mut Setup<'_>) -> anyhow::Result<()> {
        let settings = Settings::from_config(setup.config);
        if !settings.active() {
            return Ok(());
        }
        let library = validators::Library::from_registry(setup.registry)?;
        let loaded = Scheming::load(&settings, &library).map_err(anyhow::Error::msg)?;
        for (t, schema) in &loaded.datasets.by_type {
            setup.add_dataset_schema(
                t,
                Box::new(dataset::SchemingDataset {
                    schema: Arc::clone(schema),
                }),
            );
        }
        setup.insert(loaded);
        Ok(())
    }
}

register_plugin!(SchemingPlugin);
