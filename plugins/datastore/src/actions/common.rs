//! What the `datastore_*` actions share: their common parameters (`id` / `resource_id`,
//! `records`), finding the resource and its table for a writer or a reader as CKAN checks
//! them, and checking and writing records.

use std::borrow::Cow;

use catalog_framework::prelude::*;
use catalog_framework::store::Backend;
use catalog_framework::typed::{AnyText, ParamType};

use crate::params::Opt;
use crate::table::{self, Field, Meta};
use crate::types::{to_cell, Cell};

pub(super) fn backend(ctx: &ActionContext) -> Backend {
    ctx.app.store.backend
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

/// `id` is CKAN's alias of `resource_id` (and wins when both are given, even as `null`,
/// which is then missing, as CKAN's `rename('id', 'resource_id')`).
pub(super) fn resource_id_of(id: &Opt<AnyText>, resource_id: &Option<AnyText>) -> Option<String> {
    id.0.as_ref()
        .or(resource_id.as_ref())
        .map(|t| t.0.clone())
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

/// `records`: the rows to write, a list (each row is checked against the table's columns
/// where it is written: [`check_records`], [`cells`]); anything else is `Records has to be a
/// list of dicts`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Records(pub Vec<Value>);

impl ParamType for Records {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match v {
            Value::Array(items) => Ok(Records(items.clone())),
            _ => Err("Records has to be a list of dicts".into()),
        }
    }
    fn schema() -> Value {
        json!({"type": "array", "items": {"type": "object"}})
    }
    fn to_value(&self) -> Value {
        Value::Array(self.0.clone())
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
    rid: Option<String>,
    auth: &str,
    force: bool,
) -> CkanResult<(Value, Meta)> {
    let Some(rid) = rid else {
        return Err(verr("resource_id", "Missing value"));
    };
    let res = resource(ctx, &rid).await?;
    ctx.check_access(auth, &auth_data(&res)).await?;
    check_read_only(&res, force)?;
    let meta = table::load(ctx.db().await?, &text(&res["id"]))
        .await?
        .ok_or_else(|| not_found(format!("Resource \"{rid}\" was not found.")))?;
    Ok((res, meta))
}

/// The table of a resource the caller may read: 404 before auth, as CKAN.
pub(super) async fn readable(
    ctx: &mut ActionContext,
    rid: Option<String>,
    auth: &str,
    missing: impl Fn(&str) -> String,
) -> CkanResult<(Value, Meta)> {
    let Some(rid) = rid else {
        return Err(verr("resource_id", "Missing value"));
    };
    let meta = table::load_by_name(ctx.db().await?, &rid)
        .await?
        .ok_or_else(|| not_found(missing(&rid)))?;
    let res = resource(ctx, &meta.resource_id).await?;
    ctx.check_access(auth, &auth_data(&res)).await?;
    Ok((res, meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_a_list_and_id_wins_even_when_empty() {
        assert_eq!(
            Records::decode(&json!([{"a": 1}, 2])).unwrap(),
            Records(vec![json!({"a": 1}), json!(2)])
        );
        assert_eq!(
            Records::decode(&json!({"a": 1})).unwrap_err(),
            "Records has to be a list of dicts"
        );
        let rid = Some(AnyText("r".into()));
        assert_eq!(resource_id_of(&Opt(None), &rid).as_deref(), Some("r"));
        assert_eq!(
            resource_id_of(&Opt(Some(AnyText("i".into()))), &rid).as_deref(),
            Some("i")
        );
        // `id: ""` hides `resource_id` (and is no id).
        assert_eq!(
            resource_id_of(&Opt(Some(AnyText(String::new()))), &rid),
            None
        );
        assert_eq!(resource_id_of(&Opt(None), &None), None);
    }
}
