//! A dataset type from a schema file, as ckanext-scheming validates it (spec/scheming.md): the
//! schema's fields are checked by their validators, CKAN's core fields then by the default
//! schema too (its bounds and rules hold for every type), and the schema's other fields are
//! kept at the top level of the dataset dict — repeating subfields as lists of objects, the
//! values a dataset-level extra would hold (text) turned back by the output validators. The
//! stored dict is what `package_show` answers, so output validators run once, on write.

use std::sync::Arc;

use catalog_framework::error::integrity;
use catalog_framework::prelude::*;
use catalog_framework::typed::py_str;
use catalog_framework::validators::SCHEMA_FIELDS;

use crate::schema::{Field, Schema};
use crate::validators::{py_class, run_chain, Run};

/// The scheming implementation of a dataset type.
pub struct SchemingDataset {
    pub schema: Arc<Schema>,
}

/// A field's validated value (`None`: no key) and its errors (`None`: valid): a list of
/// messages, or for repeating subfields a list of per-item error dicts.
type Checked = (Option<Value>, Option<Value>);

/// navl's refusal of a repeating field that is not a list of dicts: 400 Integrity Error.
fn not_a_list(path: &[Value], found: &Value, data: &Params) -> CkanError {
    let tuple = path
        .iter()
        .map(crate::validators::py_repr)
        .collect::<Vec<_>>()
        .join(", ");
    let comma = if path.len() == 1 { "," } else { "" };
    integrity(
        format!(
            "Only lists of dicts can be placed against subschema ({tuple}{comma}), not {}",
            py_class(found)
        ),
        Value::Object(data.clone()),
    )
}

/// Checks that every repeating field (at any depth) holds a list of dicts.
fn check_shapes(
    fields: &[Field],
    dict: &Params,
    path: &mut Vec<Value>,
    data: &Params,
    max_items: usize,
) -> CkanResult<()> {
    for f in fields {
        let Some(subs) = &f.subfields else { continue };
        let Some(v) = dict.get(&f.name) else { continue };
        path.push(json!(f.name));
        match v {
            Value::Array(items) => {
                if items.len() > max_items {
                    return Err(ValidationBuilder::default()
                        .field(
                            &f.name,
                            catalog_framework::params::too_many_items(max_items),
                        )
                        .build());
                }
                for (i, item) in items.iter().enumerate() {
                    let Value::Object(m) = item else {
                        return Err(not_a_list(path, item, data));
                    };
                    path.push(json!(i));
                    check_shapes(subs, m, path, data, max_items)?;
                    path.pop();
                }
            }
            other => return Err(not_a_list(path, other, data)),
        }
        path.pop();
    }
    Ok(())
}

/// One field: its chain, or for repeating subfields each item's subfields in turn.
fn check_field(f: &Field, value: Option<Value>, siblings: &Params, run: &Run<'_>) -> Checked {
    let Some(subs) = &f.subfields else {
        let (out, errors) = run_chain(f.chain(run.op), &f.name, value, siblings, run);
        let errors = (!errors.is_empty()).then(|| json!(errors));
        return (out, errors);
    };
    let Some(Value::Array(items)) = value else {
        return (None, None);
    };
    let mut out = Vec::with_capacity(items.len());
    let mut item_errors = Vec::with_capacity(items.len());
    let mut any = false;
    for item in &items {
        let empty = Params::new();
        let m = item.as_object().unwrap_or(&empty);
        let mut kept = Map::new();
        let mut errs = Map::new();
        for sf in subs {
            let (v, e) = check_field(sf, m.get(&sf.name).cloned(), m, run);
            if let Some(e) = e {
                errs.insert(sf.name.clone(), e);
            }
            if let Some(v) = v {
                if let Some(v) = output(sf, v, run) {
                    kept.insert(sf.name.clone(), v);
                }
            }
        }
        any |= !errs.is_empty();
        item_errors.push(Value::Object(errs));
        out.push(Value::Object(kept));
    }
    if any {
        return (None, Some(Value::Array(item_errors)));
    }
    // An empty list stores nothing (the key is absent from the answer).
    ((!out.is_empty()).then_some(Value::Array(out)), None)
}

/// A value as `package_show` gives it: the output validators run; `None` drops the key
/// (ckanext-scheming's output `ignore_missing`).
fn output(f: &Field, v: Value, run: &Run<'_>) -> Option<Value> {
    if f.output_validators.is_empty() || f.subfields.is_some() {
        return (!v.is_null()).then_some(v);
    }
    let (out, _) = run_chain(&f.output_validators, &f.name, Some(v), &Params::new(), run);
    out.filter(|v| !v.is_null())
}

/// What a dataset-level extra holds: text (CKAN's `package_extra.value` is a string column).
fn as_extra(v: Value) -> Value {
    match v {
        Value::String(_) | Value::Null | Value::Array(_) | Value::Object(_) => v,
        other => Value::String(py_str(&other)),
    }
}

