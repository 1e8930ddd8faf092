use std::borrow::Cow;

use catalog_framework::prelude::*;
use catalog_framework::typed::{Later, ParamType};

use super::package_search_with;

/// `group_package_show`'s `limit` as CKAN reads it (`int(limit)` when truthy) and passes it
/// to `package_search` as `rows`: a boolean as 0 or 1, a number ≥ 0 truncated, a text of an
/// integer ≥ 0; `""` counts as absent (package_search's default). Anything else is
/// `Limit must be a positive integer`, unkeyed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RowsLimit(pub(crate) Value);

impl ParamType for RowsLimit {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        let bad = || "Limit must be a positive integer".into();
        match v {
            Value::Bool(b) => Ok(RowsLimit(json!(u8::from(*b)))),
            Value::Number(n) => match n.as_f64().map(f64::trunc) {
                Some(f) if f >= 0.0 => Ok(RowsLimit(json!(f as u64))),
                _ => Err(bad()),
            },
            Value::String(s) => match s.trim().parse::<i64>() {
                Ok(n) if n >= 0 => Ok(RowsLimit(json!(n))),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }
    fn is_blank(v: &Value) -> bool {
        catalog_framework::typed::blank_text(v)
    }
    fn schema() -> Value {
        json!({"type": ["integer", "string", "boolean"], "minimum": 0})
    }
    fn to_value(&self) -> Value {
        self.0.clone()
    }
    fn refusal(_key: &str, message: Cow<'static, str>) -> CkanError {
        validation_message(message.into_owned())
    }
}

action_params! {
    /// Return the datasets of a group.
    ///
    /// :param id: the group's id or name
    /// :param limit: optional (default 10)
    /// :rtype: list of dictionaries
    pub struct GroupPackageShowParams {
        /// the group's id or name (required; checked after the access check)
        id: Later<String>,
        /// how many datasets to return (default 10; a natural number, or a boolean: 0 or 1)
        limit: Later<RowsLimit>,
    }
}

pub(crate) async fn group_package_show(
    ctx: &mut ActionContext,
    p: GroupPackageShowParams,
) -> CkanResult<Value> {
    let mut auth = p.to_params();
    ctx.check_access("group_package_show", &auth).await?;
    let id = p.id.require()?;
    // A falsy limit goes to package_search as null ('' → 10 rows).
    let rows = p.limit.get()?.map_or(Value::Null, |r| r.0);
    let g = ctx.group_row(&id).await?.ok_or_else(|| not_found(""))?;
    auth.insert("id".into(), json!(g.id));
    ctx.check_access("group_show", &auth).await?;
    let mut search = Params::new();
    search.insert("fq".into(), json!(format!("groups:{}", g.name)));
    search.insert("rows".into(), rows);
    let (_, results) = package_search_with(ctx, search).await?;
    Ok(Value::Array(results))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_is_int_of_it() {
        let rows = |v: Value| {
            Later::<RowsLimit>::new("limit", Some(v))
                .get()
                .map(|r| r.map(|r| r.0))
        };
        assert_eq!(rows(json!("")).unwrap(), None);
        assert_eq!(rows(json!(true)).unwrap(), Some(json!(1)));
        assert_eq!(rows(json!(2.7)).unwrap(), Some(json!(2)));
        assert_eq!(rows(json!(" 5 ")).unwrap(), Some(json!(5)));
        for v in [json!(-1), json!("-1"), json!(" "), json!("x"), json!([1])] {
            assert_eq!(
                rows(v).unwrap_err().to_error_object(),
                json!({"__type": "Validation Error", "message": "Limit must be a positive integer"})
            );
        }
    }
}
