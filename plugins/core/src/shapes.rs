//! Parameter shapes of the core actions that the framework's typed parameters do not have,
//! each a [`ParamType`] with the coercion and message the action had by hand: the actions use
//! them as `Later<T>` fields (typed in the OpenAPI document, decoded where the action reads
//! them). The family-specific ones live with their family (`tag::TagTerms`,
//! `vocabulary::DataId` …).

use std::borrow::Cow;

use catalog_framework::prelude::*;
use catalog_framework::typed::{AnyText, CsvList, Later, ParamType, PyStr, PyTruthy, Truthy};
pub(crate) use catalog_framework::typed::{Scalar, StrOrNum};

/// A parameter type that never refuses a value: a [`Later`] field of it reads without error.
pub(crate) trait Lenient: ParamType {}

impl Lenient for PyStr {}
impl Lenient for PyTruthy {}
impl Lenient for Truthy {}
impl Lenient for AnyText {}
impl Lenient for CsvList {}

/// Reading a [`Later`] field of a [`Lenient`] type.
pub(crate) trait LaterExt<T> {
    /// The value (`None`: absent, or what the type counts as absent).
    fn value(&self) -> Option<T>;
}

impl<T: Lenient> LaterExt<T> for Later<T> {
    fn value(&self) -> Option<T> {
        // A lenient type has no refusal: `get` cannot fail.
        self.get().ok().flatten()
    }
}

impl Lenient for Scalar {}
impl Lenient for StrOrNum {}

/// A JSON list whose items the action checks one at a time as it reads them (the dicts of
/// the `*_update_many` writes): anything else is `Not a list`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DictList(pub(crate) Vec<Value>);

impl ParamType for DictList {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match v {
            Value::Array(items) => Ok(DictList(items.clone())),
            _ => Err("Not a list".into()),
        }
    }
    fn schema() -> Value {
        json!({"type": "array", "items": {"type": "object"}})
    }
    fn to_value(&self) -> Value {
        Value::Array(self.0.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn later<T: ParamType>(v: Value) -> Later<T> {
        Later::new("k", Some(v))
    }

    #[test]
    fn scalar_reads_as_text_does() {
        for v in [
            json!("a b"),
            json!(""),
            json!(5),
            json!(1.5),
            json!(true),
            json!(false),
            json!([1]),
            json!({"a": 1}),
            json!(null),
        ] {
            assert_eq!(
                later::<Scalar>(v.clone()).value().map(|s| s.0),
                catalog_framework::params::text(Some(&v))
            );
        }
        assert_eq!(Later::<Scalar>::new("k", None).value(), None);
    }

    #[test]
    fn str_or_num_leaves_out_other_values() {
        assert_eq!(later::<StrOrNum>(json!("x")).value().unwrap().0, "x");
        assert_eq!(later::<StrOrNum>(json!("")).value().unwrap().0, "");
        assert_eq!(later::<StrOrNum>(json!(7)).value().unwrap().0, "7");
        for v in [json!(true), json!([]), json!({}), json!(null)] {
            assert_eq!(later::<StrOrNum>(v).value(), None);
        }
    }

    #[test]
    fn dict_list_is_a_list_and_refusals_collect() {
        assert_eq!(
            later::<DictList>(json!([1, {}])).get().unwrap().unwrap().0,
            vec![json!(1), json!({})]
        );
        let e = later::<DictList>(json!("x")).get().unwrap_err();
        assert_eq!(e.body["k"], json!(["Not a list"]));
        let mut errs = validation();
        errs.push("k", "first");
        errs.merge(e);
        assert_eq!(
            errs.build().to_error_object(),
            json!({"__type": "Validation Error", "k": ["first", "Not a list"]})
        );
    }
}
