//! Schema files: read (YAML or JSON, by the name's ending, as ckanext-scheming's loader does),
//! checked, presets merged in and every field's validators built — once, at start-up. A bad
//! file is an error naming the file, the field and the line; nothing half-loaded serves.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use catalog_framework::prelude::*;

use crate::builtin;
use crate::validators::{field_required, Chain, Library};
use crate::yaml::{self, Document};

/// Largest schema or presets file read.
pub const MAX_FILE_BYTES: usize = 4 * 1024 * 1024;
/// How deep `repeating_subfields` may nest (`dcat_ap_full`'s provenance goes three deep).
pub const MAX_SUBFIELD_DEPTH: usize = 4;

/// What a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Dataset,
    Group,
    Organization,
}

impl Kind {
    /// The kind a file describes, read from its keys: a type key, else `dataset_fields`
    /// (a dataset), else `fields` (an organization: a group schema names its `group_type`).
    pub fn of(doc: &Value) -> Kind {
        if doc.get("group_type").is_some() {
            Kind::Group
        } else if doc.get("organization_type").is_some()
            || doc.get("dataset_fields").is_none() && doc.get("fields").is_some()
        {
            Kind::Organization
        } else {
            Kind::Dataset
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Dataset => "dataset",
            Kind::Group => "group",
            Kind::Organization => "organization",
        }
    }

    /// The key that names the type in the file (`dataset_type` …).
    pub fn type_key(self) -> &'static str {
        match self {
            Kind::Dataset => "dataset_type",
            Kind::Group => "group_type",
            Kind::Organization => "organization_type",
        }
    }
}

/// The keys a schema file's top level may have.
const TOP_KEYS: &[&str] = &[
    "scheming_version",
    "dataset_type",
    "group_type",
    "organization_type",
    "about",
    "about_url",
    "description",
    "dataset_fields",
    "resource_fields",
    "fields",
    "before_validators",
    "after_validators",
    "draft_fields_required",
    "form_languages",
];

/// The keys a field may have: ckanext-scheming's, its form and display snippets', and
/// ckanext-fluent's and ckanext-dcat's.
const FIELD_KEYS: &[&str] = &[
    "field_name",
    "label",
    "required",
    "preset",
    "choices",
    "choices_helper",
    "default",
    "validators",
    "output_validators",
    "create_validators",
    "help_text",
    "help_inline",
    "help_allow_html",
    "form_placeholder",
    "form_snippet",
    "display_snippet",
    "display_property",
    "display_email_name_field",
    "form_attrs",
    "form_select_attrs",
    "form_include_blank_choice",
    "form_blanks",
    "select_size",
    "sorted_choices",
    "classes",
    "repeating_subfields",
    "repeating_label",
    "repeating_once",
    "simple_subfields",
    "start_form_page",
    "upload_field",
    "upload_clear",
    "upload_label",
    "label_time",
    "label_tz",
    "datastore_choices_resource",
    "datastore_choices_columns",
    "datastore_additional_choices",
    "form_languages",
    "fluent_form_label",
    "fluent_help_text",
    "fluent_form_placeholder",
];

/// A field of a schema, presets merged in and validators built.
pub struct Field {
    pub name: String,
    /// The definition as `scheming_*_schema_show` gives it (presets merged in).
    pub def: Map<String, Value>,
    pub validators: Chain,
    pub create_validators: Option<Chain>,
    pub output_validators: Chain,
    pub subfields: Option<Vec<Field>>,
}

impl Field {
    pub fn required(&self) -> bool {
        field_required(&self.def)
    }
    /// The chain for this write (`create_validators` on create when the field has them).
    pub fn chain(&self, op: SchemaOp) -> &Chain {
        match (&self.create_validators, op) {
            (Some(c), SchemaOp::Create) => c,
            _ => &self.validators,
        }
    }
}

/// A loaded schema.
pub struct Schema {
    pub kind: Kind,
    pub type_name: String,
    /// Where it came from (a path, or a `module:file` name).
    pub source: String,
    /// The file as written (`expanded: false`).
    pub raw: Map<String, Value>,
    /// Presets merged in (what `scheming_*_schema_show` answers).
    pub expanded: Map<String, Value>,
    /// `dataset_fields`, or a group's `fields`.
    pub fields: Vec<Field>,
    pub resource_fields: Vec<Field>,
    pub before: Chain,
    pub after: Chain,
}

/// Presets by name, the later files' winning as in ckanext-scheming (files read last to first).
#[derive(Default)]
pub struct Presets(BTreeMap<String, Map<String, Value>>);

