//! Typed action parameters: a struct per action, decoded from the JSON body, query string or
//! form with CKAN's coercions and CKAN's messages, every field's error collected into one
//! validation error (as CKAN's schemas do); keys the struct does not name stay in `__extras`.
//!
//! ```ignore
//! action_params! {
//!     /// Return the metadata of a dataset.
//!     pub struct PackageShowParams {
//!         /// the id or name of the dataset
//!         id: String,
//!         /// include tracking information (ignored)
//!         include_tracking: bool = false,
//!         /// how many (at most 1000)
//!         limit: Option<Natural>,
//!         /// a parameter whose name is no Rust identifier
//!         facet_field: Option<Vec<String>> as "facet.field",
//!     }
//! }
//! ```
//!
//! A field of type `T` is required (`Missing value` when absent, null or blank); `Option<T>`
//! is optional; `T = default` takes the default when absent. The struct's doc comment is the
//! action's help text and every field's doc comment its description in the OpenAPI document.

use std::borrow::Cow;

use serde_json::{json, Value};

use crate::error::{CkanError, CkanResult, ValidationBuilder};
use crate::store::Params;

mod ckan;
pub use ckan::{
    any_text, py_str, py_truthy, AnyText, AsBool, CsvList, Dict, Later, PyStr, PyTruthy, Scalar,
    StrOrNum, Truthy,
};

/// How a present parameter value decodes: CKAN's coercions (GET sends every value as text).
pub trait ParamType: Sized {
    /// Decodes a present, non-null value; the message goes under the parameter's key.
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>>;
    /// True when a present value counts as absent (CKAN's validators treat `""` so).
    fn is_blank(v: &Value) -> bool {
        v.is_null()
    }
    /// The value's JSON Schema.
    fn schema() -> Value;
    /// The decoded value as JSON (for [`to_params`](ActionParams::to_params)).
    fn to_value(&self) -> Value;
    /// The error of a refused value read alone ([`Later::get`]): the message under the key.
    fn refusal(key: &str, message: Cow<'static, str>) -> CkanError {
        ckan::keyed(key, message)
    }
}

impl ParamType for String {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match v {
            Value::String(s) => Ok(s.clone()),
            Value::Number(n) => Ok(n.to_string()),
            _ => Err("Must be a string".into()),
        }
    }
    fn is_blank(v: &Value) -> bool {
        blank_trimmed(v)
    }
    fn schema() -> Value {
        json!({"type": ["string", "number"]})
    }
    fn to_value(&self) -> Value {
        json!(self)
    }
}

/// A string that may be empty: required, it is missing only when absent or null (CKAN's
/// `not_missing`, where [`String`] is `not_empty`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text(pub String);

impl ParamType for Text {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        <String as ParamType>::decode(v).map(Text)
    }
    fn schema() -> Value {
        <String as ParamType>::schema()
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// Null or `""`: blank for the integer types (a `ParamType::is_blank` to reuse).
pub fn blank_text(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

/// Null or a string of spaces only: blank for [`String`] (CKAN's `not_empty`).
pub fn blank_trimmed(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

impl ParamType for i64 {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        int_value(v).ok_or_else(|| "Invalid integer".into())
    }
    fn is_blank(v: &Value) -> bool {
        blank_text(v)
    }
    fn schema() -> Value {
        json!({"type": ["integer", "string"], "pattern": "^\\s*([+-]?[0-9]+)?\\s*$"})
    }
    fn to_value(&self) -> Value {
        json!(self)
    }
}

/// An integer ≥ 0 (`Must be a natural number`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Natural(pub i64);

impl ParamType for Natural {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match i64::decode(v)? {
            n if n < 0 => Err("Must be a natural number".into()),
            n => Ok(Natural(n)),
        }
    }
    fn is_blank(v: &Value) -> bool {
        blank_text(v)
    }
    fn schema() -> Value {
        json!({"type": ["integer", "string"], "minimum": 0, "pattern": "^\\s*(\\+?[0-9]+|-0+)?\\s*$"})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// An integer > 0 (`Must be a positive integer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Positive(pub i64);

impl ParamType for Positive {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match i64::decode(v)? {
            n if n <= 0 => Err("Must be a positive integer".into()),
            n => Ok(Positive(n)),
        }
    }
    fn is_blank(v: &Value) -> bool {
        blank_text(v)
    }
    fn schema() -> Value {
        json!({"type": ["integer", "string"], "minimum": 1, "pattern": "^\\s*(\\+?0*[1-9][0-9]*)?\\s*$"})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// CKAN's `asbool` (true/yes/on/y/t/1, false/no/off/n/f/0); anything else is refused.
impl ParamType for bool {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        as_bool(v).ok_or_else(|| "Must be a boolean".into())
    }
    fn schema() -> Value {
        json!({"type": ["boolean", "string", "integer"]})
    }
    fn to_value(&self) -> Value {
        json!(self)
    }
}

/// A list of strings: a JSON list, a repeated GET parameter, or one string (one item).
impl ParamType for Vec<String> {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match v {
            Value::String(s) => Ok(vec![s.clone()]),
            Value::Array(a) => a
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.clone()),
                    Value::Number(n) => Ok(n.to_string()),
                    _ => Err("Must be a list of strings".into()),
                })
                .collect(),
            _ => Err("Not a list".into()),
        }
    }
    fn schema() -> Value {
        json!({"oneOf": [{"type": "array", "items": {"type": ["string", "number"]}}, {"type": "string"}]})
    }
    fn to_value(&self) -> Value {
        json!(self)
    }
}

