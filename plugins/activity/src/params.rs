//! The parameter shapes of the activity lists, each a [`ParamType`] with CKAN's coercion and
//! message (ckanext/activity/logic/schema.py), read as `Later<T>` fields where the list
//! parameters are checked together ([`read`]).

use std::borrow::Cow;

use catalog_framework::prelude::*;
use catalog_framework::store::time::format_iso;
use catalog_framework::typed::{Later, ParamType};

/// CKAN's `list_of_strings`: a list of strings, else `Not a list` / `Not a string: <item>`.
fn list_of_strings(v: &Value) -> Result<Vec<String>, String> {
    let Value::Array(items) = v else {
        return Err("Not a list".into());
    };
    items
        .iter()
        .map(|i| match i {
            Value::String(s) => Ok(s.clone()),
            other => Err(format!(
                "Not a string: {}",
                other
                    .as_str()
                    .map_or_else(|| other.to_string(), str::to_string)
            )),
        })
        .collect()
}

/// CKAN's timestamp parameter (`before`, `after`): seconds since the epoch, as a number or a
/// numeric string; compared with the stored timestamps in their format.
fn timestamp(v: &Value) -> Result<String, String> {
    let secs = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
    .filter(|f| f.is_finite())
    .ok_or_else(|| "Must be a float timestamp".to_string())?;
    let micros = (secs * 1_000_000.0).round();
    if micros.abs() > 8.0e18 {
        return Err("Must be a float timestamp".into());
    }
    let t = chrono_from_micros(micros as i64).ok_or("Must be a float timestamp")?;
    Ok(format_iso(t))
}

fn chrono_from_micros(micros: i64) -> Option<chrono::NaiveDateTime> {
    chrono::DateTime::from_timestamp_micros(micros).map(|t| t.naive_utc())
}

const INVALID_INTEGER: &str = "Invalid integer";

/// CKAN's list `limit` as sent: an integer ≥ 0 (a JSON integer or integer text); blank text
/// is absent. Not an integer: `Invalid integer` and `Please enter an integer value`. The list
/// reads it ([`list_options`]): absent takes `catalog.activity_list_limit`, larger values are
/// cut to `catalog.activity_list_limit_max`, `0` takes the default too (CKAN 2.12 would return
/// everything: see docs/API-COMPAT.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListLimit(pub(crate) i64);

impl ParamType for ListLimit {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        let n = match v {
            Value::Number(n) => n.as_i64(),
            Value::String(t) => t.trim().parse::<i64>().ok(),
            _ => None,
        };
        match n {
            None => Err(INVALID_INTEGER.into()),
            Some(n) if n < 0 => Err("Must be a natural number".into()),
            Some(n) => Ok(ListLimit(n)),
        }
    }
    fn is_blank(v: &Value) -> bool {
        match v {
            Value::Null => true,
            Value::String(t) => t.trim().is_empty(),
            _ => false,
        }
    }
    fn schema() -> Value {
        json!({"type": ["integer", "string"], "minimum": 0, "pattern": "^\\s*(\\+?[0-9]+|-0+)?\\s*$"})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
    fn refusal(key: &str, message: Cow<'static, str>) -> CkanError {
        let mut b = validation().field(key, message.as_ref());
        if message == INVALID_INTEGER {
            b.push(key, "Please enter an integer value");
        }
        b.build()
    }
}

/// CKAN's timestamp parameter (`before`, `after`) as the stored timestamps' text (see
/// [`timestamp`]); anything else is `Must be a float timestamp`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Timestamp(pub(crate) String);

impl ParamType for Timestamp {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        timestamp(v).map(Timestamp).map_err(Cow::Owned)
    }
    fn schema() -> Value {
        json!({"type": ["number", "string"]})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// CKAN's `list_of_strings` as a parameter type (see [`list_of_strings`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StringList(pub(crate) Vec<String>);

impl ParamType for StringList {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        list_of_strings(v).map(StringList).map_err(Cow::Owned)
    }
    fn schema() -> Value {
        json!({"type": "array", "items": {"type": "string"}})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// `include_hidden_activity`: true for `true`, a non-zero number, or the text `true`, `yes`,
/// `t`, `y`, `1` or `on` (any case, trimmed); false for anything else. Never refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HiddenFlag(pub(crate) bool);

impl ParamType for HiddenFlag {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        Ok(HiddenFlag(match v {
            Value::Bool(b) => *b,
            Value::String(t) => {
                matches!(
                    t.trim().to_lowercase().as_str(),
                    "true" | "yes" | "t" | "y" | "1" | "on"
                )
            }
            Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
            _ => false,
        }))
    }
    fn schema() -> Value {
        json!({"type": ["boolean", "string", "integer"]})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// A [`Later`] field read where the list parameters are checked together: its value, or
/// `None` with its error's messages added to `errs`.
pub(crate) fn read<T: ParamType>(field: &Later<T>, errs: &mut ValidationBuilder) -> Option<T> {
    field.get().unwrap_or_else(|e| {
        errs.merge(e);
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_one<T: ParamType>(key: &'static str, v: Value) -> (Option<T>, Value) {
        let mut errs = ValidationBuilder::default();
        let got = read(&Later::<T>::new(key, Some(v)), &mut errs);
        let body = match errs.finish() {
            Ok(()) => Value::Null,
            Err(e) => Value::Object(e.body),
        };
        (got, body)
    }

    #[test]
    fn list_parameters_read_with_ckans_messages() {
        assert_eq!(
            read_one::<ListLimit>("limit", json!(" 7 ")).0,
            Some(ListLimit(7))
        );
        assert_eq!(read_one::<ListLimit>("limit", json!("  ")).0, None);
        assert_eq!(
            read_one::<ListLimit>("limit", json!(2.5)).1,
            json!({"limit": ["Invalid integer", "Please enter an integer value"]})
        );
        assert_eq!(
            read_one::<ListLimit>("limit", json!("-1")).1,
            json!({"limit": ["Must be a natural number"]})
        );
        assert_eq!(
            read_one::<Timestamp>("before", json!("x")).1,
            json!({"before": ["Must be a float timestamp"]})
        );
        assert!(read_one::<Timestamp>("before", json!(0)).0.is_some());
        assert_eq!(
            read_one::<StringList>("activity_types", json!(["a", 1])).1,
            json!({"activity_types": ["Not a string: 1"]})
        );
        assert_eq!(
            read_one::<StringList>("activity_types", json!("a")).1,
            json!({"activity_types": ["Not a list"]})
        );
        for (v, b) in [
            (json!(" On "), true),
            (json!("Y"), true),
            (json!(2), true),
            (json!("false"), false),
            (json!(0), false),
            (json!([1]), false),
        ] {
            assert_eq!(
                read_one::<HiddenFlag>("include_hidden_activity", v).0,
                Some(HiddenFlag(b))
            );
        }
    }
}
