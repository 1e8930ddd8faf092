//! What the `datastore_*` actions share: reading their common parameters (`id` /
//! `resource_id`, lists given as lists or comma-separated text), finding the resource and
//! its table for a writer or a reader as CKAN checks them, and checking and writing records.

use catalog_framework::prelude::*;
use catalog_framework::store::Backend;

use crate::table::{self, Field, Meta};
use crate::types::{to_cell, Cell};

pub(super) fn backend(ctx: &ActionContext) -> Backend {
    ctx.app.store.backend
}

/// CKAN's `boolean_validator` on a parameter's value.
pub(super) fn truthy(v: &Value) -> bool {
    catalog_framework::params::truthy(Some(v))
}

pub(super) fn verr(field: &str, msg: impl Into<String>) -> CkanError {
    validation().field(field, msg).build()
}

pub(super) fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `id` is CKAN's alias of `resource_id` (and wins when both are given).
pub(super) fn resource_id_of(id: &Option<Value>, resource_id: &Option<Value>) -> Option<String> {
    id.as_ref()
        .or(resource_id.as_ref())
        .map(text)
        .filter(|s| !s.is_empty())
}

/// The resource (as `resource_show` gives it to the caller) and its dataset's id; 404
/// `Resource "<id>" was not found.` for a resource that does not exist.
pub(super) async fn resource(ctx: &mut ActionContext, id: &str) -> CkanResult<Value> {
    match ctx
        .call_ignoring_auth("resource_show", params(json!({"id": id})))
        .await
    {
        Ok(r) => Ok(r),
        Err(e) if e.kind == ErrorKind::NotFound => {
            Err(not_found(format!("Resource \"{id}\" was not found.")))
        }
        Err(e) => Err(e),
    }
}

pub(super) fn params(v: Value) -> Params {
    match v {
        Value::Object(m) => m.into_iter().collect(),
        _ => Params::new(),
    }
}

/// What the auth functions get: the resource and its dataset.
pub(super) fn auth_data(res: &Value) -> Params {
    params(json!({"resource_id": res["id"], "package_id": res["package_id"]}))
}

/// CKAN's read-only guard: only resources made for the DataStore (`url_type` `datastore`)
/// are written without `force`.
pub(super) fn check_read_only(res: &Value, force: bool) -> CkanResult<()> {
    if force || res["url_type"] == "datastore" {
        return Ok(());
    }
    Err(verr(
        "read-only",
        "Cannot edit read-only resource because changes made may be lost. Use a resource created for editing e.g. with datastore_create or use \"force=True\" to ignore this warning.",
    ))
}

/// A list given as a list or as a comma-separated string.
pub(super) fn list_or_csv(v: &Value) -> Vec<String> {
    match v {
        Value::Array(items) => items.iter().map(text).collect(),
        Value::String(s) if s.trim().is_empty() => Vec::new(),
        Value::String(s) => s.split(',').map(|p| p.trim().to_string()).collect(),
        Value::Null => Vec::new(),
        other => vec![text(other)],
    }
}

/// Sets the resource's `datastore_active` (as CKAN 2.12: through `resource_patch`).
pub(super) async fn set_active(
    ctx: &mut ActionContext,
    res: &Value,
    active: bool,
) -> CkanResult<()> {
    if res["datastore_active"] == json!(active) {
        return Ok(());
    }
    ctx.call_ignoring_auth(
        "resource_patch",
        params(json!({"id": res["id"], "datastore_active": active})),
    )
    .await?;
    Ok(())
}

pub(super) fn records_list(v: Option<&Value>) -> CkanResult<Vec<Value>> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items.clone()),
        Some(_) => Err(verr("records", "Records has to be a list of dicts")),
    }
}

