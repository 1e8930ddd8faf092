//! Groups and organizations: create, show, update, patch, delete, purge, lists, members.

use catalog_framework::authz;
use catalog_framework::prelude::*;
use catalog_framework::store_queries::{self as q, GroupRow};
use catalog_framework::time::now_iso;

use crate::dictize::{extras_list, group_base, sorted, user_dict};
use crate::package::new_id;
use crate::search_actions::{self, CountScope, DatasetCounts};

fn kind(is_org: bool) -> &'static str {
    if is_org {
        "organization"
    } else {
        "group"
    }
}

/// The group of the right kind (groups and organizations don't answer for each other), or 404.
pub(crate) async fn load_group(
    ctx: &mut ActionContext,
    r: &str,
    is_org: bool,
) -> CkanResult<GroupRow> {
    // Locked in a write call: every writer of a group (and of its user and parent
    // memberships) loads it here or through `group_for_update`.
    ctx.group_for_update(r)
        .await?
        .filter(|g| g.is_organization == is_org)
        .ok_or_else(|| {
            not_found(if is_org {
                "Organization was not found."
            } else {
                "Group was not found."
            })
        })
}

/// Makes the package ∈ groups memberships exactly `groups`.
pub(crate) async fn set_package_groups(
    ctx: &mut ActionContext,
    package_id: &str,
    groups: &[String],
) -> CkanResult<()> {
    let conn = ctx.db().await?;
    sqlx::query(
        "UPDATE member SET state = 'deleted' WHERE table_name = 'package' AND table_id = $1 AND capacity <> 'organization'",
    )
    .bind(package_id)
    .execute(&mut *conn)
    .await?;
    for g in groups {
        upsert_member(conn, g, "package", package_id, "public").await?;
    }
    Ok(())
}

async fn upsert_member(
    conn: &mut sqlx::AnyConnection,
    group_id: &str,
    table: &str,
    table_id: &str,
    capacity: &str,
) -> CkanResult<Value> {
    let existing: Option<(String,)> =
        sqlx::query_as("SELECT id FROM member WHERE group_id = $1 AND table_name = $2 AND table_id = $3 ORDER BY state LIMIT 1")
            .bind(group_id)
            .bind(table)
            .bind(table_id)
            .fetch_optional(&mut *conn)
            .await?;
    let id = match existing {
        Some((id,)) => {
            sqlx::query("UPDATE member SET capacity = $2, state = 'active' WHERE id = $1")
                .bind(&id)
                .bind(capacity)
                .execute(&mut *conn)
                .await?;
            id
        }
        None => {
            let id = new_id();
            sqlx::query("INSERT INTO member (id, group_id, table_name, table_id, capacity, state) VALUES ($1, $2, $3, $4, $5, 'active')")
                .bind(&id)
                .bind(group_id)
                .bind(table)
                .bind(table_id)
                .bind(capacity)
                .execute(&mut *conn)
                .await?;
            id
        }
    };
    Ok(
        json!({"id": id, "table_name": table, "table_id": table_id, "group_id": group_id, "capacity": capacity, "state": "active"}),
    )
}

async fn group_users(ctx: &mut ActionContext, g: &GroupRow) -> CkanResult<Vec<Value>> {
    let cols = q::USER_COLS
        .split(", ")
        .map(|c| format!("u.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let rows = sqlx::query(&format!(
        "SELECT {cols}, m.capacity FROM catalog_user u JOIN member m ON m.table_id = u.id AND m.table_name = 'user' \
         WHERE m.group_id = $1 AND m.state = 'active' AND u.state <> 'deleted' ORDER BY u.name"
    ))
    .bind(&g.id)
    .fetch_all(ctx.db().await?)
    .await?;
    let mut out = Vec::new();
    for r in rows {
        let u = q::users_where(ctx.db().await?, "id = $1", &[r.s("id")])
            .await?
            .remove(0);
        let mut d = user_dict(&u, 0, false);
        d.insert("capacity".into(), json!(r.s("capacity")));
        out.push(Value::Object(sorted(d)));
    }
    Ok(out)
}

struct ShowOpts<'a> {
    datasets: bool,
    dataset_count: bool,
    extras: bool,
    users: bool,
    groups: bool,
    /// Counts computed once for a whole list (`group_list` with `all_fields`).
    counts: Option<&'a DatasetCounts>,
}

