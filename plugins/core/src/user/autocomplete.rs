use catalog_framework::prelude::*;
use catalog_framework::store as q;

use crate::lookup::{autocomplete_params, ilike, py_truthy};

action_params! {
    /// Return the users whose name or full name contains a string.
    ///
    /// :param q: the string to search for
    /// :param limit: optional (default 20)
    /// :param ignore_self: leave the caller out
    /// :rtype: list of dictionaries (id, name, fullname)
    pub struct UserAutocompleteParams {}
}

pub async fn user_autocomplete(
    ctx: &mut ActionContext,
    p: UserAutocompleteParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    let (q, limit) = autocomplete_params(&p, 20)?;
    ctx.check_access("user_autocomplete", &p).await?;
    // `User.search`: `q` is not escaped; sysadmins also match e-mail addresses.
    let pattern = format!("%{q}%");
    let sysadmin = ctx.is_sysadmin();
    let me = ctx.user_name().to_string();
    let ignore_self = py_truthy(p.get("ignore_self"));
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