/// Where a bad file went wrong: `file: line N: field "x": what`.
fn at(source: &str, doc: &Document, pointer: &str, field: Option<&str>, msg: &str) -> String {
    let line = doc
        .line(pointer)
        .map(|l| format!("line {l}: "))
        .unwrap_or_default();
    let field = field.map(|f| format!("field {f:?}: ")).unwrap_or_default();
    format!("{source}: {line}{field}{msg}")
}

/// A file's text: a built-in equivalent for the `module:file` names of the files
/// ckanext-scheming and ckanext-dcat ship, otherwise a path.
pub fn read_source(name: &str) -> Result<(String, Document), String> {
    let (format_name, text) = match builtin::file(name) {
        Some((ours, t)) => (ours.to_string(), t.to_string()),
        None => {
            if name.contains(':') && !std::path::Path::new(name).exists() {
                return Err(format!(
                    "{name}: no such file, and not a built-in schema or presets name (built in: {})",
                    builtin::names().join(", ")
                ));
            }
            let meta = std::fs::metadata(name).map_err(|e| format!("{name}: {e}"))?;
            if meta.len() as usize > MAX_FILE_BYTES {
                return Err(format!(
                    "{name}: larger than {MAX_FILE_BYTES} bytes; refused"
                ));
            }
            let text = std::fs::read_to_string(name).map_err(|e| format!("{name}: {e}"))?;
            (name.to_string(), text)
        }
    };
    let lower = format_name.to_ascii_lowercase();
    let doc = if lower.ends_with(".yaml") || lower.ends_with(".yml") {
        yaml::parse(&text).map_err(|e| format!("{name}: {e}"))?
    } else {
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{name}: line {}: invalid JSON: {e}", e.line()))?;
        Document {
            value,
            lines: Default::default(),
        }
    };
    Ok((name.to_string(), doc))
}

impl Presets {
    /// Reads the presets files in order; a later file's preset replaces an earlier one's.
    pub fn load(names: &[String]) -> Result<Presets, String> {
        let mut out = BTreeMap::new();
        for name in names {
            let (source, doc) = read_source(name)?;
            let Some(list) = doc.value.get("presets").and_then(Value::as_array) else {
                return Err(at(
                    &source,
                    &doc,
                    "",
                    None,
                    "a presets file needs a `presets` list",
                ));
            };
            for (i, p) in list.iter().enumerate() {
                let pointer = format!("/presets/{i}");
                let name = p.get("preset_name").and_then(Value::as_str);
                let values = p.get("values").and_then(Value::as_object);
                match (name, values) {
                    (Some(n), Some(v)) => {
                        out.insert(n.to_string(), v.clone());
                    }
                    _ => {
                        return Err(at(
                            &source,
                            &doc,
                            &pointer,
                            None,
                            "a preset needs `preset_name` and a `values` mapping",
                        ))
                    }
                }
            }
        }
        Ok(Presets(out))
    }

    pub fn get(&self, name: &str) -> Option<&Map<String, Value>> {
        self.0.get(name)
    }
}

/// What loading a schema needs.
pub struct Loader<'a> {
    pub presets: &'a Presets,
    pub library: &'a Library,
    /// Field keys accepted beyond ckanext-scheming's own (`catalog.scheming.extra_field_keys`).
    pub extra_keys: &'a [String],
}