async fn group_dict(ctx: &mut ActionContext, g: &GroupRow, o: &ShowOpts<'_>) -> CkanResult<Value> {
    let site = ctx.config().site_url().to_string();
    let mut m = group_base(&site, g);
    // CKAN counts (and lists) a group's datasets with package_search.
    if o.datasets {
        let (n, pkgs) = search_actions::group_packages(ctx, g, true).await?;
        m.insert("package_count".into(), json!(n));
        m.insert("packages".into(), Value::Array(pkgs));
    } else if o.dataset_count {
        let n = match o.counts {
            Some(c) => c.of(g),
            None => search_actions::group_packages(ctx, g, false).await?.0,
        };
        m.insert("package_count".into(), json!(n));
    }
    if o.extras {
        m.insert("extras".into(), extras_list(&g.extras));
    }
    if o.groups {
        let rows = sqlx::query(
            "SELECT g.name, m.capacity FROM member m JOIN catalog_group g ON g.id = m.table_id \
             WHERE m.group_id = $1 AND m.table_name = 'group' AND m.state = 'active'",
        )
        .bind(&g.id)
        .fetch_all(ctx.db().await?)
        .await?;
        m.insert(
            "groups".into(),
            json!(rows
                .iter()
                .map(|r| json!({"name": r.s("name"), "capacity": r.s("capacity")}))
                .collect::<Vec<_>>()),
        );
    }
    if o.users {
        let users = group_users(ctx, g).await?;
        m.insert("users".into(), Value::Array(users));
    }
    Ok(Value::Object(sorted(m)))
}

async fn show(ctx: &mut ActionContext, p: Params, is_org: bool) -> CkanResult<Value> {
    let id = req_str(&p, "id")?;
    let g = load_group(ctx, &id, is_org).await?;
    let opts = ShowOpts {
        datasets: bool_param(&p, "include_datasets", false)?,
        dataset_count: bool_param(&p, "include_dataset_count", true)?,
        extras: bool_param(&p, "include_extras", true)?,
        users: bool_param(
            &p,
            "include_users",
            ctx.config().catalog.auth.public_user_details,
        )?,
        groups: bool_param(&p, "include_groups", true)?,
        counts: None,
    };
    bool_param(&p, "include_followers", true)?;
    let mut auth = p.clone();
    auth.insert("id".into(), json!(g.id));
    ctx.check_access(&format!("{}_show", kind(is_org)), &auth)
        .await?;
    group_dict(ctx, &g, &opts).await
}

pub async fn group_show(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    show(ctx, p, false).await
}
pub async fn organization_show(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    show(ctx, p, true).await
}

fn text_field(p: &Params, k: &str, errs: &mut ValidationBuilder, max: usize) -> Option<String> {
    match p.get(k) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => {
            if s.chars().count() > max {
                errs.push(k, format!("Must be a maximum of {max} characters long"));
            }
            Some(s.clone())
        }
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(_) => {
            errs.push(k, "Must be a string");
            None
        }
    }
}

fn extras_map(p: &Params, errs: &mut ValidationBuilder) -> Map<String, Value> {
    let mut m = Map::new();
    match p.get("extras") {
        Some(Value::Array(items)) => {
            for e in items {
                match (e.get("key").and_then(Value::as_str), e.get("value")) {
                    (Some(k), Some(v)) if !k.is_empty() => {
                        m.insert(
                            k.into(),
                            v.as_str()
                                .map(|s| json!(s))
                                .unwrap_or_else(|| json!(v.to_string())),
                        );
                    }
                    _ => errs.push("extras", "Missing value"),
                }
            }
        }
        None | Some(Value::Null) => {}
        Some(_) => errs.push("extras", "Not a list"),
    }
    m
}