impl SchemingDataset {
    /// The schema's resource fields on each resource, in place; the per-resource errors.
    fn resources(&self, data: &mut Params, run: &Run<'_>) -> Option<Vec<Value>> {
        let Some(Value::Array(resources)) = data.get_mut("resources") else {
            return None;
        };
        let mut errors = Vec::with_capacity(resources.len());
        let mut any = false;
        for r in resources.iter_mut() {
            let Value::Object(rm) = r else {
                errors.push(json!({}));
                continue;
            };
            let input = rm.clone();
            let mut errs = Map::new();
            for f in &self.schema.resource_fields {
                let (v, e) = check_field(f, input.get(&f.name).cloned(), &input, run);
                if let Some(e) = e {
                    errs.insert(f.name.clone(), e);
                }
                match v.and_then(|v| output(f, v, run)) {
                    Some(v) => {
                        rm.insert(f.name.clone(), v);
                    }
                    None => {
                        rm.shift_remove(&f.name);
                    }
                }
            }
            any |= !errs.is_empty();
            errors.push(Value::Object(errs));
        }
        any.then_some(errors)
    }
}

/// Adds `ours` (field → errors) to the default schema's error body; resource errors are
/// merged item by item.
fn merge_errors(body: &mut Map<String, Value>, ours: Map<String, Value>) {
    for (k, v) in ours {
        match (body.get_mut(&k), v) {
            (Some(Value::Array(theirs)), Value::Array(mine)) if k == "resources" => {
                for (i, item) in mine.into_iter().enumerate() {
                    match (theirs.get_mut(i), item) {
                        (Some(Value::Object(t)), Value::Object(m)) => {
                            for (mk, mv) in m {
                                t.entry(mk).or_insert(mv);
                            }
                        }
                        (None, item) => theirs.push(item),
                        _ => {}
                    }
                }
            }
            (Some(Value::Array(theirs)), Value::Array(mine)) => {
                for m in mine {
                    if !theirs.contains(&m) {
                        theirs.push(m);
                    }
                }
            }
            (_, v) => {
                body.insert(k, v);
            }
        }
    }
}

impl DatasetSchema for SchemingDataset {
    fn validate(&self, data: &mut Params, ctx: &SchemaContext<'_>) -> CkanResult<()> {
        let max_items = ctx.config.catalog.limits.max_list_items;
        check_shapes(&self.schema.fields, data, &mut Vec::new(), data, max_items)?;
        if let Some(Value::Array(resources)) = data.get("resources") {
            for (i, r) in resources.iter().enumerate() {
                if let Value::Object(rm) = r {
                    let mut path = vec![json!("resources"), json!(i)];
                    check_shapes(&self.schema.resource_fields, rm, &mut path, data, max_items)?;
                }
            }
        }
        let input = data.clone();
        let state = input.get("state").and_then(Value::as_str);
        let run = Run {
            op: ctx.op,
            is_sysadmin: ctx.is_sysadmin,
            config: ctx.config,
            state,
            in_resource: false,
        };
        let mut errors = Map::new();
        let mut kept = Params::new();
        for f in &self.schema.fields {
            let (v, e) = check_field(f, input.get(&f.name).cloned(), &input, &run);
            if let Some(e) = e {
                errors.insert(f.name.clone(), e);
            }
            if SCHEMA_FIELDS.contains(&f.name.as_str()) {
                match v {
                    Some(v) => {
                        data.insert(f.name.clone(), v);
                    }
                    None => {
                        data.shift_remove(&f.name);
                    }
                }
            } else if let Some(v) = v {
                let stored = if f.subfields.is_some() {
                    v
                } else {
                    as_extra(v)
                };
                if let Some(v) = output(f, stored, &run) {
                    kept.insert(f.name.clone(), v);
                }
            }
        }
        let resource_run = Run {
            in_resource: true,
            ..run
        };
        if let Some(e) = self.resources(data, &resource_run) {
            errors.insert("resources".into(), Value::Array(e));
        }
        let default = catalog_plugin_schema::DefaultDatasetSchema.validate(data, ctx);
        match default {
            Ok(()) if errors.is_empty() => {}
            Ok(()) => {
                return Err(CkanError {
                    kind: ErrorKind::Validation,
                    body: errors,
                })
            }
            Err(mut e) if e.kind == ErrorKind::Validation => {
                merge_errors(&mut e.body, errors);
                return Err(e);
            }
            Err(e) => return Err(e),
        }
        for (k, v) in kept {
            data.insert(k, v);
        }
        Ok(())
    }

    fn show(&self, dict: &mut Params) {
        // ckanext-scheming's output `ignore_missing`: a schema field without a value is absent.
        let mut any_extra_field = false;
        for f in &self.schema.fields {
            match dict.get(&f.name) {
                Some(Value::Null) => {
                    dict.shift_remove(&f.name);
                }
                Some(_) if !SCHEMA_FIELDS.contains(&f.name.as_str()) => any_extra_field = true,
                _ => {}
            }
        }
        // Every stored extra was a schema field: CKAN's answer has no `extras` key then.
        if any_extra_field
            && dict
                .get("extras")
                .is_some_and(|e| e.as_array().is_some_and(Vec::is_empty))
        {
            dict.shift_remove("extras");
        }
        if let Some(Value::Array(resources)) = dict.get_mut("resources") {
            for r in resources.iter_mut().filter_map(Value::as_object_mut) {
                for f in &self.schema.resource_fields {
                    if r.get(&f.name).is_some_and(Value::is_null) {
                        r.shift_remove(&f.name);
                    }
                }
            }
        }
    }
}