impl Loader<'_> {
    /// Reads and checks one schema file of `kind`.
    pub fn load(&self, name: &str, kind: Kind) -> Result<Schema, String> {
        let (source, doc) = read_source(name)?;
        self.load_document(source, &doc, kind)
    }

    /// Checks one schema file already read (`source` names it in errors).
    pub fn load_document(
        &self,
        source: String,
        doc: &Document,
        kind: Kind,
    ) -> Result<Schema, String> {
        let Some(raw) = doc.value.as_object().cloned() else {
            return Err(at(
                &source,
                doc,
                "",
                None,
                "a schema file must be a mapping",
            ));
        };
        for k in raw.keys() {
            if !TOP_KEYS.contains(&k.as_str()) {
                return Err(at(
                    &source,
                    doc,
                    &format!("/{k}"),
                    None,
                    &format!("unknown key {k:?}"),
                ));
            }
        }
        let type_name = match raw.get(kind.type_key()) {
            Some(Value::String(t)) if !t.is_empty() => t.clone(),
            // ckanext-dcat's publisher_organization.yaml names no type: the kind's own.
            None if kind == Kind::Group => "group".into(),
            None if kind == Kind::Organization => "organization".into(),
            _ => {
                return Err(at(
                    &source,
                    doc,
                    "",
                    None,
                    &format!("`{}` is missing", kind.type_key()),
                ))
            }
        };
        let lists: &[&str] = match kind {
            Kind::Dataset => &["dataset_fields", "resource_fields"],
            _ => &["fields"],
        };
        let mut expanded = raw.clone();
        let mut compiled = Vec::new();
        for list in lists {
            let items = match raw.get(*list) {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items.clone(),
                Some(_) => {
                    return Err(at(
                        &source,
                        doc,
                        &format!("/{list}"),
                        None,
                        &format!("`{list}` must be a list"),
                    ))
                }
            };
            let cx = FieldCx {
                source: &source,
                doc,
                schema: &raw,
            };
            let (defs, fields) = self.fields(&cx, &format!("/{list}"), &items, 0)?;
            if raw.contains_key(*list) {
                expanded.insert((*list).to_string(), Value::Array(defs));
            }
            compiled.push(fields);
        }
        let chain = |key: &str| -> Result<Chain, String> {
            match raw.get(key).and_then(Value::as_str) {
                Some(spec) => self
                    .library
                    .chain(spec, &Map::new(), &raw)
                    .map_err(|e| at(&source, doc, &format!("/{key}"), None, &e)),
                None => Ok(Vec::new()),
            }
        };
        let before = chain("before_validators")?;
        let after = chain("after_validators")?;
        let mut compiled = compiled.into_iter();
        let fields = compiled.next().unwrap_or_default();
        let resource_fields = compiled.next().unwrap_or_default();
        Ok(Schema {
            kind,
            type_name,
            source,
            raw,
            expanded,
            fields,
            resource_fields,
            before,
            after,
        })
    }

    /// A list of fields: each checked, its preset merged in and its validators built. Returns
    /// the definitions as shown (presets merged in at the first two levels, as
    /// ckanext-scheming shows them) and the compiled fields.
    fn fields(
        &self,
        cx: &FieldCx<'_>,
        pointer: &str,
        items: &[Value],
        depth: usize,
    ) -> Result<(Vec<Value>, Vec<Field>), String> {
        let mut seen = HashSet::new();
        let mut defs = Vec::new();
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let p = format!("{pointer}/{i}");
            let Some(def) = item.as_object() else {
                return Err(at(cx.source, cx.doc, &p, None, "a field must be a mapping"));
            };
            let Some(name) = def.get("field_name").and_then(Value::as_str) else {
                return Err(at(
                    cx.source,
                    cx.doc,
                    &p,
                    None,
                    "a field needs a `field_name`",
                ));
            };
            let err = |key: &str, msg: String| {
                at(cx.source, cx.doc, &format!("{p}{key}"), Some(name), &msg)
            };
            if !seen.insert(name.to_string()) {
                return Err(err("", "the field is defined twice".into()));
            }
            for k in def.keys() {
                if !FIELD_KEYS.contains(&k.as_str()) && !self.extra_keys.iter().any(|e| e == k) {
                    return Err(err(&format!("/{k}"), format!("unknown key {k:?}")));
                }
            }
            let merged = match def.get("preset") {
                None | Some(Value::Null) => def.clone(),
                Some(Value::String(preset)) => match self.presets.get(preset) {
                    Some(values) => {
                        let mut m = values.clone();
                        for (k, v) in def {
                            m.insert(k.clone(), v.clone());
                        }
                        m
                    }
                    None => return Err(err("/preset", format!("preset '{preset}' not defined"))),
                },
                Some(_) => return Err(err("/preset", "`preset` must be a name".into())),
            };
            for k in ["validators", "output_validators", "create_validators"] {
                if merged
                    .get(k)
                    .is_some_and(|v| !v.is_string() && !v.is_null())
                {
                    return Err(err(&format!("/{k}"), format!("`{k}` must be a string")));
                }
            }
            if let Some(choices) = merged.get("choices") {
                let ok = choices
                    .as_array()
                    .is_some_and(|c| c.iter().all(|c| c.get("value").is_some()));
                if !ok {
                    return Err(err(
                        "/choices",
                        "`choices` must be a list of items with a `value`".into(),
                    ));
                }
            }
            let build = |key: &str| -> Result<Option<Chain>, String> {
                match merged.get(key).and_then(Value::as_str) {
                    Some(spec) => self
                        .library
                        .chain(spec, &merged, cx.schema)
                        .map(Some)
                        .map_err(|e| err(&format!("/{key}"), e)),
                    None => Ok(None),
                }
            };
            let validators = match build("validators")? {
                Some(c) => c,
                None if field_required(&merged) => {
                    self.library.chain("not_empty", &merged, cx.schema)?
                }
                None => self.library.chain("ignore_missing", &merged, cx.schema)?,
            };
            let create_validators = build("create_validators")?;
            let output_validators = build("output_validators")?.unwrap_or_default();
            let mut shown = merged.clone();
            let subfields = match merged.get("repeating_subfields") {
                None => None,
                Some(Value::Array(subs)) => {
                    if depth + 1 >= MAX_SUBFIELD_DEPTH {
                        return Err(err(
                            "/repeating_subfields",
                            format!(
                                "repeating subfields nest deeper than {MAX_SUBFIELD_DEPTH} levels"
                            ),
                        ));
                    }
                    let (sub_defs, compiled) =
                        self.fields(cx, &format!("{p}/repeating_subfields"), subs, depth + 1)?;
                    if depth == 0 {
                        shown.insert("repeating_subfields".into(), Value::Array(sub_defs));
                    } else if let Some(raw) = def.get("repeating_subfields") {
                        // ckanext-scheming merges presets two levels deep only.
                        shown.insert("repeating_subfields".into(), raw.clone());
                    }
                    Some(compiled)
                }
                Some(_) => {
                    return Err(err(
                        "/repeating_subfields",
                        "`repeating_subfields` must be a list".into(),
                    ))
                }
            };
            if let Some(simple) = merged.get("simple_subfields") {
                if depth > 0 || subfields.is_some() {
                    return Err(err(
                        "/simple_subfields",
                        "`simple_subfields` can't be inside or beside repeating subfields".into(),
                    ));
                }
                if !simple.is_array() {
                    return Err(err(
                        "/simple_subfields",
                        "`simple_subfields` must be a list".into(),
                    ));
                }
            }
            defs.push(Value::Object(shown));
            out.push(Field {
                name: name.to_string(),
                def: merged,
                validators,
                create_validators,
                output_validators,
                subfields,
            });
        }
        Ok((defs, out))
    }
}

