use catalog_framework::params::decode;
use catalog_framework::prelude::*;

use super::package_search_with;

action_params! {
    /// Return the datasets of a group.
    ///
    /// :param id: the group's id or name
    /// :param limit: optional (default 10)
    /// :rtype: list of dictionaries
    pub struct GroupPackageShowParams {
        /// the group's id or name (required; checked after the access check)
        id: Option<Value>,
        /// how many datasets to return (default 10; a natural number)
        limit: Option<Value>,
    }
}

pub(crate) async fn group_package_show(
    ctx: &mut ActionContext,
    p: GroupPackageShowParams,
) -> CkanResult<Value> {
    let mut auth = p.to_params();
    ctx.check_access("group_package_show", &auth).await?;
    let id: String = decode("id", p.id.as_ref())?;
    let bad_limit = || validation_message("Limit must be a positive integer");
    // `int(limit)` when truthy; a falsy limit goes to package_search as is ('' → 10 rows).
    let rows: Value = match &p.limit {
        None | Some(Value::Null) => Value::Null,
        Some(Value::String(s)) if s.is_empty() => Value::Null,
        Some(Value::Bool(b)) => json!(u8::from(*b)),
        Some(Value::Number(n)) => match n.as_f64().map(f64::trunc) {
            Some(f) if f >= 0.0 => json!(f as u64),
            _ => return Err(bad_limit()),
        },
        Some(Value::String(s)) => match s.trim().parse::<i64>() {
            Ok(n) if n >= 0 => json!(n),
            _ => return Err(bad_limit()),
        },
        Some(_) => return Err(bad_limit()),
    };
    let g = ctx.group_row(&id).await?.ok_or_else(|| not_found(""))?;
    auth.insert("id".into(), json!(g.id));
    ctx.check_access("group_show", &auth).await?;
    let mut search = Params::new();
    search.insert("fq".into(), json!(format!("groups:{}", g.name)));
    search.insert("rows".into(), rows);
    let (_, results) = package_search_with(ctx, search).await?;
    Ok(Value::Array(results))
}