/// Any JSON value, passed through as sent.
impl ParamType for Value {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        Ok(v.clone())
    }
    fn schema() -> Value {
        json!({})
    }
    fn to_value(&self) -> Value {
        self.clone()
    }
}

/// A field of a params struct: required (`T`) or optional (`Option<T>`).
pub trait Field: Sized {
    /// The field from its value (`None`: absent). `Err` is the message under its key.
    fn from_field(v: Option<&Value>) -> Result<Self, Cow<'static, str>>;
    /// [`from_field`](Field::from_field) for the field of that key ([`Later`] keeps the key).
    fn from_field_at(key: &'static str, v: Option<&Value>) -> Result<Self, Cow<'static, str>> {
        let _ = key;
        Self::from_field(v)
    }
    /// True when a present value counts as absent.
    fn is_blank(v: &Value) -> bool;
    fn required() -> bool;
    fn schema() -> Value;
    /// True for a field that leaves its value in `__extras` ([`InDict`]).
    fn keeps() -> bool {
        false
    }
    /// The decoded value as JSON, `None` when absent (or left in `__extras`).
    fn to_value(&self) -> Option<Value>;
}

macro_rules! fields {
    ($($t:ty),*) => {$(
        impl Field for $t {
            fn from_field(v: Option<&Value>) -> Result<Self, Cow<'static, str>> {
                match v {
                    Some(v) if !<$t as ParamType>::is_blank(v) => <$t as ParamType>::decode(v),
                    _ => Err("Missing value".into()),
                }
            }
            fn is_blank(v: &Value) -> bool {
                <$t as ParamType>::is_blank(v)
            }
            fn required() -> bool {
                true
            }
            fn schema() -> Value {
                <$t as ParamType>::schema()
            }
            fn to_value(&self) -> Option<Value> {
                Some(<$t as ParamType>::to_value(self))
            }
        }
        impl Field for Option<$t> {
            fn from_field(v: Option<&Value>) -> Result<Self, Cow<'static, str>> {
                match v {
                    Some(v) if !<$t as ParamType>::is_blank(v) => <$t as ParamType>::decode(v).map(Some),
                    _ => Ok(None),
                }
            }
            fn is_blank(v: &Value) -> bool {
                <$t as ParamType>::is_blank(v)
            }
            fn required() -> bool {
                false
            }
            fn schema() -> Value {
                <$t as ParamType>::schema()
            }
            fn to_value(&self) -> Option<Value> {
                self.as_ref().map(<$t as ParamType>::to_value)
            }
        }
    )*};
}

fields!(
    String,
    Text,
    i64,
    Natural,
    Positive,
    bool,
    Vec<String>,
    Value,
    AsBool,
    Truthy,
    PyTruthy,
    PyStr,
    AnyText,
    CsvList,
    Dict,
    Scalar,
    StrOrNum
);

/// A parameter as sent, `null` included (`Raw(None)`: absent), for an action that tells a null
/// value from an absent key and reads it where CKAN does. Never required, never fails.
#[derive(Debug, Clone, PartialEq)]
pub struct Raw(pub Option<Value>);

impl Raw {
    /// The value as sent (`Some(Value::Null)` for a null).
    pub fn get(&self) -> Option<&Value> {
        self.0.as_ref()
    }
}

impl Field for Raw {
    fn from_field(v: Option<&Value>) -> Result<Self, Cow<'static, str>> {
        Ok(Raw(v.cloned()))
    }
    fn is_blank(_: &Value) -> bool {
        false
    }
    fn required() -> bool {
        false
    }
    fn schema() -> Value {
        json!({})
    }
    fn to_value(&self) -> Option<Value> {
        self.0.clone()
    }
}

