//! CKAN's loose parameter shapes as types: what CKAN's validators and its actions' bare reads
//! (`asbool(data_dict.get(...))`, `if data_dict.get(...)`, `str(...)`) accept, each a
//! [`ParamType`] with CKAN's coercion and message, and [`Later`], a typed field the action
//! decodes where CKAN checks it.
//!
//! CKAN checks some parameters one at a time, after a lookup or the access check, and stops at
//! the first bad one (`group_show` looks the group up before it reads `include_datasets`): such a
//! field is `Later<T>`: the OpenAPI document types it as `T`, and the action calls
//! [`Later::get`] at the point CKAN reads it. A field CKAN reads without ever refusing
//! ([`Truthy`], [`PyTruthy`], [`PyStr`], [`AnyText`], [`Scalar`], [`StrOrNum`], [`CsvList`])
//! decodes with the others.

use std::borrow::Cow;
use std::marker::PhantomData;

use serde_json::{json, Value};

use super::{as_bool, Field, ParamType};
use crate::error::{validation, validation_message, CkanError, CkanResult};

/// A field of type `T` decoded where the action reads it (see the module doc): `null` is
/// absent, as for `Option<T>`; never required, never fails while the struct decodes.
pub struct Later<T> {
    key: &'static str,
    raw: Option<Value>,
    kind: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Later<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Later({:?})", self.raw)
    }
}

impl<T: ParamType> Later<T> {
    /// A field as the struct would hold it (for a caller that builds parameters itself).
    pub fn new(key: &'static str, raw: Option<Value>) -> Self {
        Later {
            key,
            raw: raw.filter(|v| !v.is_null()),
            kind: PhantomData,
        }
    }

    /// The value decoded as the field `key: Option<T>` would be (blank: `None`); a refused
    /// value is `T`'s error under the key.
    pub fn get(&self) -> CkanResult<Option<T>> {
        match &self.raw {
            Some(v) if !T::is_blank(v) => {
                T::decode(v).map(Some).map_err(|m| T::refusal(self.key, m))
            }
            _ => Ok(None),
        }
    }

    /// The value decoded as the required field `key: T` would be (`Missing value` when absent
    /// or blank).
    pub fn require(&self) -> CkanResult<T> {
        self.get()?
            .ok_or_else(|| T::refusal(self.key, "Missing value".into()))
    }

    /// The value as sent (`None`: absent or null), for an action that passes it on whole.
    pub fn raw(&self) -> Option<&Value> {
        self.raw.as_ref()
    }

    /// True when the parameter was sent (and not null).
    pub fn is_present(&self) -> bool {
        self.raw.is_some()
    }
}

impl Later<AsBool> {
    /// CKAN's `asbool(data_dict.get(key, default))`.
    pub fn or(&self, default: bool) -> CkanResult<bool> {
        Ok(self.get()?.map_or(default, |b| b.0))
    }
}

impl<T: ParamType> Field for Later<T> {
    fn from_field(v: Option<&Value>) -> Result<Self, Cow<'static, str>> {
        Ok(Later::new("", v.cloned()))
    }
    fn from_field_at(key: &'static str, v: Option<&Value>) -> Result<Self, Cow<'static, str>> {
        Ok(Later::new(key, v.cloned()))
    }
    fn is_blank(_: &Value) -> bool {
        false
    }
    fn required() -> bool {
        false
    }
    fn schema() -> Value {
        T::schema()
    }
    fn to_value(&self) -> Option<Value> {
        self.raw.clone()
    }
}

/// CKAN's `asbool` read by an action (`asbool(data_dict.get('all_fields', False))`): true/yes/
/// on/y/t/1, false/no/off/n/f/0 and `""`; any other word is refused with `Parameter is not an
/// bool` (CKAN answers 500 there). Read it with [`Later::or`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsBool(pub bool);

impl ParamType for AsBool {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        as_bool(v)
            .map(AsBool)
            .ok_or_else(|| "Parameter is not an bool".into())
    }
    fn schema() -> Value {
        json!({"type": ["boolean", "string", "integer"]})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
    fn refusal(_key: &str, message: Cow<'static, str>) -> CkanError {
        validation_message(message.into_owned())
    }
}

