use catalog_framework::prelude::*;
use catalog_framework::store as q;

use catalog_framework::typed::{PyTruthy, Text};

use crate::lookup::ilike;

action_params! {
    /// Return the users whose name or full name contains a string.
    ///
    /// :param q: the string to search for
    /// :param limit: optional (default 20)
    /// :param ignore_self: leave the caller out
    /// :rtype: list of dictionaries (id, name, fullname)
    pub struct UserAutocompleteParams {
        /// the string to search for (may be empty: no match)
        q: Text,
        /// how many users to return (default 20)
        limit: Option<Natural>,
        /// leave the caller out (any true value)
        ignore_self: Option<PyTruthy>,
    }
}

pub(crate) async fn user_autocomplete(
    ctx: &mut ActionContext,
    p: UserAutocompleteParams,
) -> CkanResult<Value> {
    ctx.check_access("user_autocomplete", &p.to_params())
        .await?;
    let (q, limit) = (p.q.0, p.limit.map_or(20, |n| n.0 as usize));
    // `User.search`: `q` is not escaped; sysadmins also match e-mail addresses.
    let pattern = format!("%{q}%");
    let sysadmin = ctx.is_sysadmin();
    let me = ctx.user_name().to_string();
    let ignore_self = p.ignore_self.is_some_and(|i| i.0);
    let users = q::users_where(ctx.db().await?, "state <> 'deleted'", &[]).await?;
    let mut out: Vec<&q::UserRow> = users
        .iter()
        .filter(|u| {
            ilike(&u.name, &pattern)
                || u.fullname.as_deref().is_some_and(|f| ilike(f, &pattern))
                || (sysadmin && u.email.as_deref().is_some_and(|e| ilike(e, &pattern)))
        })
        .filter(|u| !(ignore_self && u.name == me))
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Value::Array(
        out.into_iter()
            .take(limit)
            .map(|u| json!({"fullname": u.fullname, "id": u.id, "name": u.name}))
            .collect(),
    ))
}