/// A documented key of a data dict that the action validates whole (an entity's
/// create/update/patch dict, checked by its schema; `package_search`'s Solr parameters): the
/// OpenAPI document describes it with `T`'s schema, and decoding leaves it in `__extras`, where
/// the action reads it with the rest of the dict. It is never required and never fails.
pub struct InDict<T>(std::marker::PhantomData<fn() -> T>);

impl<T> std::fmt::Debug for InDict<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InDict")
    }
}

impl<T: ParamType> Field for InDict<T> {
    fn from_field(_: Option<&Value>) -> Result<Self, Cow<'static, str>> {
        Ok(InDict(std::marker::PhantomData))
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
    fn keeps() -> bool {
        true
    }
    fn to_value(&self) -> Option<Value> {
        None
    }
}

/// Decodes one field, recording its error; with a default, absence takes the default.
#[doc(hidden)]
pub fn decode_field<T: Field>(
    p: &mut Params,
    key: &'static str,
    default: Option<T>,
    errs: &mut ValidationBuilder,
) -> Option<T> {
    let removed;
    let v = if T::keeps() {
        p.get(key)
    } else {
        removed = p.remove(key);
        removed.as_ref()
    };
    let absent = v.is_none_or(T::is_blank);
    if absent {
        if let Some(d) = default {
            return Some(d);
        }
    }
    match T::from_field_at(key, v) {
        Ok(t) => Some(t),
        Err(message) => {
            errs.push(key, message.as_ref());
            None
        }
    }
}

/// A params struct declared with [`action_params!`](crate::action_params).
pub trait ActionParams: Sized + Send {
    /// The action's help text: the struct's doc comment.
    fn doc() -> &'static str;
    /// Decodes the parameters; every field's error in one validation error.
    fn decode(p: Params) -> CkanResult<Self>;
    /// The parameters' JSON Schema (an object; unknown keys allowed).
    fn schema() -> Value;
    /// The parameters as one data dict: `__extras` and the fields as decoded (defaults
    /// included, absent ones left out), for an auth function, which sees the whole dict as
    /// CKAN's do.
    fn to_params(&self) -> Params;
}

/// Declares an action's params struct: see [`crate::typed`].
#[macro_export]
macro_rules! action_params {
    (
        $(#[doc = $doc:literal])*
        $vis:vis struct $name:ident {
            $(
                $(#[doc = $fdoc:literal])*
                $field:ident : $ty:ty $(as $key:literal)? $(= $default:expr)?
            ),* $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug)]
        $vis struct $name {
            $(
                $(#[doc = $fdoc])*
                pub $field: $ty,
            )*
            /// The keys no field names (CKAN's `__extras`).
            pub __extras: $crate::__private::Params,
        }

        impl $name {
            /// The parameters as one data dict (see `ActionParams::to_params`).
            #[allow(dead_code)]
            $vis fn to_params(&self) -> $crate::__private::Params {
                <Self as $crate::__private::ActionParams>::to_params(self)
            }
        }

        impl $crate::__private::ActionParams for $name {
            fn doc() -> &'static str {
                static DOC: std::sync::OnceLock<String> = std::sync::OnceLock::new();
                DOC.get_or_init(|| $crate::__private::__doc_text(concat!($($doc, "\n",)*)))
            }

            fn decode(mut p: $crate::__private::Params) -> $crate::__private::CkanResult<Self> {
                let mut errs = $crate::__private::ValidationBuilder::default();
                $(
                    #[allow(unused_mut, unused_assignments)]
                    let mut default: Option<$ty> = None;
                    $( default = Some($default); )?
                    let $field = $crate::__private::decode_field::<$ty>(
                        &mut p,
                        $crate::action_params!(@key $field $(, $key)?),
                        default,
                        &mut errs,
                    );
                )*
                errs.finish()?;
                Ok($name {
                    $(
                        $field: match $field {
                            Some(v) => v,
                            None => return Err($crate::__private::internal("parameter decoding")),
                        },
                    )*
                    __extras: p,
                })
            }

            fn to_params(&self) -> $crate::__private::Params {
                #[allow(unused_mut)]
                let mut p = self.__extras.clone();
                $(
                    if let Some(v) = $crate::__private::Field::to_value(&self.$field) {
                        p.insert($crate::action_params!(@key $field $(, $key)?).to_string(), v);
                    }
                )*
                p
            }

            fn schema() -> $crate::__private::serde_json::Value {
                let mut properties = $crate::__private::serde_json::Map::new();
                let mut required: Vec<&str> = Vec::new();
                $(
                    {
                        let key = $crate::action_params!(@key $field $(, $key)?);
                        let mut s = <$ty as $crate::__private::Field>::schema();
                        let doc = $crate::__private::__doc_text(concat!($($fdoc, "\n",)*));
                        if !doc.is_empty() {
                            s["description"] = doc.into();
                        }
                        let has_default = !<[&str]>::is_empty(&[$(stringify!($default))?]);
                        if <$ty as $crate::__private::Field>::required() && !has_default {
                            required.push(key);
                        }
                        properties.insert(key.to_string(), s);
                    }
                )*
                $crate::__private::serde_json::json!({
                    "type": "object",
                    "properties": properties,
                    "required": required,
                })
            }
        }
    };
    (@key $field:ident) => { stringify!($field) };
    (@key $field:ident, $key:literal) => { $key };
}

/// An action whose body starts from typed parameters; register it wrapped in [`Typed`]:
/// `register_action!("my_action", Typed(MyAction));`. Its help text is the params struct's
/// doc comment and its OpenAPI request schema the struct's schema.
#[async_trait::async_trait]
pub trait TypedAction: Send + Sync + 'static {
    type Params: ActionParams;
    /// True for actions that read only (they answer GET).
    const READ: bool;
    /// False for a write that must not run in one transaction ([`Action::transactional`](crate::registry::Action::transactional)).
    const TRANSACTION: bool = true;
    async fn run(
        &self,
        ctx: &mut crate::context::ActionContext,
        params: Self::Params,
    ) -> CkanResult<crate::registry::Answer>;
}