/// CKAN's `boolean_validator`: never refuses; true for true/yes/t/y/1 (any case, trimmed) and
/// non-zero numbers, false for anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truthy(pub bool);

impl ParamType for Truthy {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        Ok(Truthy(crate::params::truthy(Some(v))))
    }
    fn schema() -> Value {
        json!({"type": ["boolean", "string", "integer"]})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// Python's truthiness of a value as sent (CKAN reads some flags with a bare `if`): a
/// non-empty string (so `"false"` too), `true`, a non-zero number, a non-empty list or dict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PyTruthy(pub bool);

/// Python's truthiness of a JSON value.
pub fn py_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

impl ParamType for PyTruthy {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        Ok(PyTruthy(py_truthy(v)))
    }
    fn schema() -> Value {
        json!({"type": ["boolean", "string", "integer"]})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// A value as Python's `str()` writes it (CKAN's `unicode_safe` and its f-strings): a string
/// as sent, `True`/`False`, a number's digits, JSON text for a list or dict. Never refuses;
/// [`falsy`](PyStr::falsy) keeps whether the value was falsy in Python (`""`, `false`, `0`,
/// `[]`, `{}`), for an action that checks `if not data_dict.get(key)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyStr {
    pub text: String,
    pub falsy: bool,
}

/// Python's `str()` of a JSON value (`None` for null).
pub fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        other => other.to_string(),
    }
}

impl ParamType for PyStr {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        Ok(PyStr {
            text: py_str(v),
            falsy: !py_truthy(v),
        })
    }
    fn schema() -> Value {
        json!({"type": "string"})
    }
    fn to_value(&self) -> Value {
        json!(self.text)
    }
}

/// A string as sent, any other value as its JSON text (what the DataStore actions' `str`
/// coercions give). Never refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnyText(pub String);

/// A string as sent, any other value as its JSON text (`""` for null).
pub fn any_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

impl ParamType for AnyText {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        Ok(AnyText(any_text(v)))
    }
    fn schema() -> Value {
        json!({"type": "string"})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// A list sent as a list or as comma-separated text (`"a, b"`): each item trimmed of
/// surrounding spaces when split from text, items of a list as [`AnyText`]; blank text is the
/// empty list, and any other value one item. Never refuses (empty items are kept: the action
/// decides whether `"a,,b"` names a field `""`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CsvList(pub Vec<String>);

impl ParamType for CsvList {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        Ok(CsvList(match v {
            Value::Array(items) => items.iter().map(any_text).collect(),
            Value::String(s) if s.trim().is_empty() => Vec::new(),
            Value::String(s) => s.split(',').map(|p| p.trim().to_string()).collect(),
            Value::Null => Vec::new(),
            other => vec![any_text(other)],
        }))
    }
    fn schema() -> Value {
        json!({"oneOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string", "description": "comma-separated"}]})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// A scalar as [`params::text`](crate::params::text) reads it: a string as sent, a number's
/// digits, a boolean as `True` / `False`; a list or a dict counts as absent (as a null does).
/// Never refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scalar(pub String);

impl ParamType for Scalar {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        Ok(Scalar(crate::params::text(Some(v)).unwrap_or_default()))
    }
    fn is_blank(v: &Value) -> bool {
        crate::params::text(Some(v)).is_none()
    }
    fn schema() -> Value {
        json!({"type": ["string", "number", "boolean"]})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// A string as sent or a number's digits; anything else (a boolean, a list, a dict) counts as
/// absent. Never refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrOrNum(pub String);

impl ParamType for StrOrNum {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        Ok(StrOrNum(match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => String::new(),
        }))
    }
    fn is_blank(v: &Value) -> bool {
        !matches!(v, Value::String(_) | Value::Number(_))
    }
    fn schema() -> Value {
        json!({"type": ["string", "number"]})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// A JSON object (CKAN's `dict` parameters: `filters`, a view's `config`): anything else is
/// `Must be a dict` (read it with [`Later`] where CKAN's message differs by action).
#[derive(Debug, Clone, PartialEq)]
pub struct Dict(pub serde_json::Map<String, Value>);

impl ParamType for Dict {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match v {
            Value::Object(m) => Ok(Dict(m.clone())),
            _ => Err("Must be a dict".into()),
        }
    }
    fn schema() -> Value {
        json!({"type": "object"})
    }
    fn to_value(&self) -> Value {
        Value::Object(self.0.clone())
    }
}

