//! Users and API tokens.

use catalog_framework::identity;
use catalog_framework::prelude::*;
use catalog_framework::store_queries::{self as q, UserRow};
use catalog_framework::time::now_iso;

use crate::dictize::{sorted, user_dict};
use crate::package::new_id;

async fn created_count(ctx: &mut ActionContext, u: &UserRow, all: bool) -> CkanResult<i64> {
    let sql = if all {
        "SELECT COUNT(*) AS n FROM package WHERE creator_user_id = $1 AND state <> 'deleted'"
    } else {
        "SELECT COUNT(*) AS n FROM package WHERE creator_user_id = $1 AND state = 'active' AND private = false"
    };
    Ok(sqlx::query(sql)
        .bind(&u.id)
        .fetch_one(ctx.db().await?)
        .await?
        .i("n"))
}

fn is_self_or_sysadmin(ctx: &ActionContext, u: &UserRow) -> bool {
    ctx.is_sysadmin() || ctx.user_id() == Some(u.id.as_str())
}

async fn show_user(ctx: &mut ActionContext, u: &UserRow) -> CkanResult<Map<String, Value>> {
    let private = is_self_or_sysadmin(ctx, u);
    let n = created_count(ctx, u, private).await?;
    Ok(sorted(user_dict(u, n, private)))
}

fn check_password(p: &Params, errs: &mut ValidationBuilder, required: bool) -> Option<String> {
    match p.get("password") {
        None | Some(Value::Null) => {
            if required {
                errs.push("password", "Missing value");
            }
            None
        }
        Some(Value::String(s)) if s.is_empty() => {
            if required {
                errs.push("password", "Missing value");
            }
            None
        }
        Some(Value::String(s)) => {
            if s.chars().count() < 8 {
                errs.push("password", "Your password must be 8 characters or longer");
            }
            Some(s.clone())
        }
        Some(_) => {
            errs.push("password", "Must be a string");
            None
        }
    }
}

async fn check_email(
    ctx: &mut ActionContext,
    p: &Params,
    errs: &mut ValidationBuilder,
    own_id: Option<&str>,
) -> CkanResult<Option<String>> {
    let email = match p.get("email") {
        None | Some(Value::Null) => {
            errs.push("email", "Missing value");
            return Ok(None);
        }
        Some(Value::String(s)) if s.trim().is_empty() => {
            errs.push("email", "Missing value");
            return Ok(None);
        }
        Some(Value::String(s)) => s.trim().to_string(),
        Some(_) => {
            errs.push("email", "Must be a string");
            return Ok(None);
        }
    };
    if !catalog_plugin_schema::is_valid_email(&email) {
        errs.push("email", format!("Email {email} is not a valid format"));
        return Ok(Some(email));
    }
    let taken = q::users_where(
        ctx.db().await?,
        "LOWER(email) = LOWER($1) AND state = 'active'",
        std::slice::from_ref(&email),
    )
    .await?;
    if taken.iter().any(|u| Some(u.id.as_str()) != own_id) {
        errs.push(
            "email",
            format!(
                "The email address '{}' belongs to a registered user.",
                email.to_lowercase()
            ),
        );
    }
    Ok(Some(email))
}

fn check_about(p: &Params, errs: &mut ValidationBuilder) {
    if let Some(a) = p.get("about").and_then(Value::as_str) {
        if a.contains("http://") || a.contains("https://") {
            errs.push(
                "about",
                "Edit not allowed as it looks like spam. Please avoid links in your description.",
            );
        }
    }
}

fn text(p: &Params, k: &str, errs: &mut ValidationBuilder, max: usize) -> Option<String> {
    match p.get(k) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => {
            if s.chars().count() > max {
                errs.push(k, format!("Must be a maximum of {max} characters long"));
            }
            Some(s.clone())
        }
        Some(_) => {
            errs.push(k, "Must be a string");
            None
        }
    }
}