/// Registers actions with typed parameters: the one way to register an action.
///
/// ```ignore
/// register_typed_actions! {
///     read thing_show(ThingShowParams) => thing::show::thing_show, auth = ThingRead;
///     write thing_purge(ThingPurgeParams) => thing::purge::thing_purge;
///     maintenance thing_rebuild(ThingRebuildParams) => thing::rebuild;
/// }
/// ```
///
/// Each line names the action (as CKAN does), its params struct (declared with
/// [`action_params!`](crate::action_params); its doc comment is the help text and its fields
/// the OpenAPI request schema) and an `async fn(&mut ActionContext, ThingShowParams) ->
/// CkanResult<T>` where `T` is a `Value` or an [`Answer`](crate::registry::Answer), optionally
/// with a priority (`priority = 10`: it replaces an action of the same name registered at a
/// lower one, by default 0) and its auth function. `read` declares a read (side-effect free, GET allowed), `write` a
/// write (run in one transaction), `maintenance` a write that commits its own work in steps
/// (no transaction around it). An action registered without an auth function is
/// sysadmin-only, unless another line or plugin registers one with `register_auth!`.
#[macro_export]
macro_rules! register_typed_actions {
    ($( $kind:ident $name:ident($params:ty) => $f:path $(, priority = $p:expr)? $(, auth = $auth:expr)?; )*) => {
        $(
            const _: () = {
                struct Registered;
                #[$crate::__private::async_trait]
                impl $crate::__private::TypedAction for Registered {
                    type Params = $params;
                    const READ: bool = $crate::register_typed_actions!(@read $kind);
                    const TRANSACTION: bool = $crate::register_typed_actions!(@transaction $kind);
                    async fn run(
                        &self,
                        ctx: &mut $crate::__private::ActionContext,
                        params: $params,
                    ) -> $crate::__private::CkanResult<$crate::__private::Answer> {
                        $f(ctx, params).await.map(::std::convert::Into::into)
                    }
                }
                $crate::register_action!(
                    stringify!($name),
                    $crate::__private::Typed(Registered),
                    priority = $crate::register_typed_actions!(@priority $($p)?)
                );
                $( $crate::register_auth!(stringify!($name), $auth); )?
            };
        )*
    };
    (@priority) => { 0 };
    (@priority $p:expr) => { $p };
    (@read read) => { true };
    (@read write) => { false };
    (@read maintenance) => { false };
    (@transaction maintenance) => { false };
    (@transaction $kind:ident) => { true };
}

/// Adapts a [`TypedAction`] to the registry's [`Action`](crate::registry::Action).
pub struct Typed<A>(pub A);

