use catalog_framework::authz;
use catalog_framework::params::truthy;
use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::store::time::now_iso;
use catalog_framework::validators::optional_text;

use super::{
    check_about, check_email, check_password, check_plugin_extras, stored_plugin_extras,
    user_dict_params, Profile,
};
use crate::api_token::insert_token;
use crate::dictize::{sorted, user_dict};
use crate::ids::new_id;

user_dict_params! {
    /// Create a user.
    ///
    /// The parameters are the user dict (`name`, `email`, `password`, `fullname`, `about`,
    /// `image_url` …).
    UserCreateParams {
        /// the new user's id (sysadmins only)
        id: crate::InDict<String>,
        /// also create an API token for the user and return it as `token`
        with_apitoken: crate::InDict<bool>,
    }
}

pub(crate) async fn user_create(ctx: &mut ActionContext, p: UserCreateParams) -> CkanResult<Value> {
    let p = p.__extras;
    ctx.check_access("user_create", &p).await?;
    let max = ctx.config().catalog.max_field_chars;
    let mut errs = ValidationBuilder::default();
    let name = catalog_framework::validators::required_name(&p, &mut errs);
    if !name.is_empty()
        && !q::users_where(ctx.db().await?, "name = $1", &[name.to_string()])
            .await?
            .is_empty()
    {
        errs.push("name", "The username is already associated with another account. Please use a different username.");
    }
    let email = check_email(ctx, p.get("email"), &mut errs, None).await?;
    let sysadmin_caller = ctx.is_sysadmin() || ctx.ignore_auth;
    let given_hash = p
        .get("password_hash")
        .and_then(Value::as_str)
        .filter(|_| sysadmin_caller)
        .map(str::to_string);
    let password = check_password(&p, &mut errs, given_hash.is_none());
    check_about(&p, &mut errs);
    let plugin_extras = check_plugin_extras(&p, &mut errs, sysadmin_caller);
    let profile = Profile {
        email,
        fullname: optional_text(&p, "fullname", &mut errs, max),
        about: optional_text(&p, "about", &mut errs, max),
        image_url: optional_text(&p, "image_url", &mut errs, max),
    };
    errs.finish()?;
    // A non-sysadmin's `id` is silently dropped, as CKAN does.
    let id = p
        .get("id")
        .and_then(Value::as_str)
        .filter(|_| sysadmin_caller)
        .and_then(catalog_framework::validators::uuid_parse)
        .unwrap_or_else(new_id);
    let hash = given_hash.unwrap_or_else(|| authz::hash_password(&password.unwrap_or_default()));
    let sysadmin = sysadmin_caller && truthy(p.get("sysadmin"));
    let state = p
        .get("state")
        .and_then(Value::as_str)
        .filter(|_| sysadmin_caller)
        .unwrap_or("active")
        .to_string();
    if sysadmin_caller {
        let mut errs = ValidationBuilder::default();
        catalog_framework::validators::check_state(
            p.get("state"),
            catalog_framework::validators::USER_STATES,
            &mut errs,
        );
        errs.finish()?;
    }
    let write = profile.write(&name, Some(&hash), sysadmin);
    let notifications = truthy(p.get("activity_streams_email_notifications"));
    q::insert_user(
        ctx.db().await?,
        &id,
        &state,
        &now_iso(),
        notifications,
        &write,
    )
    .await?;
    if let Some(extras) = &plugin_extras {
        q::set_user_plugin_extras(ctx.db().await?, &id, Some(extras)).await?;
    }
    let u = ctx
        .user_row(&id)
        .await?
        .ok_or_else(|| internal("user vanished"))?;
    let record = serde_json::to_value(&u)?;
    ctx.emit(Entity::User, Change::Created, &u.id, None, Some(record));
    let mut out = sorted(user_dict(&u, 0, true));
    if plugin_extras.is_some() {
        out.insert("plugin_extras".into(), stored_plugin_extras(&u));
    }
    if truthy(p.get("with_apitoken")) {
        let token = insert_token(ctx, &u.id, "default", None).await?;
        out.insert("token".into(), json!(token.1));
    }
    Ok(Value::Object(out))
}
