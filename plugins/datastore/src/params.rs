//! `Opt<T>`: an optional field of one of this crate's parameter types (the framework
//! implements `Field` for `Option<T>` of its own types only). As for every optional field, a
//! `null` is absent: `id: null` leaves `resource_id` to name the resource, `include_total:
//! null` is the default.

use std::borrow::Cow;

use catalog_framework::prelude::*;
use catalog_framework::typed::{Field, ParamType};

/// An optional parameter decoded by `T` with the struct: `None` when absent or null; a value
/// `T` refuses is its message under the key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Opt<T>(pub Option<T>);

impl<T: ParamType> Field for Opt<T> {
    fn from_field(v: Option<&Value>) -> Result<Self, Cow<'static, str>> {
        v.filter(|v| !v.is_null())
            .map(T::decode)
            .transpose()
            .map(Opt)
    }
    fn is_blank(v: &Value) -> bool {
        v.is_null()
    }
    fn required() -> bool {
        false
    }
    fn schema() -> Value {
        T::schema()
    }
    fn to_value(&self) -> Option<Value> {
        self.0.as_ref().map(T::to_value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog_framework::typed::{ActionParams, AnyText, Truthy};

    action_params! {
        /// Test.
        struct TestParams {
            id: Opt<AnyText>,
            flag: Opt<Truthy>,
        }
    }

    fn decode(v: Value) -> TestParams {
        TestParams::decode(v.as_object().cloned().unwrap()).unwrap()
    }

    #[test]
    fn a_null_is_absent_and_a_value_is_decoded() {
        let p = decode(json!({"id": null, "flag": null}));
        assert_eq!(p.id, Opt(None));
        assert_eq!(p.flag, Opt(None));
        let p = decode(json!({"id": 7, "flag": "yes"}));
        assert_eq!(p.id, Opt(Some(AnyText("7".into()))));
        assert_eq!(p.flag, Opt(Some(Truthy(true))));
        let p = decode(json!({"id": ""}));
        assert_eq!(p.id, Opt(Some(AnyText(String::new()))));
        assert_eq!(TestParams::schema()["properties"]["id"]["type"], "string");
        assert_eq!(TestParams::schema()["required"], json!([]));
    }
}