pub async fn user_create(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    ctx.check_access("user_create", &p).await?;
    let max = ctx.config().catalog.max_field_chars;
    let mut errs = ValidationBuilder::default();
    match p.get("name") {
        None | Some(Value::Null) => errs.push("name", "Missing value"),
        Some(Value::String(s)) if s.is_empty() => errs.push("name", "Missing value"),
        Some(v) => catalog_plugin_schema::check_name(v, &mut errs, "name"),
    }
    let name = p
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if !name.is_empty()
        && !q::users_where(ctx.db().await?, "name = $1", &[name.to_string()])
            .await?
            .is_empty()
    {
        errs.push("name", "The username is already associated with another account. Please use a different username.");
    }
    let email = check_email(ctx, &p, &mut errs, None).await?;
    let sysadmin_caller = ctx.is_sysadmin() || ctx.ignore_auth;
    let given_hash = p
        .get("password_hash")
        .and_then(Value::as_str)
        .filter(|_| sysadmin_caller)
        .map(str::to_string);
    let password = check_password(&p, &mut errs, given_hash.is_none());
    check_about(&p, &mut errs);
    let fullname = text(&p, "fullname", &mut errs, max);
    let about = text(&p, "about", &mut errs, max);
    let image_url = text(&p, "image_url", &mut errs, max);
    errs.finish()?;
    // A non-sysadmin's `id` is silently dropped, as CKAN does.
    let id = p
        .get("id")
        .and_then(Value::as_str)
        .filter(|_| sysadmin_caller)
        .and_then(catalog_plugin_schema::uuid_parse)
        .unwrap_or_else(new_id);
    let hash = given_hash.unwrap_or_else(|| identity::hash_password(&password.unwrap_or_default()));
    let sysadmin = sysadmin_caller && truthy(p.get("sysadmin"));
    let state = p
        .get("state")
        .and_then(Value::as_str)
        .filter(|_| sysadmin_caller)
        .unwrap_or("active")
        .to_string();
    if sysadmin_caller {
        let mut errs = ValidationBuilder::default();
        catalog_plugin_schema::check_state(
            p.get("state"),
            catalog_plugin_schema::USER_STATES,
            &mut errs,
        );
        errs.finish()?;
    }
    sqlx::query(
        "INSERT INTO catalog_user (id, name, email, fullname, about, password_hash, sysadmin, state, created, image_url, email_notifications) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(&id)
    .bind(&name)
    .bind(email)
    .bind(fullname)
    .bind(about)
    .bind(hash)
    .bind(sysadmin)
    .bind(state)
    .bind(now_iso())
    .bind(image_url)
    .bind(truthy(p.get("activity_streams_email_notifications")))
    .execute(ctx.db().await?)
    .await?;
    let u = ctx
        .user_row(&id)
        .await?
        .ok_or_else(|| internal("user vanished"))?;
    let mut out = sorted(user_dict(&u, 0, true));
    if truthy(p.get("with_apitoken")) {
        let token = insert_token(ctx, &u.id, "default").await?;
        out.insert("token".into(), json!(token.1));
    }
    Ok(Value::Object(out))
}

pub async fn user_show(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
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
    bool_param(&p, "include_num_followers", false)?;
    let mut auth = p.clone();
    auth.insert("id".into(), json!(u.id));
    ctx.check_access("user_show", &auth).await?;
    let mut d = show_user(ctx, &u).await?;
    if include_hash && ctx.is_sysadmin() {
        d.insert("password_hash".into(), json!(u.password_hash));
    }
    if include_datasets {
        let all = is_self_or_sysadmin(ctx, &u);
        let sql = if all {
            "SELECT id FROM package WHERE creator_user_id = $1 AND state <> 'deleted' ORDER BY metadata_modified DESC LIMIT 50"
        } else {
            "SELECT id FROM package WHERE creator_user_id = $1 AND state = 'active' AND private = false ORDER BY metadata_modified DESC LIMIT 50"
        };
        let ids: Vec<(String,)> = sqlx::query_as(sql)
            .bind(&u.id)
            .fetch_all(ctx.db().await?)
            .await?;
        let mut ds = Vec::new();
        for (id,) in ids {
            let row = crate::package::load(ctx, &id).await?;
            ds.push(crate::package::show_row(ctx, &row).await?);
        }
        d.insert("datasets".into(), Value::Array(ds));
    }
    Ok(Value::Object(d))
}

pub async fn user_list(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let all_fields = bool_param(&p, "all_fields", true)?;
    let order_by = opt_str(&p, "order_by").unwrap_or_else(|| "display_name".into());
    if order_by == "edits" {
        return Err(validation_message("order_by=edits is no longer supported"));
    }
    ctx.check_access("user_list", &p).await?;
    let mut users = q::users_where(ctx.db().await?, "state <> 'deleted'", &[]).await?;
    let site_id = ctx.config().catalog.site_id.clone();
    if !bool_param(&p, "include_site_user", false)? {
        users.retain(|u| u.name != site_id);
    }
    if let Some(qs) = opt_str(&p, "q").map(|s| s.to_lowercase()) {
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
    if let Some(email) = opt_str(&p, "email") {
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
    let email = check_email(ctx, &p, &mut errs, Some(&u.id)).await?;
    let password = check_password(&p, &mut errs, false);
    check_about(&p, &mut errs);
    let mut name = u.name.clone();
    if let Some(n) = p.get("name").and_then(Value::as_str) {
        if n != u.name {
            if !ctx.is_sysadmin() && u.state != "pending" {
                errs.push("name", "That login name can not be modified.");
            } else {
                catalog_plugin_schema::check_name(&json!(n), &mut errs, "name");
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
            if want != u.sysadmin && ctx.user_id() == Some(u.id.as_str()) {
                errs.push("sysadmin", "Cannot modify your own sysadmin privileges");
            }
            sysadmin = want;
        }
    }
    let keep = |k: &str, cur: &Option<String>, errs: &mut ValidationBuilder| {
        if p.contains_key(k) {
            text(&p, k, errs, max)
        } else {
            cur.clone()
        }
    };
    let fullname = keep("fullname", &u.fullname, &mut errs);
    let about = keep("about", &u.about, &mut errs);
    let image_url = keep("image_url", &u.image_url, &mut errs);
    errs.finish()?;
    let hash = password
        .map(|pw| identity::hash_password(&pw))
        .or(u.password_hash.clone());
    sqlx::query(
        "UPDATE catalog_user SET name = $2, email = $3, fullname = $4, about = $5, image_url = $6, password_hash = $7, sysadmin = $8 WHERE id = $1",
    )
    .bind(&u.id)
    .bind(name)
    .bind(email)
    .bind(fullname)
    .bind(about)
    .bind(image_url)
    .bind(hash)
    .bind(sysadmin)
    .execute(ctx.db().await?)
    .await?;
    let u = ctx
        .user_row(&u.id)
        .await?
        .ok_or_else(|| internal("user vanished"))?;
    Ok(Value::Object(show_user(ctx, &u).await?))
}

pub async fn user_update(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    update(ctx, p, false).await
}
pub async fn user_patch(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    update(ctx, p, true).await
}

pub async fn user_delete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let r = req_str(&p, "id")?;
    ctx.check_access("user_delete", &p).await?;
    let u = ctx
        .user_for_update(&r)
        .await?
        .ok_or_else(|| not_found(format!("User \"{r}\" was not found.")))?;
    let conn = ctx.db().await?;
    sqlx::query("UPDATE catalog_user SET state = 'deleted' WHERE id = $1")
        .bind(&u.id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("UPDATE member SET state = 'deleted' WHERE table_name = 'user' AND table_id = $1")
        .bind(&u.id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM collaborator WHERE user_id = $1")
        .bind(&u.id)
        .execute(&mut *conn)
        .await?;
    Ok(Value::Null)
}

/// Creates a token row; returns `(id, token)`. Only the token's hash is stored.
pub(crate) async fn insert_token(
    ctx: &mut ActionContext,
    user_id: &str,
    name: &str,
) -> CkanResult<(String, String)> {
    let (id, token) = identity::new_token();
    sqlx::query("INSERT INTO api_token (id, user_id, name, token_hash, created_at) VALUES ($1, $2, $3, $4, $5)")
        .bind(&id)
        .bind(user_id)
        .bind(name)
        .bind(identity::hash_token(&token))
        .bind(now_iso())
        .execute(ctx.db().await?)
        .await?;
    Ok((id, token))
}

pub async fn api_token_create(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let mut errs = ValidationBuilder::default();
    for k in ["user", "name"] {
        if opt_str(&p, k).is_none_or(|s| s.is_empty()) {
            errs.push(k, "Missing value");
        }
    }
    errs.finish()?;
    let (user, name) = (req_str(&p, "user")?, req_str(&p, "name")?);
    let u = ctx
        .user_row(&user)
        .await?
        .ok_or_else(|| not_found("User not found"))?;
    let mut auth = p.clone();
    auth.insert("user".into(), json!(u.id));
    ctx.check_access("api_token_create", &auth).await?;
    let (id, token) = insert_token(ctx, &u.id, &name).await?;
    Ok(json!({"token": token, "id": id}))
}

pub async fn api_token_revoke(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let jti = match (opt_str(&p, "jti"), opt_str(&p, "token")) {
        (Some(j), _) if !j.is_empty() => j,
        (_, Some(t)) if !t.is_empty() => match identity::token_id(&t) {
            Some(id) => id.to_string(),
            None => return Err(not_authorized("")),
        },
        _ => return Err(missing("token")),
    };
    let mut auth = p.clone();
    auth.insert("jti".into(), json!(jti));
    ctx.check_access("api_token_revoke", &auth).await?;
    sqlx::query("DELETE FROM api_token WHERE id = $1")
        .bind(&jti)
        .execute(ctx.db().await?)
        .await?;
    Ok(Value::Null)
}

pub async fn api_token_list(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let r = opt_str(&p, "user_id")
        .or_else(|| opt_str(&p, "user"))
        .filter(|s| !s.is_empty())
        .ok_or_else(|| missing("user_id"))?;
    let mut auth = p.clone();
    auth.insert("user_id".into(), json!(r));
    ctx.check_access("api_token_list", &auth).await?;
    let u = ctx
        .user_row(&r)
        .await?
        .ok_or_else(|| not_found("User not found"))?;
    let rows = sqlx::query("SELECT id, name, user_id, created_at, last_access FROM api_token WHERE user_id = $1 ORDER BY created_at, id")
        .bind(&u.id)
        .fetch_all(ctx.db().await?)
        .await?;
    Ok(Value::Array(
        rows.iter()
            .map(|r| json!({"created_at": r.s("created_at"), "id": r.s("id"), "last_access": r.os("last_access"), "name": r.s("name"), "user_id": r.s("user_id")}))
            .collect(),
    ))
}