async fn apply_users_and_parents(
    ctx: &mut ActionContext,
    g: &GroupRow,
    p: &Params,
) -> CkanResult<()> {
    if let Some(Value::Array(users)) = p.get("users") {
        for u in users {
            let name = u
                .get("name")
                .or_else(|| u.get("id"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let cap = u
                .get("capacity")
                .and_then(Value::as_str)
                .unwrap_or("public");
            let Some(user) = ctx.user_row(name).await? else {
                return Err(validation().field("users", "User not found").build());
            };
            upsert_member(ctx.db().await?, &g.id, "user", &user.id, cap).await?;
        }
    }
    if let Some(Value::Array(parents)) = p.get("groups") {
        let conn = ctx.db().await?;
        sqlx::query(
            "UPDATE member SET state = 'deleted' WHERE group_id = $1 AND table_name = 'group'",
        )
        .bind(&g.id)
        .execute(&mut *conn)
        .await?;
        for parent in parents {
            let name = parent
                .get("name")
                .or_else(|| parent.get("id"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let Some(pg) = ctx.group_row(name).await? else {
                return Err(validation().field("groups", "Group not found").build());
            };
            if pg.id == g.id {
                return Err(validation()
                    .field("groups", "This parent would create a loop in the hierarchy")
                    .build());
            }
            upsert_member(ctx.db().await?, &g.id, "group", &pg.id, "parent").await?;
        }
    }
    if let (false, Some(Value::Array(pkgs))) = (g.is_organization, p.get("packages")) {
        for pk in pkgs {
            let r = pk
                .get("id")
                .or_else(|| pk.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let Some(row) = ctx.package_for_update(r).await? else {
                return Err(validation().field("packages", "Dataset not found").build());
            };
            upsert_member(ctx.db().await?, &g.id, "package", &row.id, "public").await?;
        }
    }
    Ok(())
}

async fn create(ctx: &mut ActionContext, p: Params, is_org: bool) -> CkanResult<Value> {
    let action = format!("{}_create", kind(is_org));
    ctx.check_access(&action, &p).await?;
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
    if !name.is_empty() && ctx.group_row(&name).await?.is_some_and(|g| g.name == name) {
        errs.push("name", "Group name already exists in database");
    }
    catalog_plugin_schema::check_type(p.get("type"), &mut errs);
    let group_type = match p.get("type").and_then(Value::as_str) {
        Some(t) if !t.is_empty() => t.to_string(),
        _ => kind(is_org).to_string(),
    };
    if !is_org && group_type == "organization" {
        errs.push("type", "Use organization_create to create organizations");
    }
    let id = match p.get("id").and_then(Value::as_str) {
        Some(given) if ctx.is_sysadmin() => {
            let norm = catalog_plugin_schema::uuid_parse(given);
            match norm {
                None => {
                    errs.push("id", "Invalid id provided");
                    new_id()
                }
                Some(n) => {
                    if ctx.group_row(&n).await?.is_some() {
                        errs.push("id", "Id already exists");
                    }
                    n
                }
            }
        }
        Some(_) => {
            errs.push("id", "The input field id was not expected.");
            new_id()
        }
        None => new_id(),
    };
    let title = text_field(&p, "title", &mut errs, max);
    let description = text_field(&p, "description", &mut errs, max);
    let image_url = text_field(&p, "image_url", &mut errs, max);
    let extras = extras_map(&p, &mut errs);
    errs.finish()?;
    sqlx::query(
        "INSERT INTO catalog_group (id, name, title, description, image_url, type, is_organization, approval_status, state, created, extras) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'approved', 'active', $8, $9)",
    )
    .bind(&id)
    .bind(&name)
    .bind(title)
    .bind(description)
    .bind(image_url)
    .bind(&group_type)
    .bind(is_org)
    .bind(now_iso())
    .bind(serde_json::to_string(&extras)?)
    .execute(ctx.db().await?)
    .await?;
    let g = load_group(ctx, &id, is_org).await?;
    apply_users_and_parents(ctx, &g, &p).await?;
    if let Some(uid) = ctx.user_id().map(str::to_string) {
        upsert_member(ctx.db().await?, &id, "user", &uid, "admin").await?;
    }
    let opts = ShowOpts {
        datasets: false,
        dataset_count: true,
        extras: true,
        users: true,
        groups: true,
        counts: None,
    };
    group_dict(ctx, &g, &opts).await
}

pub async fn group_create(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    create(ctx, p, false).await
}
pub async fn organization_create(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    create(ctx, p, true).await
}

async fn update(
    ctx: &mut ActionContext,
    p: Params,
    is_org: bool,
    merge: bool,
) -> CkanResult<Value> {
    let id = req_str(&p, "id")?;
    let g = ctx
        .group_for_update(&id)
        .await?
        .filter(|g| g.is_organization == is_org)
        .ok_or_else(|| not_found("That group name or ID does not exist."))?;
    let mut auth = p.clone();
    auth.insert("id".into(), json!(g.id));
    ctx.check_access(&format!("{}_update", kind(is_org)), &auth)
        .await?;
    let max = ctx.config().catalog.max_field_chars;
    let mut errs = ValidationBuilder::default();
    if let Some(t) = p.get("type").and_then(Value::as_str) {
        if t != g.group_type {
            errs.set("type", json!("Type cannot be updated"));
        }
    }
    let name = match p.get("name") {
        Some(v) if !v.is_null() => {
            catalog_plugin_schema::check_name(v, &mut errs, "name");
            let n = v.as_str().unwrap_or_default().to_string();
            if n != g.name && ctx.group_row(&n).await?.is_some() {
                errs.push("name", "Group name already exists in database");
            }
            n
        }
        _ => g.name.clone(),
    };
    let pick = |k: &str, cur: &Option<String>, errs: &mut ValidationBuilder| -> Option<String> {
        // Absent group columns stay as they are on update and patch alike.
        if p.contains_key(k) {
            text_field(&p, k, errs, max)
        } else {
            cur.clone()
        }
    };
    let title = pick("title", &g.title, &mut errs);
    let description = pick("description", &g.description, &mut errs);
    let image_url = pick("image_url", &g.image_url, &mut errs);
    let extras = if p.contains_key("extras") {
        extras_map(&p, &mut errs)
    } else if merge {
        g.extras.clone()
    } else {
        Map::new()
    };
    errs.finish()?;
    sqlx::query("UPDATE catalog_group SET name = $2, title = $3, description = $4, image_url = $5, extras = $6 WHERE id = $1")
        .bind(&g.id)
        .bind(&name)
        .bind(title)
        .bind(description)
        .bind(image_url)
        .bind(serde_json::to_string(&extras)?)
        .execute(ctx.db().await?)
        .await?;
    let g = load_group(ctx, &g.id, is_org).await?;
    apply_users_and_parents(ctx, &g, &p).await?;
    let opts = ShowOpts {
        datasets: false,
        dataset_count: true,
        extras: true,
        users: true,
        groups: true,
        counts: None,
    };
    group_dict(ctx, &g, &opts).await
}

pub async fn group_update(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    update(ctx, p, false, false).await
}
pub async fn organization_update(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    update(ctx, p, true, false).await
}
pub async fn group_patch(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    update(ctx, p, false, true).await
}
pub async fn organization_patch(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    update(ctx, p, true, true).await
}

async fn delete(
    ctx: &mut ActionContext,
    p: Params,
    is_org: bool,
    purge: bool,
) -> CkanResult<Value> {
    let id = req_str(&p, "id")?;
    let g = load_group(ctx, &id, is_org).await?;
    let verb = if purge { "purge" } else { "delete" };
    let mut auth = p.clone();
    auth.insert("id".into(), json!(g.id));
    ctx.check_access(&format!("{}_{verb}", kind(is_org)), &auth)
        .await?;
    if is_org {
        let ids: Vec<(String,)> =
            sqlx::query_as("SELECT id FROM package WHERE owner_org = $1 AND state <> 'deleted'")
                .bind(&g.id)
                .fetch_all(ctx.db().await?)
                .await?;
        if !ids.is_empty() {
            if !ctx.config().catalog.auth.create_unowned_dataset {
                let what = if purge { "purged" } else { "deleted" };
                return Err(validation_message(format!(
                    "Organization cannot be {what} while it still has datasets"
                )));
            }
            for (pid,) in ids {
                let row = crate::package::load(ctx, &pid).await?;
                let mut doc: Map<String, Value> = serde_json::from_str(&row.data)?;
                doc.insert("owner_org".into(), Value::Null);
                doc.insert("private".into(), json!(false));
                sqlx::query(
                    "UPDATE package SET owner_org = NULL, private = false, data = $2 WHERE id = $1",
                )
                .bind(&pid)
                .bind(serde_json::to_string(&doc)?)
                .execute(ctx.db().await?)
                .await?;
            }
        }
    }
    let conn = ctx.db().await?;
    if purge {
        sqlx::query(
            "DELETE FROM member WHERE group_id = $1 OR (table_name = 'group' AND table_id = $1)",
        )
        .bind(&g.id)
        .execute(&mut *conn)
        .await?;
        sqlx::query("DELETE FROM catalog_group WHERE id = $1")
            .bind(&g.id)
            .execute(&mut *conn)
            .await?;
    } else {
        sqlx::query("UPDATE member SET state = 'deleted' WHERE group_id = $1 OR (table_name = 'group' AND table_id = $1)")
            .bind(&g.id)
            .execute(&mut *conn)
            .await?;
        sqlx::query("UPDATE catalog_group SET state = 'deleted' WHERE id = $1")
            .bind(&g.id)
            .execute(&mut *conn)
            .await?;
    }
    Ok(Value::Null)
}

pub async fn group_delete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    delete(ctx, p, false, false).await
}
pub async fn organization_delete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    delete(ctx, p, true, false).await
}
pub async fn group_purge(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    delete(ctx, p, false, true).await
}
pub async fn organization_purge(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    delete(ctx, p, true, true).await
}

async fn list(ctx: &mut ActionContext, p: Params, is_org: bool) -> CkanResult<Value> {
    let all_fields = bool_param(&p, "all_fields", false)?;
    let cfg = &ctx.config().catalog;
    let cap = if all_fields {
        cfg.group_and_organization_list_all_fields_max
    } else {
        cfg.group_and_organization_list_max
    };
    let limit = natural(&p, "limit")?.map(|l| l.min(cap)).unwrap_or(cap);
    let offset = natural(&p, "offset")?.unwrap_or(0);
    let sort_raw = opt_str(&p, "sort")
        .or_else(|| opt_str(&p, "order_by"))
        .unwrap_or_else(|| "title".into());
    let parts: Vec<&str> = sort_raw
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if parts.len() > 1 {
        return Err(validation_message(
            "Too many sort criteria provided only 1 allowed",
        ));
    }
    let mut words = parts.first().copied().unwrap_or("title").split_whitespace();
    let field = words.next().unwrap_or("title");
    let (field, default_dir) = match field {
        "name" | "title" => (field, "asc"),
        "package_count" | "packages" => ("package_count", "desc"),
        other => {
            return Err(validation_message(format!(
                "Cannot sort by field `{other}`"
            )))
        }
    };
    let dir = words.next().unwrap_or(default_dir).to_ascii_lowercase();
    if dir != "asc" && dir != "desc" {
        return Err(validation_message(format!(
            "Invalid sort direction `{dir}`"
        )));
    }
    let group_type = opt_str(&p, "type").unwrap_or_else(|| kind(is_org).to_string());
    let names_key = if is_org { "organizations" } else { "groups" };
    let only: Option<Vec<String>> = match p.get(names_key) {
        Some(Value::String(s)) => Some(
            s.split(',')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect(),
        ),
        Some(_) => str_list(&p, names_key)?,
        None => None,
    };
    let q_text = opt_str(&p, "q").map(|s| s.to_lowercase());
    ctx.check_access(&format!("{}_list", kind(is_org)), &p)
        .await?;
    let sql = format!("SELECT {} FROM catalog_group WHERE state = 'active' AND type = $1 AND is_organization = $2", q::GROUP_COLS);
    let rows = sqlx::query(&sql)
        .bind(&group_type)
        .bind(is_org)
        .fetch_all(ctx.db().await?)
        .await?;
    let mut groups: Vec<GroupRow> = rows.iter().map(GroupRow::from_row).collect();
    if let Some(only) = &only {
        groups.retain(|g| only.contains(&g.name));
    }
    if let Some(qt) = &q_text {
        groups.retain(|g| {
            g.name.to_lowercase().contains(qt)
                || g.title.as_deref().unwrap_or("").to_lowercase().contains(qt)
                || g.description
                    .as_deref()
                    .unwrap_or("")
                    .to_lowercase()
                    .contains(qt)
        });
    }
    let sort_counts = if field == "package_count" {
        search_actions::member_package_counts(ctx).await?
    } else {
        Default::default()
    };
    let mut counted: Vec<(GroupRow, i64)> = groups
        .into_iter()
        .map(|g| {
            let n = sort_counts.get(&g.id).copied().unwrap_or(0);
            (g, n)
        })
        .collect();
    match field {
        "name" => counted.sort_by(|a, b| a.0.name.cmp(&b.0.name)),
        "title" => counted.sort_by(|a, b| {
            a.0.display_name()
                .to_lowercase()
                .cmp(&b.0.display_name().to_lowercase())
        }),
        _ => {
            counted.retain(|(_, n)| *n > 0);
            counted.sort_by_key(|(_, n)| *n);
        }
    }
    if dir == "desc" {
        counted.reverse();
    }
    let page = counted
        .into_iter()
        .skip(offset as usize)
        .take(limit as usize);
    if !all_fields {
        return Ok(Value::Array(page.map(|(g, _)| json!(g.name)).collect()));
    }
    let dataset_count = bool_param(&p, "include_dataset_count", true)?;
    // One facet query counts the datasets of every group, with the caller's labels.
    let counts = if dataset_count {
        Some(search_actions::dataset_counts(ctx, CountScope::VisibleToCaller).await?)
    } else {
        None
    };
    let opts = ShowOpts {
        datasets: false,
        dataset_count,
        extras: bool_param(&p, "include_extras", false)?,
        users: bool_param(&p, "include_users", false)?,
        groups: bool_param(&p, "include_groups", false)?,
        counts: counts.as_ref(),
    };
    let mut out = Vec::new();
    for (g, _) in page {
        out.push(group_dict(ctx, &g, &opts).await?);
    }
    Ok(Value::Array(out))
}

pub async fn group_list(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    list(ctx, p, false).await
}
pub async fn organization_list(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    list(ctx, p, true).await
}

/// Raw group dict plus `capacity`, as `organization_list_for_user` and `group_list_authz` give.
fn raw_group(site: &str, g: &GroupRow) -> Map<String, Value> {
    let mut m = group_base(site, g);
    m.remove("num_followers");
    m.insert("title".into(), json!(g.title));
    m.insert("description".into(), json!(g.description));
    m.insert("image_url".into(), json!(g.image_url));
    m
}

pub async fn organization_list_for_user(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let perm = opt_str(&p, "permission").unwrap_or_else(|| "manage_group".into());
    let include_count = bool_param(&p, "include_dataset_count", false)?;
    ctx.check_access("organization_list_for_user", &p).await?;
    let user = match opt_str(&p, "id") {
        Some(r) => Some(
            ctx.user_row(&r)
                .await?
                .ok_or_else(|| not_found("User not found"))?,
        ),
        None => match ctx.user_id().map(str::to_string) {
            Some(uid) => ctx.user_row(&uid).await?,
            None => None,
        },
    };
    let Some(user) = user else {
        return Ok(json!([]));
    };
    let sql = format!(
        "SELECT {} FROM catalog_group WHERE state = 'active' AND is_organization = true",
        q::GROUP_COLS
    );
    let rows = sqlx::query(&sql).fetch_all(ctx.db().await?).await?;
    let orgs: Vec<GroupRow> = rows.iter().map(GroupRow::from_row).collect();
    let held = if user.sysadmin {
        Default::default()
    } else {
        authz::groups_with_permission(ctx, &user.id, &perm).await?
    };
    let counts = if include_count {
        Some(search_actions::dataset_counts(ctx, CountScope::AllOfTypeDataset).await?)
    } else {
        None
    };
    let site = ctx.config().site_url().to_string();
    let mut out = Vec::new();
    for g in orgs {
        let cap = if user.sysadmin {
            Some("admin".to_string())
        } else {
            held.get(&g.id).cloned()
        };
        let Some(cap) = cap else { continue };
        let mut m = raw_group(&site, &g);
        m.insert("capacity".into(), json!(cap));
        if let Some(c) = &counts {
            m.insert("package_count".into(), json!(c.of(&g)));
        }
        out.push((g.display_name().to_lowercase(), Value::Object(sorted(m))));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Value::Array(out.into_iter().map(|x| x.1).collect()))
}

pub async fn group_list_authz(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let am_member = bool_param(&p, "am_member", false)?;
    let include_count = bool_param(&p, "include_dataset_count", false)?;
    ctx.check_access("group_list_authz", &p).await?;
    let Some(uid) = ctx.user_id().map(str::to_string) else {
        return Ok(json!([]));
    };
    let sql = format!(
        "SELECT {} FROM catalog_group WHERE state = 'active' AND is_organization = false",
        q::GROUP_COLS
    );
    let rows = sqlx::query(&sql).fetch_all(ctx.db().await?).await?;
    let groups: Vec<GroupRow> = rows.iter().map(GroupRow::from_row).collect();
    let mine: Vec<String> = q::user_memberships(ctx.db().await?, &uid)
        .await?
        .into_iter()
        .map(|(g, _)| g)
        .collect();
    let counts = if include_count {
        Some(search_actions::dataset_counts(ctx, CountScope::AllOfTypeDataset).await?)
    } else {
        None
    };
    let site = ctx.config().site_url().to_string();
    let all = ctx.is_sysadmin() && !am_member;
    let mut out = Vec::new();
    for g in groups {
        if !all && !mine.contains(&g.id) {
            continue;
        }
        let mut m = raw_group(&site, &g);
        if let Some(c) = &counts {
            m.insert("package_count".into(), json!(c.of(&g)));
        }
        out.push((g.display_name().to_lowercase(), Value::Object(sorted(m))));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Value::Array(out.into_iter().map(|x| x.1).collect()))
}

fn object_table(object_type: &str) -> CkanResult<&'static str> {
    match object_type {
        "package" => Ok("package"),
        "user" => Ok("user"),
        "group" => Ok("group"),
        other => {
            let mut t = other.to_string();
            if let Some(f) = t.get_mut(0..1) {
                f.make_ascii_uppercase();
            }
            Err(validation_message(format!("{t} isn't a valid model")))
        }
    }
}

/// The id of a member object. A dataset is locked (in a write call): its group memberships
/// change only under its lock, whether through member_create or package_update.
async fn resolve_object(ctx: &mut ActionContext, table: &str, r: &str) -> CkanResult<String> {
    let found = match table {
        "package" => ctx.package_for_update(r).await?.map(|x| x.id),
        "user" => ctx.user_row(r).await?.map(|x| x.id),
        _ => ctx.group_row(r).await?.map(|x| x.id),
    };
    let label = match table {
        "package" => "Package",
        "user" => "User",
        _ => "Group",
    };
    found.ok_or_else(|| not_found(format!("{label} was not found.")))
}

pub async fn member_create(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let mut errs = ValidationBuilder::default();
    for k in ["id", "object", "object_type", "capacity"] {
        if opt_str(&p, k).is_none_or(|s| s.is_empty()) {
            errs.push(k, "Missing value");
        }
    }
    errs.finish()?;
    let (gid, obj, otype, cap) = (
        req_str(&p, "id")?,
        req_str(&p, "object")?,
        req_str(&p, "object_type")?,
        req_str(&p, "capacity")?,
    );
    let g = ctx
        .group_for_update(&gid)
        .await?
        .ok_or_else(|| not_found("Group was not found."))?;
    let table = object_table(&otype)?;
    let obj_id = resolve_object(ctx, table, &obj).await?;
    let mut auth = p.clone();
    auth.insert("id".into(), json!(g.id));
    ctx.check_access("member_create", &auth).await?;
    if table == "user"
        && Some(obj_id.as_str()) == ctx.user_id()
        && cap != "admin"
        && !ctx.is_sysadmin()
    {
        let held = q::user_memberships(ctx.db().await?, &obj_id).await?;
        if held.iter().any(|(gid, c)| *gid == g.id && c == "admin") {
            return Err(not_authorized(
                "Administrators cannot revoke their own admin status",
            ));
        }
    }
    upsert_member(ctx.db().await?, &g.id, table, &obj_id, &cap).await
}

pub async fn member_delete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let mut errs = ValidationBuilder::default();
    for k in ["id", "object", "object_type"] {
        if opt_str(&p, k).is_none_or(|s| s.is_empty()) {
            errs.push(k, "Missing value");
        }
    }
    errs.finish()?;
    let (gid, obj, otype) = (
        req_str(&p, "id")?,
        req_str(&p, "object")?,
        req_str(&p, "object_type")?,
    );
    let g = ctx
        .group_for_update(&gid)
        .await?
        .ok_or_else(|| not_found("Group was not found."))?;
    let table = object_table(&otype)?;
    let obj_id = resolve_object(ctx, table, &obj).await?;
    let mut auth = p.clone();
    auth.insert("id".into(), json!(g.id));
    ctx.check_access("member_delete", &auth).await?;
    sqlx::query("UPDATE member SET state = 'deleted' WHERE group_id = $1 AND table_name = $2 AND table_id = $3 AND state = 'active'")
        .bind(&g.id)
        .bind(table)
        .bind(&obj_id)
        .execute(ctx.db().await?)
        .await?;
    Ok(Value::Null)
}

async fn member_user(
    ctx: &mut ActionContext,
    p: Params,
    is_org: bool,
    create: bool,
) -> CkanResult<Value> {
    let gid = req_str(&p, "id")?;
    let g = ctx
        .group_for_update(&gid)
        .await?
        .filter(|g| g.is_organization == is_org)
        .ok_or_else(|| not_found("That group name or ID does not exist."))?;
    let username = opt_str(&p, "username")
        .or_else(|| opt_str(&p, "user_id"))
        .ok_or_else(|| missing("username"))?;
    let user = ctx
        .user_row(&username)
        .await?
        .ok_or_else(|| validation().field("username", "User not found").build())?;
    let mut m = Params::new();
    m.insert("id".into(), json!(g.id));
    m.insert("object".into(), json!(user.id));
    m.insert("object_type".into(), json!("user"));
    if create {
        let role = req_str(&p, "role")?;
        if !["admin", "editor", "member"].contains(&role.as_str()) {
            return Err(validation().field("role", "role does not exist.").build());
        }
        let mut auth = p.clone();
        auth.insert("id".into(), json!(g.id));
        ctx.check_access(&format!("{}_member_create", kind(is_org)), &auth)
            .await?;
        m.insert("capacity".into(), json!(role));
        ctx.call("member_create", m).await
    } else {
        ctx.call("member_delete", m).await
    }
}

pub async fn group_member_create(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    member_user(ctx, p, false, true).await
}
pub async fn organization_member_create(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    member_user(ctx, p, true, true).await
}
pub async fn group_member_delete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    member_user(ctx, p, false, false).await
}
pub async fn organization_member_delete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    member_user(ctx, p, true, false).await
}

