use catalog_framework::authz;
use catalog_framework::params::{req_str, truthy};
use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::validators::optional_text;

use super::{
    check_about, check_email, check_password, check_plugin_extras, show_user, stored_plugin_extras,
    user_dict_params, Profile,
};

async fn update(ctx: &mut ActionContext, p: Params, merge: bool) -> CkanResult<Value> {
    let r = req_str(&p, "id")?;
    let u = ctx
        .user_for_update(&r)
        .await?
        .ok_or_else(|| not_found("User was not found."))?;
    let mut auth = p.clone();
    auth.insert("id".into(), json!(u.id));
    ctx.check_access("user_update", &auth).await?;
    let max = ctx.config().catalog.max_field_chars;
    let mut p = p;
    if merge && !p.contains_key("email") {
        p.insert("email".into(), json!(u.email));
    }
    let mut errs = ValidationBuilder::default();
    let email = check_email(ctx, p.get("email"), &mut errs, Some(&u.id)).await?;
    let password = check_password(&p, &mut errs, false);
    check_about(&p, &mut errs);
    let plugin_extras = check_plugin_extras(&p, &mut errs, ctx.is_sysadmin());
    let mut name = u.name.clone();
    // CKAN's name_validator and user_name_validator both refuse a name that is no string.
    if p.get("name")
        .is_some_and(|n| !n.is_string() && !n.is_null())
    {
        errs.push("name", "Names must be strings");
        errs.push("name", "User names must be strings");
    }
    if let Some(n) = p.get("name").and_then(Value::as_str) {
        if n != u.name {
            if !ctx.is_sysadmin() && u.state != "pending" {
                errs.push("name", "That login name can not be modified.");
            } else {
                catalog_framework::validators::check_name(&json!(n), &mut errs, "name");
                if !q::users_where(ctx.db().await?, "name = $1", &[n.to_string()])
                    .await?
                    .is_empty()
                {
                    errs.push("name", "The username is already associated with another account. Please use a different username.");
                }
                name = n.to_string();
            }
        }
    }
    let mut sysadmin = u.sysadmin;
    if ctx.is_sysadmin() {
        if let Some(s) = p.get("sysadmin") {
            let want = truthy(Some(s));
            // CKAN's limit_sysadmin_update: not one's own flag, nor the site user's (harvests
            // and everything acting as get_site_user need it), unless the site user asks.
            let site_id = ctx.config().catalog.site_id.clone();
            let caller_is_site = ctx.user_name() == site_id;
            if want != u.sysadmin && !caller_is_site {
                if ctx.user_id() == Some(u.id.as_str()) {
                    errs.push("sysadmin", "Cannot modify your own sysadmin privileges");
                }
                if u.name == site_id {
                    errs.push(
                        "sysadmin",
                        "Cannot modify sysadmin privileges for system user",
                    );
                }
            }
            sysadmin = want;
        }
    }
    let keep = |k: &str, cur: &Option<String>, errs: &mut ValidationBuilder| {
        if p.contains_key(k) {
            optional_text(&p, k, errs, max)
        } else {
            cur.clone()
        }
    };
    let profile = Profile {
        email,
        fullname: keep("fullname", &u.fullname, &mut errs),
        about: keep("about", &u.about, &mut errs),
        image_url: keep("image_url", &u.image_url, &mut errs),
    };
    errs.finish()?;
    let hash = password
        .map(|pw| authz::hash_password(&pw))
        .or(u.password_hash.clone());
    let write = profile.write(&name, hash.as_deref(), sysadmin);
    q::update_user(ctx.db().await?, &u.id, &write).await?;
    if let Some(extras) = &plugin_extras {
        q::set_user_plugin_extras(ctx.db().await?, &u.id, Some(extras)).await?;
    }
    let old = u;
    let u = ctx
        .user_row(&old.id)
        .await?
        .ok_or_else(|| internal("user vanished"))?;
    if ctx.wants_events() {
        let (before, after) = (serde_json::to_value(&old)?, serde_json::to_value(&u)?);
        ctx.emit(
            Entity::User,
            Change::Updated,
            &u.id,
            Some(before),
            Some(after),
        );
    }
    let mut d = show_user(ctx, &u).await?;
    if plugin_extras.is_some() {
        d.insert("plugin_extras".into(), stored_plugin_extras(&u));
    }
    Ok(Value::Object(d))
}

user_dict_params! {
    /// Update a user account.
    ///
    /// The parameters are the user dict with its `id` or `name`.
    UserUpdateParams {
        /// the id or name of the user
        id: crate::InDict<String>,
    }
}

pub(crate) async fn user_update(ctx: &mut ActionContext, p: UserUpdateParams) -> CkanResult<Value> {
    let p = p.__extras;
    update(ctx, p, false).await
}

user_dict_params! {
    /// Patch a user account.
    ///
    /// The parameters are the user's `id` or `name` and the fields to change.
    UserPatchParams {
        /// the id or name of the user
        id: crate::InDict<String>,
    }
}

pub(crate) async fn user_patch(ctx: &mut ActionContext, p: UserPatchParams) -> CkanResult<Value> {
    let p = p.__extras;
    update(ctx, p, true).await
}
