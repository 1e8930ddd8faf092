use catalog_framework::prelude::*;
use catalog_framework::store as q;

use super::{created_scope, is_self_or_sysadmin, show_user};

action_params! {
    /// Return a user account.
    pub struct UserShowParams {}
}

pub async fn user_show(ctx: &mut ActionContext, p: UserShowParams) -> CkanResult<Value> {
    let p = p.__extras;
    let r = match opt_str(&p, "id") {
        Some(r) if !r.is_empty() => r,
        _ => ctx
            .user_id()
            .map(str::to_string)
            .ok_or_else(|| not_found("User not found"))?,
    };
    let u = ctx
        .user_row(&r)
        .await?
        .ok_or_else(|| not_found("User not found"))?;
    let include_datasets = bool_param(&p, "include_datasets", false)?;
    let include_hash = bool_param(&p, "include_password_hash", false)?;
    let include_extras = bool_param(&p, "include_plugin_extras", false)?;
    let num_followers = bool_param(&p, "include_num_followers", false)?;
    let mut auth = p.clone();
    auth.insert("id".into(), json!(u.id));
    ctx.check_access("user_show", &auth).await?;
    let mut d = show_user(ctx, &u).await?;
    if include_hash && ctx.is_sysadmin() {
        d.insert("password_hash".into(), json!(u.password_hash));
    }
    // CKAN's plugin_extras (what plugins keep about a user), for sysadmins only.
    if include_extras && ctx.is_sysadmin() {
        let extras: Value = match u.plugin_extras.as_deref() {
            Some(text) => serde_json::from_str(text).unwrap_or(Value::Null),
            None => Value::Null,
        };
        d.insert("plugin_extras".into(), extras);
    }
    if include_datasets {
        let scope = created_scope(is_self_or_sysadmin(ctx, &u));
        let ids = q::created_package_ids(ctx.db().await?, &u.id, scope).await?;
        let mut ds = Vec::new();
        for id in ids {
            let row = crate::package::load(ctx, &id).await?;
            ds.push(crate::package::show_row(ctx, &row).await?);
        }
        d.insert("datasets".into(), Value::Array(ds));
    }
    if num_followers {
        let n = crate::group::show::follower_count(ctx, "user_follower_count", &u.id).await?;
        d.insert("num_followers".into(), n);
    }
    Ok(Value::Object(d))
}