pub async fn member_list(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let gid = req_str(&p, "id")?;
    let g = ctx.group_row(&gid).await?.ok_or_else(|| not_found(""))?;
    let mut auth = p.clone();
    auth.insert("id".into(), json!(g.id));
    ctx.check_access("member_list", &auth).await?;
    let object_type = opt_str(&p, "object_type");
    let capacity = opt_str(&p, "capacity");
    let rows = sqlx::query("SELECT table_id, table_name, capacity FROM member WHERE group_id = $1 AND state = 'active' ORDER BY table_name, table_id")
        .bind(&g.id)
        .fetch_all(ctx.db().await?)
        .await?;
    // Datasets the caller may not read are left out (CKAN lists private ones to anyone:
    // docs/API-COMPAT.md).
    let hidden = unreadable_datasets(
        ctx,
        rows.iter()
            .filter(|r| r.s("table_name") == "package")
            .map(|r| r.s("table_id"))
            .collect(),
    )
    .await?;
    let mut out = Vec::new();
    for r in rows {
        let (tid, table, cap) = (r.s("table_id"), r.s("table_name"), r.s("capacity"));
        if object_type.as_deref().is_some_and(|t| t != table)
            || capacity.as_deref().is_some_and(|c| c != cap)
            || (table == "package" && hidden.contains(&tid))
        {
            continue;
        }
        let shown = match cap.as_str() {
            "admin" => "Admin".to_string(),
            "editor" => "Editor".to_string(),
            "member" => "Member".to_string(),
            other => other.to_string(),
        };
        out.push(json!([tid, table, shown]));
    }
    Ok(Value::Array(out))
}

/// Of these dataset ids, the ones the caller may not read.
async fn unreadable_datasets(
    ctx: &mut ActionContext,
    ids: Vec<String>,
) -> CkanResult<std::collections::HashSet<String>> {
    let mut hidden = std::collections::HashSet::new();
    if ids.is_empty() || ctx.is_sysadmin() || ctx.ignore_auth {
        return Ok(hidden);
    }
    let mine = authz::user_labels(ctx).await?;
    let collaborators = ctx.config().catalog.auth.allow_dataset_collaborators;
    for pkg in q::package_summaries(ctx.db().await?, &ids).await? {
        if !authz::dataset_labels(&pkg, collaborators)
            .iter()
            .any(|l| mine.contains(l))
        {
            hidden.insert(pkg.id);
        }
    }
    Ok(hidden)
}

pub async fn member_roles_list(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    ctx.check_access("member_roles_list", &p).await?;
    let group_type = opt_str(&p, "group_type").unwrap_or_else(|| "organization".into());
    let mut roles = vec![json!({"text": "Admin", "value": "admin"})];
    if group_type != "group" {
        roles.push(json!({"text": "Editor", "value": "editor"}));
    }
    roles.push(json!({"text": "Member", "value": "member"}));
    Ok(Value::Array(roles))
}
