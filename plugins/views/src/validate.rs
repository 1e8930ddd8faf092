//! CKAN's validators as the view schemas use them, and the validation of a view type's config.

use std::collections::BTreeMap;

use catalog_framework::prelude::*;

use crate::view_type::{ConfigRule, ResourceView};
use crate::Views;

/// CKAN's `not_empty`: absent, null, `""`, `false`, `0`, `[]` and `{}` are missing.
pub(crate) fn is_empty(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Bool(b)) => !b,
        Some(Value::Number(n)) => n.as_f64() == Some(0.0),
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::Object(o)) => o.is_empty(),
    }
}

/// Missing, null or `""`: what `default(x)` and `ignore_empty` replace or drop.
fn blank(v: Option<&Value>) -> bool {
    matches!(v, None | Some(Value::Null)) || v.and_then(Value::as_str) == Some("")
}

/// CKAN's `unicode_safe`: text stays, anything else becomes text (`5` → `"5"`, `true` →
/// `"True"`, lists and objects their JSON).
pub(crate) fn text(v: &Value) -> String {
    catalog_framework::typed::py_str(v)
}

/// CKAN's `boolean_validator`: `true`, `"true"`, `"yes"`, `"t"`, `"y"`, `"1"` (any case) and
/// the number 1 are true; anything else is false.
pub(crate) fn boolean(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::String(s) => matches!(s.to_lowercase().as_str(), "true" | "yes" | "t" | "y" | "1"),
        Value::Number(n) => n.as_i64() == Some(1),
        _ => false,
    }
}

/// CKAN's `natural_number_validator`: an integer (or integer text) ≥ 0.
pub(crate) fn natural(v: &Value) -> Result<i64, &'static str> {
    let n = match v {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9e15)
                .map(|f| f as i64)
        }),
        Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    };
    match n {
        None => Err("Invalid integer"),
        Some(n) if n < 0 => Err("Must be a natural number"),
        Some(n) => Ok(n),
    }
}

/// CKAN's `convert_to_list_if_string`: one value becomes a list of it.
fn as_list(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a.clone(),
        other => vec![other.clone()],
    }
}

const NOT_EXPECTED: &str = "The input field __extras was not expected.";

/// Validates a view type's config from the request's remaining keys (`extras`: those the
/// base schema does not name): each key of the type's schema by its rule, `filter_fields` /
/// `filter_values` for filterable types; any other key is an `__extras` error. Returns the
/// config with its keys in alphabetical order, as CKAN stores it.
pub(crate) fn config(
    views: &Views,
    view_type: &str,
    vt: &dyn ResourceView,
    mut extras: Params,
    errs: &mut ValidationBuilder,
) -> Map<String, Value> {
    let info = vt.info();
    let mut out: BTreeMap<String, Value> = BTreeMap::new();
    for key in info.schema {
        let v = extras.remove(key.name);
        let value = match key.rule {
            ConfigRule::OptionalText => {
                if blank(v.as_ref()) {
                    continue;
                }
                v.as_ref().map(|v| json!(text(v)))
            }
            ConfigRule::Optional => v.filter(|v| !v.is_null()),
            ConfigRule::Bool(_) | ConfigRule::Natural(_) | ConfigRule::Default(_) => {
                let v = if blank(v.as_ref()) {
                    views.default_of(view_type, key)
                } else {
                    v
                };
                match (key.rule, v) {
                    (ConfigRule::Bool(_), Some(v)) => Some(json!(boolean(&v))),
                    (ConfigRule::Natural(_), Some(v)) => match natural(&v) {
                        Ok(n) => Some(json!(n)),
                        Err(m) => {
                            errs.push(key.name, m);
                            None
                        }
                    },
                    (_, v) => v,
                }
            }
        };
        if let Some(value) = value {
            out.insert(key.name.to_string(), value);
        }
    }
    if info.filterable {
        let fields = extras.remove("filter_fields").filter(|v| !v.is_null());
        let values = extras.remove("filter_values").filter(|v| !v.is_null());
        if let Some(f) = &fields {
            let f = as_list(f);
            let v = values.as_ref().map(as_list).unwrap_or_default();
            if f.len() != v.len() {
                let m = "\"filter_fields\" and \"filter_values\" should have the same length";
                errs.push("filter_fields", m);
                errs.push("filter_values", m);
            }
            if f.is_empty() {
                errs.push(
                    "filter_fields",
                    "\"filter_fields\" is required when \"filter_values\" is filled",
                );
            }
            if v.is_empty() {
                errs.push(
                    "filter_values",
                    "\"filter_values\" is required when \"filter_fields\" is filled",
                );
            }
            let mut filters: Map<String, Value> = Map::new();
            for (field, value) in f.iter().zip(&v) {
                let entry = filters.entry(text(field)).or_insert_with(|| json!([]));
                if let Value::Array(a) = entry {
                    a.push(value.clone());
                }
            }
            out.insert("filter_fields".into(), Value::Array(f));
            out.insert("filters".into(), Value::Object(filters));
        }
        if let Some(v) = values {
            out.insert("filter_values".into(), Value::Array(as_list(&v)));
        }
    }
    if !extras.is_empty() {
        errs.push("__extras", NOT_EXPECTED);
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ckans_validators() {
        assert!(is_empty(Some(&json!(""))));
        assert!(is_empty(Some(&json!(0))));
        assert!(!is_empty(Some(&json!(" "))));
        assert_eq!(text(&json!(5)), "5");
        assert_eq!(text(&json!(true)), "True");
        assert!(boolean(&json!("Yes")));
        assert!(boolean(&json!(1)));
        assert!(!boolean(&json!("")));
        assert!(!boolean(&json!("on")));
        assert_eq!(natural(&json!("7")), Ok(7));
        assert_eq!(natural(&json!(7.0)), Ok(7));
        assert_eq!(natural(&json!(-1)), Err("Must be a natural number"));
        assert_eq!(natural(&json!("x")), Err("Invalid integer"));
        assert_eq!(natural(&json!(1.5)), Err("Invalid integer"));
    }
}
