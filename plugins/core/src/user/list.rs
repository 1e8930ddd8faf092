use catalog_framework::prelude::*;
use catalog_framework::store::{self as q, UserRow};
use catalog_framework::typed::{AsBool, Later};

use super::{created_count, is_self_or_sysadmin};
use crate::dictize::{sorted, user_dict};
use crate::shapes::{LaterExt, Scalar};

action_params! {
    /// Return the site's users.
    pub struct UserListParams {
        /// only the users whose name or full name (or, for a sysadmin, e-mail address)
        /// contains this (case-insensitive)
        q: Later<Scalar>,
        /// only the users with this e-mail address (sysadmins only)
        email: Later<Scalar>,
        /// `name`, `id`, `created`, `fullname`, `about`, `sysadmin`,
        /// `number_created_packages` or `display_name` (the default)
        order_by: Later<Scalar>,
        /// return dictionaries instead of names (default true)
        all_fields: Later<AsBool>,
        /// include the site user (default false)
        include_site_user: Later<AsBool>,
    }
}

pub(crate) async fn user_list(ctx: &mut ActionContext, p: UserListParams) -> CkanResult<Value> {
    let all_fields = p.all_fields.or(true)?;
    let order_by = p
        .order_by
        .value()
        .map_or_else(|| "display_name".into(), |o| o.0);
    if order_by == "edits" {
        return Err(validation_message("order_by=edits is no longer supported"));
    }
    ctx.check_access("user_list", &p.to_params()).await?;
    let mut users = q::users_where(ctx.db().await?, "state <> 'deleted'", &[]).await?;
    let site_id = ctx.config().catalog.site_id.clone();
    if !p.include_site_user.or(false)? {
        users.retain(|u| u.name != site_id);
    }
    if let Some(qs) = p.q.value().map(|s| s.0.to_lowercase()) {
        let sys = ctx.is_sysadmin();
        users.retain(|u| {
            u.name.to_lowercase().contains(&qs)
                || u.fullname
                    .as_deref()
                    .unwrap_or("")
                    .to_lowercase()
                    .contains(&qs)
                || (sys
                    && u.email
                        .as_deref()
                        .unwrap_or("")
                        .to_lowercase()
                        .contains(&qs))
        });
    }
    if let Some(email) = p.email.value().map(|e| e.0) {
        users.retain(|u| {
            u.email
                .as_deref()
                .is_some_and(|e| e.eq_ignore_ascii_case(&email))
        });
    }
    match order_by.as_str() {
        "name" | "id" | "created" => users.sort_by(|a, b| {
            let key = |u: &UserRow| match order_by.as_str() {
                "id" => u.id.clone(),
                "created" => u.created.clone(),
                _ => u.name.clone(),
            };
            key(a).cmp(&key(b))
        }),
        "fullname" => users.sort_by(|a, b| {
            (a.fullname.clone(), a.name.clone()).cmp(&(b.fullname.clone(), b.name.clone()))
        }),
        "sysadmin" => users.sort_by_key(|u| (u.sysadmin, u.name.clone())),
        // As PostgreSQL orders CKAN's column: nulls last.
        "about" => users.sort_by_key(|u| (u.about.is_none(), u.about.clone(), u.name.clone())),
        "number_created_packages" => {
            let mut counted = Vec::with_capacity(users.len());
            for u in users.drain(..) {
                let n = created_count(ctx, &u, false).await?;
                counted.push((n, u));
            }
            counted.sort_by(|a, b| (a.0, &a.1.name).cmp(&(b.0, &b.1.name)));
            users.extend(counted.into_iter().map(|(_, u)| u));
        }
        _ => users.sort_by_key(|u| u.display_name().to_lowercase()),
    }
    if !all_fields {
        return Ok(Value::Array(users.iter().map(|u| json!(u.name)).collect()));
    }
    let mut out = Vec::new();
    for u in &users {
        let n = created_count(ctx, u, false).await?;
        let private = is_self_or_sysadmin(ctx, u);
        out.push(Value::Object(sorted(user_dict(u, n, private))));
    }
    Ok(Value::Array(out))
}