/// The message under a key, as a field's decoding gives it.
pub(crate) fn keyed(key: &str, message: Cow<'static, str>) -> CkanError {
    validation().field(key, message.as_ref()).build()
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::action_params! {
        /// Loose shapes.
        struct LooseParams {
            flag: Later<AsBool>,
            limit: Later<super::super::Natural>,
            total: Option<Truthy>,
            data: Option<PyTruthy>,
            title: Option<PyStr>,
            fields: Option<CsvList>,
            id: Option<AnyText>,
            name: Later<Scalar>,
            rel: Later<StrOrNum>,
        }
    }

    fn decode(v: Value) -> CkanResult<LooseParams> {
        <LooseParams as super::super::ActionParams>::decode(v.as_object().cloned().unwrap())
    }

    #[test]
    fn later_fields_decode_when_read_with_their_type_and_key() {
        let p = decode(json!({"flag": "maybe", "limit": "-2"})).unwrap();
        assert_eq!(
            p.flag.or(true).unwrap_err().to_error_object(),
            json!({"__type": "Validation Error", "message": "Parameter is not an bool"})
        );
        assert_eq!(
            p.limit.get().unwrap_err().to_error_object(),
            json!({"__type": "Validation Error", "limit": ["Must be a natural number"]})
        );
        let p = decode(json!({"flag": "yes", "limit": "", "total": null})).unwrap();
        assert!(p.flag.or(false).unwrap());
        assert_eq!(p.limit.get().unwrap(), None);
        assert!(p.limit.is_present());
        assert_eq!(
            p.limit.require().unwrap_err().to_error_object(),
            json!({"__type": "Validation Error", "limit": ["Missing value"]})
        );
        assert_eq!(p.total, None);
        let absent = decode(json!({})).unwrap();
        assert!(!absent.flag.or(false).unwrap());
        assert!(absent.flag.raw().is_none());
        // The dict as one keeps the later fields as sent.
        let p = decode(json!({"flag": "maybe"})).unwrap();
        assert_eq!(Value::Object(p.to_params()), json!({"flag": "maybe"}));
    }

    #[test]
    fn loose_shapes_never_refuse() {
        let p = decode(json!({
            "total": "No", "data": "false", "title": false, "fields": "a, b,,c", "id": 7,
        }))
        .unwrap();
        assert_eq!(p.total, Some(Truthy(false)));
        assert_eq!(p.data, Some(PyTruthy(true)));
        assert_eq!(
            p.title,
            Some(PyStr {
                text: "False".into(),
                falsy: true
            })
        );
        assert_eq!(
            p.fields,
            Some(CsvList(vec!["a".into(), "b".into(), "".into(), "c".into()]))
        );
        assert_eq!(p.id, Some(AnyText("7".into())));
        let p = decode(json!({"total": 1, "data": [], "fields": ["x", 1], "title": [1]})).unwrap();
        assert_eq!(p.total, Some(Truthy(true)));
        assert_eq!(p.data, Some(PyTruthy(false)));
        assert_eq!(p.fields, Some(CsvList(vec!["x".into(), "1".into()])));
        assert_eq!(p.title.unwrap().text, "[1]");
        let p = decode(json!({"name": true, "rel": true})).unwrap();
        assert_eq!(p.name.get().unwrap(), Some(Scalar("True".into())));
        assert_eq!(p.rel.get().unwrap(), None);
        let p = decode(json!({"name": [1], "rel": 5})).unwrap();
        assert_eq!(p.name.get().unwrap(), None);
        assert_eq!(p.rel.get().unwrap(), Some(StrOrNum("5".into())));
        assert_eq!(
            <LooseParams as super::super::ActionParams>::schema()["properties"]["limit"]["minimum"],
            json!(0)
        );
    }
}
