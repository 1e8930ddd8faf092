use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::{AsBool, Later};

use super::{created_scope, is_self_or_sysadmin, show_user, stored_plugin_extras};
use crate::shapes::{LaterExt, Scalar};

action_params! {
    /// Return a user account.
    pub struct UserShowParams {
        /// the id or name of the user (default: the caller)
        id: Later<Scalar>,
        /// include the datasets the user created (default false)
        include_datasets: Later<AsBool>,
        /// include the user's password hash (sysadmins only; default false)
        include_password_hash: Later<AsBool>,
        /// include the user's `plugin_extras` (sysadmins only; default false)
        include_plugin_extras: Later<AsBool>,
        /// include the number of the user's followers (default false)
        include_num_followers: Later<AsBool>,
    }
}

pub(crate) async fn user_show(ctx: &mut ActionContext, p: UserShowParams) -> CkanResult<Value> {
    let mut auth = p.to_params();
    let r = match p.id.value() {
        Some(r) if !r.0.is_empty() => r.0,
        _ => ctx
            .user_id()
            .map(str::to_string)
            .ok_or_else(|| not_found("User not found"))?,
    };
    let u = ctx
        .user_row(&r)
        .await?
        .ok_or_else(|| not_found("User not found"))?;
    let include_datasets = p.include_datasets.or(false)?;
    let include_hash = p.include_password_hash.or(false)?;
    let include_extras = p.include_plugin_extras.or(false)?;
    let num_followers = p.include_num_followers.or(false)?;
    auth.insert("id".into(), json!(u.id));
    ctx.check_access("user_show", &auth).await?;
    let mut d = show_user(ctx, &u).await?;
    if include_hash && ctx.is_sysadmin() {
        d.insert("password_hash".into(), json!(u.password_hash));
    }
    // CKAN's plugin_extras (what plugins keep about a user), for sysadmins only.
    if include_extras && ctx.is_sysadmin() {
        d.insert("plugin_extras".into(), stored_plugin_extras(&u));
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