/// Checks each record against the columns: objects, no unknown keys (CKAN's messages).
pub(super) fn check_records(meta: &Meta, records: &[Value]) -> CkanResult<()> {
    for (i, r) in records.iter().enumerate() {
        let Value::Object(m) = r else {
            return Err(verr(
                "records",
                if i == 0 {
                    "The first row is not a json object".to_string()
                } else {
                    format!("row \"{i}\" is not a json object")
                },
            ));
        };
        let extra: Vec<&str> = m
            .keys()
            .filter(|k| k.as_str() != "_id" && meta.field(k).is_none())
            .map(String::as_str)
            .collect();
        if !extra.is_empty() {
            return Err(verr(
                "records",
                format!("row \"{}\" has extra keys \"{}\"", i + 1, extra.join(", ")),
            ));
        }
    }
    Ok(())
}

/// A row's cells for the columns it names, checked; `Err` is CKAN's `records` error with the
/// row's index.
pub(super) fn cells<'m>(
    meta: &'m Meta,
    row: usize,
    r: &Value,
) -> CkanResult<Vec<(&'m Field, Cell)>> {
    let mut out = Vec::new();
    for f in &meta.fields {
        if let Some(v) = r.get(&f.id) {
            match to_cell(&f.ftype, v) {
                Ok(c) => out.push((f, c)),
                Err(msg) => {
                    let mut errs = validation();
                    errs.push("records", msg);
                    errs.set("records_row", json!(row));
                    return Err(errs.build());
                }
            }
        }
    }
    Ok(out)
}

/// A store error while writing row `row`: CKAN's `records` error (a unique key taken, …).
pub(super) fn row_error(e: &sqlx::Error, row: usize) -> CkanError {
    let text = match e {
        sqlx::Error::Database(d)
            if d.message().contains("UNIQUE constraint failed")
                || d.message().contains("duplicate key value") =>
        {
            // PostgreSQL's words on both stores, without the table's internal name.
            "duplicate key value violates unique constraint".to_string()
        }
        sqlx::Error::Database(d) => d.message().lines().next().unwrap_or_default().to_string(),
        other => other.to_string(),
    };
    let mut errs = validation();
    errs.push("records", text);
    errs.set("records_row", json!(row));
    errs.build()
}

pub(super) async fn insert_records(
    ctx: &mut ActionContext,
    meta: &Meta,
    records: &[Value],
) -> CkanResult<()> {
    let b = backend(ctx);
    for (i, r) in records.iter().enumerate() {
        let cs = cells(meta, i, r)?;
        let id = r.get("_id").and_then(Value::as_i64);
        table::insert_row(ctx.db().await?, b, meta, id, cs)
            .await
            .map_err(|e| row_error(&e, i))?;
    }
    Ok(())
}

/// The table of a resource the caller may write (`auth`), checked as CKAN does: the
/// resource, then auth, then the read-only guard, then the table.
pub(super) async fn writable(
    ctx: &mut ActionContext,
    id: &Option<Value>,
    resource_id: &Option<Value>,
    auth: &str,
    force: Option<&Value>,
) -> CkanResult<(Value, Meta)> {
    let Some(rid) = resource_id_of(id, resource_id) else {
        return Err(verr("resource_id", "Missing value"));
    };
    let res = resource(ctx, &rid).await?;
    ctx.check_access(auth, &auth_data(&res)).await?;
    check_read_only(&res, force.is_some_and(truthy))?;
    let meta = table::load(ctx.db().await?, &text(&res["id"]))
        .await?
        .ok_or_else(|| not_found(format!("Resource \"{rid}\" was not found.")))?;
    Ok((res, meta))
}

/// The table of a resource the caller may read: 404 before auth, as CKAN.
pub(super) async fn readable(
    ctx: &mut ActionContext,
    id: &Option<Value>,
    resource_id: &Option<Value>,
    auth: &str,
    missing: impl Fn(&str) -> String,
) -> CkanResult<(Value, Meta)> {
    let Some(rid) = resource_id_of(id, resource_id) else {
        return Err(verr("resource_id", "Missing value"));
    };
    let meta = table::load_by_name(ctx.db().await?, &rid)
        .await?
        .ok_or_else(|| not_found(missing(&rid)))?;
    let res = resource(ctx, &meta.resource_id).await?;
    ctx.check_access(auth, &auth_data(&res)).await?;
    Ok((res, meta))
}
