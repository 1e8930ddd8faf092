//! ckanext-scheming's validators (ckanext/scheming/validation.py), with its messages. Those
//! built from the field (`scheming_required`, `scheming_choices` …) read its `required`,
//! `choices` and the schema's `draft_fields_required` when the schema is loaded.

use std::sync::Arc;

use catalog_framework::prelude::*;

use super::{on_value, validator, Flow, Slot, Validator};
use crate::register_scheming_validator;

/// Whether a field marked required is required for this write: always, unless the schema says
/// `draft_fields_required: false` and the dataset is a draft.
fn really_required(schema: &Map<String, Value>, slot: &Slot<'_>) -> bool {
    let drafts_required = schema
        .get("draft_fields_required")
        .is_none_or(|v| catalog_framework::validators::python_truthy(Some(v)));
    drafts_required || !slot.run.state.is_none_or(|s| s.starts_with("draft"))
}

register_scheming_validator!("scheming_required", |b| {
    if !b.required() {
        return super::ckan::ignore_missing(b);
    }
    let drafts = b.schema.clone();
    let not_empty = super::ckan::not_empty(b)?;
    Ok(validator(move |slot| {
        if !really_required(&drafts, slot) {
            if slot.is_missing() {
                slot.value = None;
                return Flow::Stop;
            }
            return Flow::Next;
        }
        not_empty.run(slot)
    }))
});

register_scheming_validator!("scheming_draft_fields_not_required", |b| {
    let not_empty = super::ckan::not_empty(b)?;
    Ok(validator(move |slot| {
        if slot.run.state.is_none_or(|s| s.starts_with("draft")) {
            if slot.is_missing() {
                slot.value = None;
                return Flow::Stop;
            }
            return Flow::Next;
        }
        not_empty.run(slot)
    }))
});

/// The values of a field's static `choices`.
fn choice_values(field: &Map<String, Value>) -> Option<Vec<Value>> {
    let choices = field.get("choices")?.as_array()?;
    Some(
        choices
            .iter()
            .map(|c| c.get("value").cloned().unwrap_or(Value::Null))
            .collect(),
    )
}

register_scheming_validator!("scheming_choices", |b| {
    match choice_values(b.field) {
        Some(values) => Ok(super::ckan::one_of(values)),
        // Choices from a helper are not known here: any value passes (docs/NOT-BUILT.md).
        None => super::ckan::pass_on(b),
    }
});

register_scheming_validator!("scheming_multiple_choice", |b| {
    let order = choice_values(b.field);
    let required = b.required();
    let schema = b.schema.clone();
    Ok(validator(move |slot| {
        if !slot.errors.is_empty() {
            return Flow::Next;
        }
        let items: Vec<Value> = match slot.value.take() {
            None => Vec::new(),
            Some(Value::String(s)) => vec![Value::String(s)],
            Some(Value::Array(items)) => items,
            Some(other) => {
                slot.value = Some(other);
                slot.errors.push("expecting list of strings".into());
                return Flow::Next;
            }
        };
        let mut selected = Vec::new();
        for item in &items {
            match &order {
                Some(values) if !values.contains(item) => {
                    let text = catalog_framework::typed::py_str(item);
                    slot.errors.push(format!("unexpected choice \"{text}\""));
                }
                _ => selected.push(item.clone()),
            }
        }
        if slot.errors.is_empty() {
            let ordered: Vec<Value> = match &order {
                Some(values) => values
                    .iter()
                    .filter(|v| selected.contains(v))
                    .cloned()
                    .collect(),
                None => selected.clone(),
            };
            slot.value = Some(Value::String(Value::Array(ordered).to_string()));
            if selected.is_empty() && required && really_required(&schema, slot) {
                slot.errors.push("Select at least one".into());
            }
        } else {
            slot.value = Some(Value::Array(items));
        }
        Flow::Next
    }))
});

/// Stored JSON text back as a list (`scheming_multiple_choice_output`, and
/// `repeating_text_output`, for which `None` is `[]`).
fn json_list(v: Value, none_is_empty: bool) -> Value {
    match v {
        Value::Array(_) => v,
        Value::Null if none_is_empty => json!([]),
        Value::String(s) => match serde_json::from_str::<Value>(&s) {
            Ok(parsed) => parsed,
            Err(_) => json!([s]),
        },
        other => json!([other]),
    }
}
register_scheming_validator!("scheming_multiple_choice_output", |_| Ok(on_value(|v| Ok(
    json_list(v, false)
))));
register_scheming_validator!("repeating_text_output", |_| Ok(on_value(|v| Ok(
    json_list(v, true)
))));

register_scheming_validator!("scheming_load_json", |_| Ok(on_value(|v| Ok(match v {
    Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
    other => other,
}))));

register_scheming_validator!("scheming_multiple_text", |b| {
    let required = b.required();
    Ok(validator(move |slot| {
        if !slot.errors.is_empty() {
            return Flow::Next;
        }
        if let Some(v) = slot.value.take() {
            let items = match v {
                Value::String(s) => vec![Value::String(s)],
                Value::Array(items) => items,
                other => {
                    slot.value = Some(other);
                    slot.errors.push("expecting list of strings".into());
                    return Flow::Stop;
                }
            };
            let mut out = Vec::new();
            for item in &items {
                if !catalog_framework::validators::python_truthy(Some(item)) {
                    continue;
                }
                match item {
                    Value::String(s) => out.push(Value::String(s.clone())),
                    other => {
                        let r = super::py_repr(other);
                        slot.errors
                            .push(format!("invalid type for repeating text: {r}"));
                    }
                }
            }
            if !slot.errors.is_empty() {
                slot.value = Some(Value::Array(items));
                return Flow::Stop;
            }
            slot.value = Some(Value::String(Value::Array(out).to_string()));
        }
        let empty = match &slot.value {
            None => true,
            Some(Value::String(s)) => s == "[]",
            _ => false,
        };
        if empty {
            if required {
                slot.errors.push("Missing value".into());
                return Flow::Stop;
            }
            slot.value = Some(Value::String("[]".into()));
        }
        Flow::Next
    }))
});

