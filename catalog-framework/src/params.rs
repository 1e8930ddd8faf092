//! Reading action parameters with CKAN's coercions and messages.

use serde_json::Value;

use crate::error::{validation, validation_message, CkanResult};
use crate::store::Params;
use crate::typed::as_bool;

/// Two dicts equal but for `key` (present in either, both or neither), compared in place
/// (no copies of large documents).
pub fn equal_but_key(a: &Params, b: &Params, key: &str) -> bool {
    let others = |m: &Params| m.len() - usize::from(m.contains_key(key));
    others(a) == others(b) && a.iter().all(|(k, va)| k == key || b.get(k) == Some(va))
}

/// A string parameter; numbers and booleans are accepted as their text (GET sends strings).
pub fn opt_str(p: &Params, key: &str) -> Option<String> {
    text(p.get(key))
}

/// [`opt_str`] on a parameter's value (a field declared `Option<Value>`, read where the
/// action reads it).
pub fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(if *b { "True".into() } else { "False".into() }),
        _ => None,
    }
}

/// A required id-like parameter: missing or empty gives `{key: ["Missing value"]}`; a value that
/// is not a string gives a validation error rather than a crash.
pub fn req_str(p: &Params, key: &str) -> CkanResult<String> {
    decode::<String>(key, p.get(key))
}

/// CKAN's `asbool` on a parameter; anything else is a validation error (CKAN answers 500
/// there).
pub fn bool_param(p: &Params, key: &str, default: bool) -> CkanResult<bool> {
    bool_value(p.get(key), default)
}

/// [`bool_param`] on a parameter's value.
pub fn bool_value(v: Option<&Value>, default: bool) -> CkanResult<bool> {
    match v {
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

/// An optional parameter decoded by its typed-parameter type (CKAN's coercions and messages,
/// see [`crate::typed`]); the message goes under the parameter's key.
fn typed<T>(p: &Params, key: &str) -> CkanResult<Option<T>>
where
    Option<T>: crate::typed::Field,
{
    decode(key, p.get(key))
}

/// A parameter's value decoded by a typed-parameter type where the action checks it (a field
/// declared `Option<Value>`): `Option<T>` as the field `key: Option<T>` would decode it, or
/// `T` as the required field `key: T` would; the message goes under `key`.
///
/// ```ignore
/// let limit: Option<Natural> = decode("limit", p.limit.as_ref())?;
/// let id: String = decode("id", p.id.as_ref())?;
/// ```
pub fn decode<T: crate::typed::Field>(key: &str, v: Option<&Value>) -> CkanResult<T> {
    T::from_field(v).map_err(|m| validation().field(key, m.as_ref()).build())
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

pub use crate::input::{check_input, too_many_items, NUL_MESSAGE};

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
