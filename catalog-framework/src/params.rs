//! Reading action parameters with CKAN's coercions and messages.

use serde_json::Value;

use crate::error::{validation, validation_message, CkanResult};
use crate::registry::Params;

/// A string parameter; numbers and booleans are accepted as their text (GET sends strings).
pub fn opt_str(p: &Params, key: &str) -> Option<String> {
    match p.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(if *b { "True".into() } else { "False".into() }),
        _ => None,
    }
}

/// A required id-like parameter: missing or empty gives `{key: ["Missing value"]}`; a value that
/// is not a string gives a validation error rather than a crash.
pub fn req_str(p: &Params, key: &str) -> CkanResult<String> {
    match p.get(key) {
        None | Some(Value::Null) => Err(crate::error::missing(key)),
        Some(Value::String(s)) if s.trim().is_empty() => Err(crate::error::missing(key)),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(_) => Err(validation().field(key, "Must be a string").build()),
    }
}

/// CKAN's `asbool`: true/yes/on/y/t/1 and false/no/off/n/f/0 (`""` is false); `None` for
/// anything else.
pub(crate) fn as_bool(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => Some(n.as_f64().is_some_and(|f| f != 0.0)),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "y" | "t" | "1" => Some(true),
            "false" | "no" | "off" | "n" | "f" | "0" | "" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// CKAN's `asbool` on a parameter; anything else is a validation error (CKAN answers 500
/// there).
pub fn bool_param(p: &Params, key: &str, default: bool) -> CkanResult<bool> {
    match p.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => as_bool(v).ok_or_else(|| validation_message("Parameter is not an bool")),
    }
}

/// CKAN's `boolean_validator`: never fails; true for true/yes/t/y/1 and non-zero numbers.
pub fn truthy(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => matches!(
            s.trim().to_ascii_lowercase().as_str(),
            "true" | "yes" | "t" | "y" | "1"
        ),
        _ => false,
    }
}

/// An integer from a JSON number (a float without a fraction too) or from its text.
pub(crate) fn int_value(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// An optional parameter decoded by its typed-parameter type (CKAN's coercions and messages,
/// see [`crate::typed`]); the message goes under the parameter's key.
fn typed<T>(p: &Params, key: &str) -> CkanResult<Option<T>>
where
    Option<T>: crate::typed::Field,
{
    <Option<T> as crate::typed::Field>::from_field(p.get(key))
        .map_err(|m| validation().field(key, m.as_ref()).build())
}

/// An integer ≥ 0 (`Must be a natural number`; `Invalid integer` when not a number at all).
pub fn natural(p: &Params, key: &str) -> CkanResult<Option<i64>> {
    Ok(typed::<crate::typed::Natural>(p, key)?.map(|n| n.0))
}

/// An integer > 0 (`Must be a positive integer`).
pub fn positive(p: &Params, key: &str) -> CkanResult<Option<i64>> {
    Ok(typed::<crate::typed::Positive>(p, key)?.map(|n| n.0))
}

/// A list of strings: a JSON list, a repeated GET parameter, or a single string (one item).
pub fn str_list(p: &Params, key: &str) -> CkanResult<Option<Vec<String>>> {
    typed::<Vec<String>>(p, key)
}

/// A list parameter without its repeats, first occurrences in order. Work done per item of a
/// list (a facet counted, a filter applied, a name looked up) is then done once per distinct
/// item: `facet.field` sent as 10,000 copies of one name costs one facet, not 10,000.
pub fn dedup<T: Eq + std::hash::Hash + Clone>(items: Vec<T>) -> Vec<T> {
    let mut seen = std::collections::HashSet::with_capacity(items.len());
    items
        .into_iter()
        .filter(|item| seen.insert(item.clone()))
        .collect()
}

/// What a string holding a NUL character gets: no store can keep one in a text column
/// (PostgreSQL refuses it), so it is refused at decoding, for every action.
pub const NUL_MESSAGE: &str = "Must not contain NUL characters";

/// The message of a list over its bound.
pub fn too_many_items(max: usize) -> String {
    format!("Must hold at most {max} items")
}

/// Checks what every action's parameters must satisfy before any action sees them: no NUL
/// character in any string or key, and no list longer than `max_list_items`, at any depth.
/// Errors name the top-level parameter that holds the offending value.
pub fn check_input(p: &Params, max_list_items: usize) -> CkanResult<()> {
    let mut errs = validation();
    for (key, v) in p {
        if key.contains('\0') {
            errs.push("__key", NUL_MESSAGE);
            continue;
        }
        match scan(v, max_list_items) {
            Scan::Clean => {}
            Scan::Nul => errs.push(key, NUL_MESSAGE),
            Scan::LongList => errs.push(key, too_many_items(max_list_items)),
        }
    }
    errs.finish()
}

enum Scan {
    Clean,
    Nul,
    LongList,
}

/// One walk over a value. An explicit stack, not recursion: params built by code are not
/// bounded by the JSON decoder's depth limit.
fn scan(v: &Value, max_list_items: usize) -> Scan {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) if s.contains('\0') => return Scan::Nul,
            Value::Array(a) if a.len() > max_list_items => return Scan::LongList,
            Value::Array(a) => stack.extend(a),
            Value::Object(m) => {
                if m.keys().any(|k| k.contains('\0')) {
                    return Scan::Nul;
                }
                stack.extend(m.values());
            }
            _ => {}
        }
    }
    Scan::Clean
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(v: Value) -> Params {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn nul_and_long_lists_are_refused_anywhere_with_the_top_level_key() {
        let check = |v: Value| check_input(&p(v), 3);
        assert!(check(json!({"id": "ab", "n": [1, {"x": "y"}]})).is_ok());
        let e = check(json!({"id": "a\0b"})).unwrap_err();
        assert_eq!(e.body["id"][0], NUL_MESSAGE);
        let e = check(json!({"resources": [{"name": "ok"}, {"url": "x\0"}]})).unwrap_err();
        assert_eq!(e.body["resources"][0], NUL_MESSAGE);
        let e = check(json!({"extras": [{"k\0": "v"}]})).unwrap_err();
        assert!(e.body.contains_key("extras"));
        let e = check(json!({"a\0": 1})).unwrap_err();
        assert!(e.body.contains_key("__key"));
        assert!(check(json!({"l": [1, 2, 3]})).is_ok());
        let e = check(json!({"l": [1, 2, 3, 4]})).unwrap_err();
        assert_eq!(e.body["l"][0], "Must hold at most 3 items");
        let e = check(json!({"r": [{"x": [[1, 2, 3, 4]]}]})).unwrap_err();
        assert_eq!(e.body["r"][0], "Must hold at most 3 items");
    }

    #[test]
    fn coercions_follow_ckan() {
        let params = p(json!({"a": "yes", "b": "maybe", "n": "-1", "x": "abc", "l": "5", "z": 0}));
        assert!(bool_param(&params, "a", false).unwrap());
        assert!(bool_param(&params, "b", false).is_err());
        assert_eq!(natural(&params, "l").unwrap(), Some(5));
        assert_eq!(
            natural(&params, "n").unwrap_err().body["n"][0],
            "Must be a natural number"
        );
        assert_eq!(
            natural(&params, "x").unwrap_err().body["x"][0],
            "Invalid integer"
        );
        assert_eq!(
            positive(&params, "z").unwrap_err().body["z"][0],
            "Must be a positive integer"
        );
        assert_eq!(
            req_str(&params, "missing").unwrap_err().body["missing"][0],
            "Missing value"
        );
    }
}