/// ISO date and time, as CKAN's `date_str_to_datetime` reads it.
fn iso_datetime(required: bool, tz: bool) -> Arc<dyn Validator> {
    validator(move |slot| {
        match slot.get().clone() {
            Value::String(s) if !s.is_empty() => {
                let text = if tz { strip_offset(&s) } else { s.as_str() };
                match catalog_framework::store::time::parse_iso(text) {
                    Some(t) => {
                        slot.value = Some(json!(catalog_framework::store::time::format_iso(t)))
                    }
                    None => slot.errors.push("Date format incorrect".into()),
                }
            }
            Value::String(_) | Value::Null => {
                if required {
                    slot.errors.push("Missing value".into());
                    return Flow::Stop;
                }
                slot.value = Some(Value::Null);
            }
            _ => slot.errors.push("Date format incorrect".into()),
        }
        Flow::Next
    })
}

/// A trailing `Z` or `±HH:MM` offset (the time is kept as written).
fn strip_offset(s: &str) -> &str {
    let s = s.trim_end_matches('Z');
    if s.len() > 19 {
        let tail = &s[s.len() - 6..];
        if (tail.starts_with('+') || tail.starts_with('-')) && tail.as_bytes()[3] == b':' {
            return &s[..s.len() - 6];
        }
    }
    s
}

register_scheming_validator!("scheming_isodatetime", |b| Ok(iso_datetime(
    b.required(),
    false
)));
register_scheming_validator!("scheming_isodatetime_tz", |b| Ok(iso_datetime(
    b.required(),
    true
)));

// `convert_to_json_if_date`: a date and time (what `isodate` leaves) becomes its date.
register_scheming_validator!("convert_to_json_if_date", |_| Ok(on_value(|v| Ok(
    match v {
        Value::String(s) => match catalog_framework::store::time::parse_iso(&s) {
            Some(t) => json!(t.date().format("%Y-%m-%d").to_string()),
            None => Value::String(s),
        },
        other => other,
    }
))));

// Dates are kept as ISO text here, so CKAN's converter from Python datetimes passes text on.
register_scheming_validator!("convert_to_json_if_datetime", super::ckan::pass_on);

register_scheming_validator!("scheming_valid_json_object", |_| Ok(validator(|slot| {
    if !slot.is_truthy() {
        slot.value = None;
        return Flow::Next;
    }
    match slot.get().clone() {
        Value::String(s) => match serde_json::from_str::<Value>(&s) {
            Ok(Value::Object(_)) => {}
            Ok(_) => slot
                .errors
                .push(format!("Unsupported value for JSON field: {s}")),
            Err(e) => slot.errors.push(format!("Invalid JSON string: {e}")),
        },
        Value::Object(m) => slot.value = Some(Value::String(Value::Object(m).to_string())),
        other => {
            let class = super::py_class(&other);
            slot.errors
                .push(format!("Unsupported type for JSON field: {class}"));
        }
    }
    Flow::Next
})));

#[cfg(test)]
mod tests {
    use super::super::{run_chain, Library, Run};
    use super::*;

    fn run(spec: &str, field: Value, value: Option<Value>) -> (Option<Value>, Vec<String>) {
        let lib = Library::linked().unwrap();
        let field = field.as_object().unwrap().clone();
        let chain = lib.chain(spec, &field, &Map::new()).unwrap();
        let config = Config::default();
        let run = Run {
            op: SchemaOp::Create,
            is_sysadmin: false,
            config: &config,
            state: None,
            in_resource: false,
        };
        run_chain(&chain, "f", value, &Params::new(), &run)
    }

    #[test]
    fn multiple_text_as_scheming_stores_it() {
        let (v, e) = run("scheming_multiple_text", json!({}), Some(json!("one")));
        assert_eq!((v, e.len()), (Some(json!("[\"one\"]")), 0));
        let (_, e) = run("scheming_multiple_text", json!({}), Some(json!({"a": 1})));
        assert_eq!(e, vec!["expecting list of strings"]);
        let (v, _) = run("scheming_multiple_text", json!({}), Some(json!(["a", ""])));
        assert_eq!(v, Some(json!("[\"a\"]")));
        let (_, e) = run("scheming_multiple_text", json!({"required": true}), None);
        assert_eq!(e, vec!["Missing value"]);
    }

    #[test]
    fn choices_speak_python() {
        let field = json!({"choices": [{"value": "a"}, {"value": "b"}], "required": true});
        let (_, e) = run(
            "scheming_required scheming_choices",
            field.clone(),
            Some(json!("c")),
        );
        assert_eq!(e, vec!["Value must be one of ['a', 'b']"]);
        let (_, e) = run("scheming_required scheming_choices", field, None);
        assert_eq!(e, vec!["Missing value"]);
        let (v, e) = run(
            "scheming_required scheming_choices",
            json!({"choices": [{"value": "a"}]}),
            None,
        );
        assert_eq!((v, e.len()), (None, 0));
    }
}