struct FieldCx<'a> {
    source: &'a str,
    doc: &'a Document,
    schema: &'a Map<String, Value>,
}

/// The schemas of one kind, by type, in the order configured.
#[derive(Default)]
pub struct SchemaSet {
    pub by_type: BTreeMap<String, Arc<Schema>>,
    pub order: Vec<String>,
}

impl SchemaSet {
    /// Loads the files in order; two files of one type are an error naming both.
    pub fn load(loader: &Loader<'_>, names: &[String], kind: Kind) -> Result<SchemaSet, String> {
        let mut set = SchemaSet::default();
        for name in names {
            let schema = loader.load(name, kind)?;
            if let Some(other) = set.by_type.get(&schema.type_name) {
                return Err(format!(
                    "{}: type {:?} is already defined by {}",
                    schema.source, schema.type_name, other.source
                ));
            }
            set.order.push(schema.type_name.clone());
            set.by_type
                .insert(schema.type_name.clone(), Arc::new(schema));
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::{Kind, Loader, Presets};
    use crate::builtin;
    use crate::validators::Library;

    /// Every built-in loads with ckanext-scheming's and ckanext-dcat's presets, but those
    /// that need another extension's presets (ckanext-fluent's, ckanext-dataset-series'),
    /// which say so.
    #[test]
    fn every_builtin_loads() {
        let presets = Presets::load(&[
            builtin::DEFAULT_PRESETS.to_string(),
            "ckanext.dcat.schemas:presets.yaml".to_string(),
        ])
        .unwrap();
        let library = Library::linked().unwrap();
        let loader = Loader {
            presets: &presets,
            library: &library,
            extra_keys: &[],
        };
        for (name, text) in builtin::all() {
            let doc = crate::yaml::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            if doc.value.get("presets").is_some() {
                continue;
            }
            match loader.load(name, Kind::of(&doc.value)) {
                Ok(_) => {}
                Err(e) if name.contains("multilingual") => {
                    assert!(e.contains("preset 'fluent_"), "{name}: {e}")
                }
                Err(e) if name.contains("series") => {
                    assert!(e.contains("preset 'dataset_series_"), "{name}: {e}")
                }
                Err(e) => panic!("{name}: {e}"),
            }
        }
    }
}
