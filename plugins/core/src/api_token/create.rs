use catalog_framework::params::text;
use catalog_framework::prelude::*;
use catalog_framework::store::time::format_iso;
use catalog_framework::typed::{Later, Raw};

use super::insert_token;

action_params! {
    /// Create an API token for a user. The token is shown only once.
    ///
    /// :param user: the user's name or id
    /// :param name: the token's name
    /// :param expires_in: optional (with `unit`): the token stops working after
    ///   `expires_in * unit` seconds (CKAN's expire_api_token plugin)
    /// :param unit: seconds per `expires_in` unit (60, 3600, 86400, 604800 …)
    /// :rtype: dictionary with `token` and `id`
    pub struct ApiTokenCreateParams {
        /// the user's name or id (required, as is `name`: each `Missing value` at once, then
        /// checked one at a time)
        user: Later<String>,
        /// the token's name
        name: Later<String>,
        /// with `unit`: the token stops working after `expires_in * unit` seconds (a
        /// positive integer; given, even null, both are required)
        expires_in: Raw,
        /// seconds per `expires_in` unit (a positive integer)
        unit: Raw,
    }
}

/// A positive integer as CKAN's `is_positive_integer` reads it.
fn positive_integer(v: &Raw, key: &str, errs: &mut ValidationBuilder) -> Option<i64> {
    let n = match v.get() {
        None | Some(Value::Null) => {
            errs.push(key, "Missing value");
            return None;
        }
        Some(Value::String(s)) if s.is_empty() => {
            errs.push(key, "Missing value");
            return None;
        }
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => s.trim().parse::<i64>().ok(),
        Some(_) => None,
    };
    match n {
        None => errs.push(key, "Invalid integer"),
        Some(n) if n < 1 => errs.push(key, "Must be a positive integer"),
        Some(n) => return Some(n),
    }
    None
}

pub(crate) async fn api_token_create(
    ctx: &mut ActionContext,
    p: ApiTokenCreateParams,
) -> CkanResult<Value> {
    let mut errs = ValidationBuilder::default();
    for (k, v) in [("user", &p.user), ("name", &p.name)] {
        // Given as CKAN's `_get_or_bust` sees it: a non-empty scalar (a boolean too, which
        // the decoding below then refuses).
        if text(v.raw()).is_none_or(|s| s.is_empty()) {
            errs.push(k, "Missing value");
        }
    }
    errs.finish()?;
    let user = p.user.require()?;
    let name = p.name.require()?;
    let u = ctx
        .user_row(&user)
        .await?
        .ok_or_else(|| not_found("User not found"))?;
    let mut auth = p.to_params();
    auth.insert("user".into(), json!(u.id));
    ctx.check_access("api_token_create", &auth).await?;
    // An expiry is optional here; given, it needs both halves.
    let expires_at = if p.expires_in.get().is_some() || p.unit.get().is_some() {
        let mut errs = validation();
        let expires_in = positive_integer(&p.expires_in, "expires_in", &mut errs);
        let unit = positive_integer(&p.unit, "unit", &mut errs);
        errs.finish()?;
        let seconds = expires_in
            .zip(unit)
            .and_then(|(e, u)| e.checked_mul(u))
            .filter(|s| *s <= 100 * 365 * 86_400)
            .ok_or_else(|| {
                validation()
                    .field("expires_in", "The token may live at most 100 years")
                    .build()
            })?;
        Some(format_iso(
            (chrono::Utc::now() + chrono::Duration::seconds(seconds)).naive_utc(),
        ))
    } else {
        None
    };
    let (id, token) = insert_token(ctx, &u.id, &name, expires_at.as_deref()).await?;
    Ok(json!({"token": token, "id": id}))
}