#[async_trait::async_trait]
impl<A: TypedAction> crate::registry::Action for Typed<A> {
    fn side_effect_free(&self) -> bool {
        A::READ
    }
    fn transactional(&self) -> bool {
        !A::READ && A::TRANSACTION
    }
    fn doc(&self) -> &'static str {
        <A::Params as ActionParams>::doc()
    }
    fn params_schema(&self) -> Option<Value> {
        Some(<A::Params as ActionParams>::schema())
    }
    async fn run(
        &self,
        ctx: &mut crate::context::ActionContext,
        params: Params,
    ) -> CkanResult<Value> {
        self.answer(ctx, params)
            .await
            .map(crate::registry::Answer::into_value)
    }
    async fn answer(
        &self,
        ctx: &mut crate::context::ActionContext,
        params: Params,
    ) -> CkanResult<crate::registry::Answer> {
        let typed = <A::Params as ActionParams>::decode(params)?;
        self.0.run(ctx, typed).await
    }
}

/// The text of doc comments as written (`/// text` gives `" text"`): each line without its one
/// leading space, the trailing blank lines dropped.
#[doc(hidden)]
pub fn __doc_text(s: &str) -> String {
    let lines: Vec<&str> = s
        .lines()
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    lines.join("\n").trim_end().to_string()
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    crate::action_params! {
        /// Show a thing.
        ///
        /// More text.
        struct ShowParams {
            /// the id
            id: String,
            /// how many
            limit: Option<Natural>,
            all_fields: bool = false,
            facet_field: Option<Vec<String>> as "facet.field",
        }
    }

    fn decode(v: Value) -> CkanResult<ShowParams> {
        ShowParams::decode(v.as_object().cloned().unwrap())
    }

    #[test]
    fn fields_decode_with_ckan_coercions_and_extras_stay() {
        let p = decode(
            json!({"id": 7, "limit": "5", "all_fields": "True", "facet.field": "tags", "x": 1}),
        )
        .unwrap();
        assert_eq!(p.id, "7");
        assert_eq!(p.limit, Some(Natural(5)));
        assert!(p.all_fields);
        assert_eq!(p.facet_field, Some(vec!["tags".to_string()]));
        assert_eq!(p.__extras, json!({"x": 1}).as_object().cloned().unwrap());
        let d = decode(json!({"id": "a", "limit": ""})).unwrap();
        assert_eq!(d.limit, None);
        assert!(!d.all_fields);
    }

    #[test]
    fn every_field_error_is_reported_at_once() {
        let e =
            decode(json!({"limit": "-1", "all_fields": "maybe", "facet.field": {}})).unwrap_err();
        assert_eq!(
            e.to_error_object(),
            json!({
                "__type": "Validation Error",
                "id": ["Missing value"],
                "limit": ["Must be a natural number"],
                "all_fields": ["Must be a boolean"],
                "facet.field": ["Not a list"],
            })
        );
    }

    crate::action_params! {
        /// Kinds of fields.
        struct KindsParams {
            q: Text,
            raw: Raw,
            dict: InDict<String>,
            n: Option<Natural>,
        }
    }

    #[test]
    fn text_may_be_empty_raw_keeps_null_and_in_dict_stays_in_extras() {
        let p = KindsParams::decode(
            json!({"q": "", "raw": null, "dict": "d", "n": "3", "x": 1})
                .as_object()
                .cloned()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(p.q, Text(String::new()));
        assert_eq!(p.raw, Raw(Some(Value::Null)));
        assert_eq!(p.n, Some(Natural(3)));
        assert_eq!(
            p.__extras,
            *json!({"dict": "d", "x": 1}).as_object().unwrap()
        );
        // The dict as one: extras first, then the fields as decoded (null kept, absent out).
        assert_eq!(
            Value::Object(p.to_params()),
            json!({"dict": "d", "x": 1, "q": "", "raw": null, "n": 3})
        );
        let e = KindsParams::decode(Params::new()).unwrap_err();
        assert_eq!(
            e.to_error_object(),
            json!({"__type": "Validation Error", "q": ["Missing value"]})
        );
        let absent = KindsParams::decode(json!({"q": 1}).as_object().cloned().unwrap()).unwrap();
        assert_eq!(absent.raw, Raw(None));
        assert_eq!(KindsParams::schema()["required"], json!(["q"]));
    }

    #[test]
    fn the_schema_comes_from_the_struct() {
        let s = ShowParams::schema();
        assert_eq!(s["required"], json!(["id"]));
        assert_eq!(s["properties"]["id"]["description"], "the id");
        assert!(s["properties"]["facet.field"].is_object());
        assert_eq!(ShowParams::doc(), "Show a thing.\n\nMore text.");
    }
}
