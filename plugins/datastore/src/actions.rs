//! The `datastore_*` actions, with CKAN's parameters, order of checks, messages and shapes
//! (ckanext/datastore/logic/action.py and backend/postgres.py; where 2.10/2.11 and 2.12
//! differ, docs/DATASTORE.md says which we follow).

use catalog_framework::error::integrity;
use catalog_framework::prelude::*;
use catalog_framework::store::Backend;
use sqlx::Row;

use crate::table::{self, Field, Meta};
use crate::types::{self, parse_type, quote, to_cell, valid_field_name, Cell};

/// Rows a search returns unless `limit` says otherwise, and at most
/// (`catalog.datastore.search.rows_max`).
const ROWS_DEFAULT: i64 = 100;
const ROWS_MAX: i64 = 32_000;
/// Columns a table may have, and records one call may write.
const MAX_FIELDS: usize = 1_000;

pub(crate) fn rows_max(ctx: &ActionContext) -> i64 {
    ctx.config()
        .catalog
        .other
        .get("datastore")
        .and_then(|d| d.get("search"))
        .and_then(|s| s.get("rows_max"))
        .and_then(|v| {
            v.as_i64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        })
        .filter(|n| *n > 0)
        .unwrap_or(ROWS_MAX)
}

fn backend(ctx: &ActionContext) -> Backend {
    ctx.app.store.backend
}

/// CKAN's `boolean_validator` on a parameter's value.
fn truthy(v: &Value) -> bool {
    catalog_framework::params::truthy(Some(v))
}

fn verr(field: &str, msg: impl Into<String>) -> CkanError {
    validation().field(field, msg).build()
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `id` is CKAN's alias of `resource_id` (and wins when both are given).
fn resource_id_of(id: &Option<Value>, resource_id: &Option<Value>) -> Option<String> {
    id.as_ref()
        .or(resource_id.as_ref())
        .map(text)
        .filter(|s| !s.is_empty())
}

/// The resource (as `resource_show` gives it to the caller) and its dataset's id; 404
/// `Resource "<id>" was not found.` for a resource that does not exist.
async fn resource(ctx: &mut ActionContext, id: &str) -> CkanResult<Value> {
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

fn params(v: Value) -> Params {
    match v {
        Value::Object(m) => m.into_iter().collect(),
        _ => Params::new(),
    }
}

/// What the auth functions get: the resource and its dataset.
fn auth_data(res: &Value) -> Params {
    params(json!({"resource_id": res["id"], "package_id": res["package_id"]}))
}

/// CKAN's read-only guard: only resources made for the DataStore (`url_type` `datastore`)
/// are written without `force`.
fn check_read_only(res: &Value, force: bool) -> CkanResult<()> {
    if force || res["url_type"] == "datastore" {
        return Ok(());
    }
    Err(verr(
        "read-only",
        "Cannot edit read-only resource because changes made may be lost. Use a resource created for editing e.g. with datastore_create or use \"force=True\" to ignore this warning.",
    ))
}

/// A list given as a list or as a comma-separated string.
fn list_or_csv(v: &Value) -> Vec<String> {
    match v {
        Value::Array(items) => items.iter().map(text).collect(),
        Value::String(s) if s.trim().is_empty() => Vec::new(),
        Value::String(s) => s.split(',').map(|p| p.trim().to_string()).collect(),
        Value::Null => Vec::new(),
        other => vec![text(other)],
    }
}

/// Sets the resource's `datastore_active` (as CKAN 2.12: through `resource_patch`).
async fn set_active(ctx: &mut ActionContext, res: &Value, active: bool) -> CkanResult<()> {
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

action_params! {
    /// Adds a table to the DataStore for a resource, or columns and rows to its table.
    ///
    /// Give `resource_id` (an existing resource; `force` for one not made for the DataStore)
    /// or `resource` (a resource dict to create, without a `url`). `fields`: a list of
    /// `{"id", "type", "info"}` (types: text, int, int8, numeric, float8, bool, date, time,
    /// timestamp, json, _text, _int4, _float8 …); a field without a type takes one guessed
    /// from the first record. `records`: rows to insert. `primary_key`: the fields of the
    /// unique key that `datastore_upsert` matches on; `indexes`: fields to index.
    pub struct DatastoreCreateParams {
        /// the resource's id
        resource_id: Option<Value>,
        /// alias of resource_id
        id: Option<Value>,
        /// a new resource to create (its dict, with package_id)
        resource: Option<Value>,
        /// write to a resource whose url_type is not datastore
        force: Option<Value>,
        /// the columns: a list of {"id", "type", "info"}
        fields: Option<Value>,
        /// rows to insert (a list of objects)
        records: Option<Value>,
        /// the unique key's fields (list or comma-separated)
        primary_key: Option<Value>,
        /// fields to index (list or comma-separated; an element may be a list)
        indexes: Option<Value>,
        /// other names for the table (list or comma-separated); replaces the old ones
        aliases: Option<Value>,
        /// accepted and ignored (the count is always exact)
        calculate_record_count: Option<Value>,
    }
}

/// A field as given: its id, type name (if any) and info.
type GivenField = (String, Option<String>, Option<Value>);

/// The checked `fields` param: each `{id, type?, info?}`.
fn given_fields(v: Option<&Value>) -> CkanResult<Vec<GivenField>> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = v else {
        return Err(integrity(
            "Only lists of dicts can be placed against subschema ('fields',), not <class 'str'>",
            json!({}),
        ));
    };
    if items.len() > MAX_FIELDS {
        return Err(verr("fields", format!("at most {MAX_FIELDS} fields")));
    }
    let mut out = Vec::new();
    for item in items {
        let Value::Object(m) = item else {
            return Err(integrity(
                "Only lists of dicts can be placed against subschema ('fields',), not <class 'str'>",
                json!({}),
            ));
        };
        let id = m.get("id").map(text).unwrap_or_default();
        if id.is_empty() {
            return Err(validation().field("fields", "Missing value").build());
        }
        let ftype = m.get("type").map(text).filter(|t| !t.is_empty());
        out.push((id, ftype, m.get("info").cloned()));
    }
    Ok(out)
}

fn records_list(v: Option<&Value>) -> CkanResult<Vec<Value>> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items.clone()),
        Some(_) => Err(verr("records", "Records has to be a list of dicts")),
    }
}

/// Checks each record against the columns: objects, no unknown keys (CKAN's messages).
fn check_records(meta: &Meta, records: &[Value]) -> CkanResult<()> {
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
fn cells<'m>(meta: &'m Meta, row: usize, r: &Value) -> CkanResult<Vec<(&'m Field, Cell)>> {
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
fn row_error(e: &sqlx::Error, row: usize) -> CkanError {
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

async fn insert_records(ctx: &mut ActionContext, meta: &Meta, records: &[Value]) -> CkanResult<()> {
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

pub(crate) async fn datastore_create(
    ctx: &mut ActionContext,
    p: DatastoreCreateParams,
) -> CkanResult<Value> {
    let given = resource_id_of(&p.id, &p.resource_id);
    if p.resource.as_ref().is_some_and(|r| !r.is_null()) && given.is_some() {
        return Err(verr("resource", "resource cannot be used with resource_id"));
    }
    let fields = given_fields(p.fields.as_ref())?;
    let records = records_list(p.records.as_ref())?;
    let force = p.force.as_ref().is_some_and(truthy);
    let aliases: Option<Vec<String>> = p.aliases.as_ref().filter(|v| !v.is_null()).map(list_or_csv);
    for a in aliases.iter().flatten() {
        if a.contains('%') || !valid_field_name(a) || a.len() > 63 {
            return Err(verr("alias", format!("\"{a}\" is not a valid alias name")));
        }
    }
    let mut echo = serde_json::Map::new();
    let res = match (&p.resource, given) {
        (Some(Value::Object(r)), None) => {
            if r.get("url").is_some_and(|u| !text(u).is_empty()) {
                return Err(verr("resource", "The datapusher has to be enabled."));
            }
            let mut r = r.clone();
            r.insert("url".into(), json!("_datastore_only_resource"));
            r.insert("url_type".into(), json!("datastore"));
            echo.insert("resource".into(), Value::Object(r.clone()));
            ctx.call("resource_create", r.into_iter().collect()).await?
        }
        (Some(_), None) => return Err(verr("resource", "Must be a dict")),
        (None, Some(id)) => {
            let res = resource(ctx, &id).await?;
            ctx.check_access("datastore_create", &auth_data(&res))
                .await?;
            check_read_only(&res, force)?;
            res
        }
        (None, None) => return Err(verr("resource_id", "resource_id or resource required")),
        (Some(_), Some(_)) => unreachable!("refused above"),
    };
    let rid = text(&res["id"]);
    let b = backend(ctx);
    let existing = table::load(ctx.db().await?, &rid).await?;
    let is_new = existing.is_none();
    let mut meta = existing.unwrap_or_else(|| Meta {
        resource_id: rid.clone(),
        name: table::table_name(&rid),
        fields: Vec::new(),
        primary_key: Vec::new(),
    });
    let before = meta.fields.len();
    // Types are checked before names (CKAN's order), then names, duplicates, guesses.
    let mut echoed_fields = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let first = records.first();
    for (id, ftype, _) in &fields {
        if let Some(t) = ftype {
            if parse_type(t).is_none() {
                return Err(verr("fields", format!("\"{t}\" is not a valid field type")));
            }
        }
        if !valid_field_name(id) {
            return Err(verr(
                "fields",
                format!("\"{id}\" is not a valid field name"),
            ));
        }
        if id.chars().count() > 63 {
            return Err(verr(
                "fields",
                format!("Column heading \"{id}\" exceeds limit of 63 characters."),
            ));
        }
        if !seen.insert(id.clone()) {
            return Err(verr("field", "Duplicate column names are not supported"));
        }
    }
    for (id, ftype, info) in fields {
        let type_name = match ftype {
            Some(t) => t,
            None => match first.and_then(|r| r.get(&id)).and_then(types::guess) {
                Some(g) => g.to_string(),
                None => return Err(verr("fields", format!("\"{id}\" type not guessable"))),
            },
        };
        let ftype = parse_type(&type_name).unwrap_or_else(|| parse_type("text").expect("text"));
        echoed_fields.push({
            let mut f = serde_json::Map::new();
            f.insert("id".into(), json!(id));
            f.insert("type".into(), json!(type_name));
            if let Some(i) = &info {
                f.insert("info".into(), i.clone());
            }
            Value::Object(f)
        });
        // 2.11+: a field the table has keeps its type; a new one is added.
        if meta.field(&id).is_none() {
            meta.fields.push(Field { id, ftype, info });
        } else if let Some(f) = meta.fields.iter_mut().find(|f| f.id == id) {
            if info.is_some() {
                f.info = info;
            }
        }
    }
    // Keys of the first record that are not fields become columns of the guessed type.
    if let Some(Value::Object(r)) = first {
        for (k, v) in r {
            if k == "_id" || meta.field(k).is_some() {
                continue;
            }
            if !valid_field_name(k) {
                return Err(verr("fields", format!("\"{k}\" is not a valid field name")));
            }
            let g = types::guess(v).unwrap_or("text");
            meta.fields.push(Field {
                id: k.clone(),
                ftype: parse_type(g).expect("guessed types parse"),
                info: None,
            });
        }
    }
    if meta.fields.len() > MAX_FIELDS {
        return Err(verr("fields", format!("at most {MAX_FIELDS} fields")));
    }
    let key_given = p.primary_key.as_ref().filter(|v| !v.is_null());
    let mut key_changed = false;
    if let Some(k) = key_given {
        let key = list_or_csv(k);
        for col in &key {
            if meta.field(col).is_none() {
                return Err(verr(
                    "index",
                    format!("The field \"{col}\" is not a valid column name."),
                ));
            }
        }
        key_changed = key != meta.primary_key || is_new;
        meta.primary_key = key;
        echo.insert("primary_key".into(), k.clone());
    }
    let indexes: Option<Vec<Vec<String>>> = match p.indexes.as_ref().filter(|v| !v.is_null()) {
        Some(v) => {
            let items: Vec<Vec<String>> = match v {
                Value::Array(items) => items
                    .iter()
                    .map(|i| match i {
                        Value::Array(cols) => cols.iter().map(text).collect(),
                        other => vec![text(other)],
                    })
                    .collect(),
                other => list_or_csv(other).into_iter().map(|c| vec![c]).collect(),
            };
            if items.len() > table::MAX_INDEXES {
                return Err(verr(
                    "indexes",
                    format!("at most {} indexes", table::MAX_INDEXES),
                ));
            }
            for cols in &items {
                for c in cols {
                    if meta.field(c).is_none() {
                        return Err(verr(
                            "index",
                            format!("The field \"{c}\" is not a valid column name."),
                        ));
                    }
                }
            }
            echo.insert("indexes".into(), v.clone());
            Some(items)
        }
        None => None,
    };
    check_records(&meta, &records)?;
    if is_new {
        table::create(ctx.db().await?, b, &meta).await?;
    } else {
        table::add_columns(ctx.db().await?, b, &meta, before).await?;
    }
    insert_records(ctx, &meta, &records).await?;
    if key_changed || indexes.is_some() {
        table::set_indexes(ctx.db().await?, b, &meta, indexes.as_deref(), key_changed).await?;
        table::save_meta(ctx.db().await?, &meta).await?;
    }
    if let Some(a) = &aliases {
        table::set_aliases(ctx.db().await?, &rid, a).await?;
    }
    set_active(ctx, &res, true).await?;
    echo.insert("resource_id".into(), json!(rid));
    echo.insert("fields".into(), Value::Array(echoed_fields));
    echo.insert("method".into(), json!("insert"));
    if let Some(a) = &p.aliases {
        echo.insert("aliases".into(), a.clone());
    }
    if !p.__extras.is_empty() {
        echo.insert("__extras".into(), json!(p.__extras));
    }
    Ok(Value::Object(echo))
}

action_params! {
    /// Inserts, updates or upserts rows of a resource's DataStore table.
    ///
    /// `method`: `upsert` (the default: update the row with the record's key, else insert),
    /// `insert`, or `update` (the row must exist). The key is the table's `primary_key`, or
    /// `_id` when a record gives it. `dry_run`: check and run, then change nothing.
    pub struct DatastoreUpsertParams {
        /// the resource's id
        resource_id: Option<Value>,
        /// alias of resource_id
        id: Option<Value>,
        /// the rows
        records: Option<Value>,
        /// upsert (default), insert or update
        method: Option<Value>,
        /// write to a resource whose url_type is not datastore
        force: Option<Value>,
        /// run, then roll back
        dry_run: Option<Value>,
        /// accepted and ignored (the count is always exact)
        calculate_record_count: Option<Value>,
    }
}

/// The table of a resource the caller may write (`auth`), checked as CKAN does: the
/// resource, then auth, then the read-only guard, then the table.
async fn writable(
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

pub(crate) async fn datastore_upsert(
    ctx: &mut ActionContext,
    p: DatastoreUpsertParams,
) -> CkanResult<Value> {
    let method = p
        .method
        .as_ref()
        .map(text)
        .unwrap_or_else(|| "upsert".into());
    if !["upsert", "insert", "update"].contains(&method.as_str()) {
        return Err(verr(
            "method",
            "Value must be one of ['upsert', 'insert', 'update']",
        ));
    }
    let (res, meta) = writable(
        ctx,
        &p.id,
        &p.resource_id,
        "datastore_upsert",
        p.force.as_ref(),
    )
    .await?;
    let records = records_list(p.records.as_ref())?;
    let b = backend(ctx);
    let dry_run = p.dry_run.as_ref().is_some_and(truthy);
    if dry_run {
        // Everything runs and is checked, then undone: the call's transaction goes on.
        sqlx::query("SAVEPOINT datastore_dry_run")
            .execute(ctx.db().await?)
            .await?;
    }
    if method == "insert" {
        check_records(&meta, &records)?;
        insert_records(ctx, &meta, &records).await?;
    } else {
        for (i, r) in records.iter().enumerate() {
            let Value::Object(m) = r else {
                return Err(verr("records", format!("row \"{i}\" is not a json object")));
            };
            let unknown: Vec<&str> = m
                .keys()
                .filter(|k| k.as_str() != "_id" && meta.field(k).is_none())
                .map(String::as_str)
                .collect();
            if !unknown.is_empty() {
                return Err(verr(
                    "fields",
                    format!("fields \"{}\" do not exist", unknown.join(", ")),
                ));
            }
            let key_cols: Vec<String> = if m.contains_key("_id") {
                vec!["_id".into()]
            } else if !meta.primary_key.is_empty() {
                meta.primary_key.clone()
            } else {
                return Err(verr("table", "unique key must be passed for update/upsert"));
            };
            let missing: Vec<&str> = key_cols
                .iter()
                .filter(|k| !m.contains_key(k.as_str()))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                return Err(verr(
                    "key",
                    format!(
                        "fields \"{}\" are missing\n                            but needed as key",
                        missing.join(", ")
                    ),
                ));
            }
            let mut key = Vec::new();
            for k in &key_cols {
                let v = &m[k];
                if k == "_id" {
                    let Some(id) = v.as_i64().or_else(|| text(v).parse().ok()) else {
                        return Err(row_error(
                            &sqlx::Error::Protocol(format!("invalid _id {v}")),
                            i,
                        ));
                    };
                    key.push((k.clone(), None, Cell::Int(id)));
                } else {
                    let f = meta.field(k).expect("key fields exist");
                    let c = to_cell(&f.ftype, v).map_err(|msg| {
                        let mut errs = validation();
                        errs.push("records", msg);
                        errs.set("records_row", json!(i));
                        errs.build()
                    })?;
                    key.push((k.clone(), Some(f.ftype), c));
                }
            }
            let values: Vec<(&Field, Cell)> = cells(&meta, i, r)?
                .into_iter()
                .filter(|(f, _)| !key_cols.contains(&f.id))
                .collect();
            let shown_key = key_cols.iter().map(|k| text(&m[k])).collect::<Vec<_>>();
            let changed = table::update_rows(ctx.db().await?, b, &meta, key, values)
                .await
                .map_err(|e| row_error(&e, i))?;
            if changed == 0 {
                if method == "update" {
                    return Err(verr(
                        "key",
                        format!("key \"{}\" not found", json!(shown_key)),
                    ));
                }
                let id = m.get("_id").and_then(Value::as_i64);
                let cs = cells(&meta, i, r)?;
                table::insert_row(ctx.db().await?, b, &meta, id, cs)
                    .await
                    .map_err(|e| row_error(&e, i))?;
            }
        }
    }
    let mut out = serde_json::Map::new();
    out.insert("resource_id".into(), res["id"].clone());
    if let Some(m) = &p.method {
        out.insert("method".into(), m.clone());
    }
    if dry_run {
        for sql in [
            "ROLLBACK TO SAVEPOINT datastore_dry_run",
            "RELEASE SAVEPOINT datastore_dry_run",
        ] {
            sqlx::query(sql).execute(ctx.db().await?).await?;
        }
        out.insert("dry_run".into(), json!(true));
    }
    Ok(Value::Object(out))
}

action_params! {
    /// Deletes a resource's DataStore table, or (with `filters`) the rows that match.
    pub struct DatastoreDeleteParams {
        /// the resource's id
        resource_id: Option<Value>,
        /// alias of resource_id
        id: Option<Value>,
        /// delete the rows matching these {field: value} (a value may be a list); without
        /// it the whole table is deleted
        filters: Option<Value>,
        /// write to a resource whose url_type is not datastore
        force: Option<Value>,
        /// accepted and ignored
        calculate_record_count: Option<Value>,
    }
}

pub(crate) async fn datastore_delete(
    ctx: &mut ActionContext,
    p: DatastoreDeleteParams,
) -> CkanResult<Value> {
    delete(ctx, p, false).await
}

async fn delete(
    ctx: &mut ActionContext,
    p: DatastoreDeleteParams,
    records_only: bool,
) -> CkanResult<Value> {
    let filters = match &p.filters {
        None | Some(Value::Null) if records_only => return Err(verr("filters", "Missing value")),
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m.clone()),
        Some(_) if records_only => return Err(verr("filters", "Must be a dict")),
        Some(_) => return Err(verr("filters", "filters must be either a dict or null.")),
    };
    let (res, meta) = writable(
        ctx,
        &p.id,
        &p.resource_id,
        "datastore_delete",
        p.force.as_ref(),
    )
    .await?;
    let b = backend(ctx);
    let mut out = serde_json::Map::new();
    out.insert("resource_id".into(), res["id"].clone());
    match filters {
        None => {
            table::drop(ctx.db().await?, b, &meta).await?;
            set_active(ctx, &res, false).await?;
        }
        Some(f) => {
            let mut binds = Vec::new();
            let wheres = filter_clauses(&meta, b, &f, &mut binds)?;
            let sql = format!(
                "DELETE FROM {}{}",
                meta.qualified(b),
                if wheres.is_empty() {
                    String::new()
                } else {
                    format!(" WHERE {}", wheres.join(" AND "))
                }
            );
            let mut q = sqlx::query(&sql);
            for c in binds {
                q = table::bind(q, c);
            }
            q.execute(ctx.db().await?)
                .await
                .map_err(|e| verr("filters", e.to_string()))?;
            out.insert("filters".into(), Value::Object(f));
        }
    }
    Ok(Value::Object(out))
}

action_params! {
    /// Deletes the rows matching `filters` (`{}`: every row) and keeps the table.
    pub struct DatastoreRecordsDeleteParams {
        /// the resource's id
        resource_id: Option<Value>,
        /// alias of resource_id
        id: Option<Value>,
        /// {field: value}; a value may be a list
        filters: Option<Value>,
        /// write to a resource whose url_type is not datastore
        force: Option<Value>,
    }
}

pub(crate) async fn datastore_records_delete(
    ctx: &mut ActionContext,
    p: DatastoreRecordsDeleteParams,
) -> CkanResult<Value> {
    let inner = DatastoreDeleteParams {
        resource_id: p.resource_id,
        id: p.id,
        filters: p.filters,
        force: p.force,
        calculate_record_count: None,
        __extras: p.__extras,
    };
    delete(ctx, inner, true).await
}

/// The WHERE clauses of `filters` (CKAN 2.12's, see filters.rs), the values pushed to
/// `binds` (placeholders numbered after what is there).
fn filter_clauses(
    meta: &Meta,
    b: Backend,
    filters: &serde_json::Map<String, Value>,
    binds: &mut Vec<Cell>,
) -> CkanResult<Vec<String>> {
    crate::filters::where_clauses(&Value::Object(filters.clone()), meta, b, binds)
}

action_params! {
    /// Returns a resource's DataStore table: its row count and its fields.
    pub struct DatastoreInfoParams {
        /// the resource's id
        resource_id: Option<Value>,
        /// alias of resource_id
        id: Option<Value>,
    }
}

/// The table of a resource the caller may read: 404 before auth, as CKAN.
async fn readable(
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

pub(crate) async fn datastore_info(
    ctx: &mut ActionContext,
    p: DatastoreInfoParams,
) -> CkanResult<Value> {
    let (res, meta) = readable(ctx, &p.id, &p.resource_id, "datastore_info", |id| {
        format!("Resource/Alias \"{id}\" was not found.")
    })
    .await?;
    let b = backend(ctx);
    let count: i64 = sqlx::query(&format!("SELECT COUNT(*) AS n FROM {}", meta.qualified(b)))
        .fetch_one(ctx.db().await?)
        .await?
        .try_get("n")?;
    let fields: Vec<Value> = meta
        .fields
        .iter()
        .map(|f| {
            let mut v = f.to_json();
            v["schema"] = json!({
                "native_type": f.ftype.column_sql(b).to_ascii_lowercase(),
                "notnull": false,
                "index_name": null,
                "is_index": meta.primary_key.contains(&f.id),
                "uniquekey": meta.primary_key.contains(&f.id),
            });
            v
        })
        .collect();
    let aliases = table::aliases_of(ctx.db().await?, &meta.resource_id).await?;
    Ok(json!({
        "meta": {
            "id": res["id"], "count": count, "table_type": "BASE TABLE",
            "aliases": aliases,
        },
        "fields": fields,
    }))
}

action_params! {
    /// Searches a resource's DataStore table.
    ///
    /// `filters`: {field: value or list of values}; `q`: full-text search (a string over
    /// every field, or {field: text}); `fields`, `sort` (`"a desc, b"`), `distinct`, `limit`
    /// (default 100, at most catalog.datastore.search.rows_max, 32,000), `offset`,
    /// `include_total` (default true), `records_format` (objects, lists, csv, tsv).
    pub struct DatastoreSearchParams {
        /// the resource's id
        resource_id: Option<Value>,
        /// alias of resource_id
        id: Option<Value>,
        /// {field: value}; a list of values matches any of them
        filters: Option<Value>,
        /// full-text query: a string, or {field: text}
        q: Option<Value>,
        /// full-text query over every field
        full_text: Option<Value>,
        /// accepted: the query is always plain text
        plain: Option<Value>,
        /// accepted: the text-search language is English
        language: Option<Value>,
        /// return each distinct row once
        distinct: Option<Value>,
        /// rows to return (default 100)
        limit: Option<Value>,
        /// rows to skip
        offset: Option<Value>,
        /// the fields to return (list or comma-separated)
        fields: Option<Value>,
        /// the order: "field [asc|desc][, …]"
        sort: Option<Value>,
        /// return the total (default true)
        include_total: Option<Value>,
        /// accepted; the total is always exact
        total_estimation_threshold: Option<Value>,
        /// objects (default), lists, csv or tsv
        records_format: Option<Value>,
    }
}

/// A JSON param given as text (a query string's `filters={"a":1}`).
fn json_param(v: Option<&Value>, key: &str) -> CkanResult<Option<Value>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if key == "filters" => serde_json::from_str(s)
            .map(Some)
            .map_err(|_| verr(key, "Cannot parse JSON")),
        Some(Value::String(s)) => Ok(Some(match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => Value::Object(m),
            _ => Value::String(s.clone()),
        })),
        Some(other) => Ok(Some(other.clone())),
    }
}

fn int_param(v: Option<&Value>, key: &str) -> CkanResult<Option<i64>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| verr(key, "Invalid integer")),
        Some(v) => text(v)
            .trim()
            .parse::<i64>()
            .map(Some)
            .map_err(|_| verr(key, "Invalid integer")),
    }
}

/// The words of a full-text query, each quoted for FTS5 (AND of the words).
fn fts5_query(q: &str) -> String {
    q.split_whitespace()
        .take(32)
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One sort clause: `field [asc|desc] [nulls first|last]`, the field possibly quoted.
fn sort_clause(meta: &Meta, clause: &str) -> Option<String> {
    let c = clause.trim();
    let lower = c.to_ascii_lowercase();
    let (rest, nulls) = if let Some(at) = lower.rfind(" nulls ") {
        let tail = lower[at + 7..].trim().to_string();
        if tail != "first" && tail != "last" {
            return None;
        }
        (c[..at].trim(), Some(tail))
    } else {
        (c, None)
    };
    let lower_rest = rest.to_ascii_lowercase();
    let (field, dir) = if lower_rest.ends_with(" desc") {
        (rest[..rest.len() - 5].trim(), "DESC")
    } else if lower_rest.ends_with(" asc") {
        (rest[..rest.len() - 4].trim(), "ASC")
    } else {
        (rest, "ASC")
    };
    let field = field
        .strip_prefix('"')
        .and_then(|f| f.strip_suffix('"'))
        .unwrap_or(field);
    let col = if field == "_id" {
        "_id".to_string()
    } else {
        quote(&meta.field(field)?.id)
    };
    Some(match nulls {
        Some(n) => format!("{col} {dir} NULLS {}", n.to_ascii_uppercase()),
        None => format!("{col} {dir}"),
    })
}

/// A CSV/TSV field as PostgreSQL's COPY writes it.
pub(crate) fn csv_field(v: &Value, sep: char) -> String {
    let s = match v {
        Value::Null => return String::new(),
        Value::Bool(b) => return if *b { "t".into() } else { "f".into() },
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.is_empty() || s.contains([sep, '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

pub(crate) async fn datastore_search(
    ctx: &mut ActionContext,
    p: DatastoreSearchParams,
) -> CkanResult<Value> {
    search(ctx, p, None).await
}

/// `datastore_search`, optionally only rows whose `_id` is above `after` (the dump's keyset
/// paging: each page starts where the last ended, however deep).
pub(crate) async fn search(
    ctx: &mut ActionContext,
    p: DatastoreSearchParams,
    after: Option<i64>,
) -> CkanResult<Value> {
    let (res, meta) = readable(ctx, &p.id, &p.resource_id, "datastore_search", |id| {
        format!("Resource \"{id}\" was not found.")
    })
    .await?;
    if let Some(k) = p.__extras.keys().next() {
        return Err(verr("__extras", format!("invalid value \"{k}\"")));
    }
    let b = backend(ctx);
    let limit = int_param(p.limit.as_ref(), "limit")?.unwrap_or(ROWS_DEFAULT);
    if limit < 0 {
        return Err(verr("limit", "Must be a natural number"));
    }
    let limit = limit.min(rows_max(ctx));
    let offset = int_param(p.offset.as_ref(), "offset")?;
    if let Some(o) = offset.filter(|o| *o < 0) {
        return Err(verr("offset", format!("invalid value \"{o}\"")));
    }
    let records_format = p
        .records_format
        .as_ref()
        .map(text)
        .unwrap_or_else(|| "objects".into());
    if !["objects", "lists", "csv", "tsv"].contains(&records_format.as_str()) {
        return Err(verr(
            "records_format",
            "Value must be one of ['objects', 'lists', 'csv', 'tsv']",
        ));
    }
    let include_total = p.include_total.as_ref().is_none_or(truthy);
    let distinct = p.distinct.as_ref().is_some_and(truthy);
    // The output fields.
    let all: Vec<(String, Option<&Field>)> = std::iter::once(("_id".to_string(), None))
        .chain(meta.fields.iter().map(|f| (f.id.clone(), Some(f))))
        .collect();
    let chosen: Vec<(String, Option<&Field>)> = match p.fields.as_ref().filter(|v| !v.is_null()) {
        Some(v) => {
            let mut out = Vec::new();
            for name in list_or_csv(v) {
                let name = name.trim_matches('"').to_string();
                match all.iter().find(|(n, _)| *n == name) {
                    Some(hit) => out.push(hit.clone()),
                    None => return Err(verr("fields", format!("invalid value \"{name}\""))),
                }
            }
            out
        }
        None => all.clone(),
    };
    // WHERE: filters, then the full-text query.
    let mut binds = Vec::new();
    let filters = json_param(p.filters.as_ref(), "filters")?;
    let mut wheres = match &filters {
        None => Vec::new(),
        Some(f) => crate::filters::where_clauses(f, &meta, b, &mut binds)?,
    };
    let q = json_param(p.q.as_ref(), "q")?;
    let mut texts: Vec<(Option<String>, String)> = Vec::new();
    match &q {
        Some(Value::String(s)) if !s.trim().is_empty() => texts.push((None, s.clone())),
        Some(Value::Object(m)) => {
            for (k, v) in m {
                let Some(f) = meta.field(k) else {
                    return Err(verr("q", format!("invalid value \"{k}\"")));
                };
                let Value::String(s) = v else {
                    return Err(verr("q", format!("invalid value \"{k}\"")));
                };
                texts.push((Some(f.id.clone()), s.clone()));
            }
        }
        _ => {}
    }
    if let Some(ft) = p
        .full_text
        .as_ref()
        .map(text)
        .filter(|s| !s.trim().is_empty())
    {
        texts.push((None, ft));
    }
    for (field, t) in &texts {
        binds.push(Cell::Text(match b {
            Backend::Sqlite if field.is_none() => fts5_query(t),
            Backend::Sqlite => t.to_lowercase(),
            Backend::Postgres => t.clone(),
        }));
        let n = binds.len();
        wheres.push(match (b, field) {
            (Backend::Postgres, None) => {
                format!("_full_text @@ plainto_tsquery('english', ${n})")
            }
            (Backend::Postgres, Some(f)) => format!(
                "to_tsvector('english', CAST({} AS text)) @@ plainto_tsquery('english', ${n})",
                quote(f)
            ),
            (Backend::Sqlite, None) => {
                let fts = quote(&format!("{}_fts", meta.name));
                format!("_id IN (SELECT rowid FROM {fts} WHERE {fts} MATCH ${n})")
            }
            (Backend::Sqlite, Some(f)) => {
                format!("instr(lower(CAST({} AS TEXT)), ${n}) > 0", quote(f))
            }
        });
    }
    if let Some(after) = after {
        binds.push(Cell::Int(after));
        wheres.push(format!("_id > ${}", binds.len()));
    }
    let where_sql = if wheres.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", wheres.join(" AND "))
    };
    // ORDER BY.
    let mut order = Vec::new();
    if let Some(v) = p.sort.as_ref().filter(|v| !v.is_null()) {
        for clause in list_or_csv(v) {
            match sort_clause(&meta, &clause) {
                Some(c) => order.push(c),
                None => return Err(verr("sort", format!("invalid value \"{clause}\""))),
            }
        }
    } else if !distinct {
        order.push("_id ASC".to_string());
    }
    let t = meta.qualified(b);
    // The rows are chosen (filters, distinct) by an inner query over the stored columns and
    // ordered outside it by those columns: the output is every value as text, under names
    // that cannot shadow a column the order names. Without `distinct` the page is first
    // chosen by `_id` alone (`LIMIT`/`OFFSET` over the keys, an index-only scan where the
    // order allows), so only the rows returned are read whole and turned into text, however
    // deep the offset.
    let filtered = format!("SELECT * FROM {t}{where_sql}");
    let skip = offset.unwrap_or(0);
    let (inner, page) = if distinct {
        let raw: Vec<String> = chosen
            .iter()
            .map(|(n, _)| {
                if n == "_id" {
                    "_id".to_string()
                } else {
                    quote(n)
                }
            })
            .collect();
        (
            format!("SELECT DISTINCT {} FROM {t}{where_sql}", raw.join(", ")),
            format!(" LIMIT {limit} OFFSET {skip}"),
        )
    } else {
        let key_order = if order.is_empty() {
            String::new()
        } else {
            format!(" ORDER BY {}", order.join(", "))
        };
        (
            format!(
                "SELECT r.* FROM {t} AS r JOIN (SELECT _id FROM {t}{where_sql}{key_order} LIMIT {limit} OFFSET {skip}) AS k ON r._id = k._id"
            ),
            String::new(),
        )
    };
    let cols: Vec<String> = chosen
        .iter()
        .enumerate()
        .map(|(i, (n, _))| {
            let col = if n == "_id" {
                "x._id".to_string()
            } else {
                format!("x.{}", quote(n))
            };
            format!("{} AS c{i}", table::select_expr(b, &col))
        })
        .collect();
    let order: Vec<String> = order
        .iter()
        .map(|o| {
            if o.starts_with('"') || o.starts_with("_id") {
                format!("x.{o}")
            } else {
                o.clone()
            }
        })
        .collect();
    let sql = format!(
        "SELECT {} FROM ({inner}) AS x{}{page}",
        cols.join(", "),
        if order.is_empty() {
            String::new()
        } else {
            format!(" ORDER BY {}", order.join(", "))
        },
    );
    let mut query = sqlx::query(&sql);
    for c in binds.clone() {
        query = table::bind(query, c);
    }
    let rows = query.fetch_all(ctx.db().await?).await.map_err(|e| {
        tracing::debug!("datastore_search: {e}");
        let mut errs = validation();
        errs.push("query", "Invalid query");
        errs.build()
    })?;
    let int8 = parse_type("int8").expect("int8");
    let values: Vec<Vec<Value>> = rows
        .iter()
        .map(|r| {
            chosen
                .iter()
                .enumerate()
                .map(|(i, (_, f))| {
                    let t = f.map_or(&int8, |f| &f.ftype);
                    types::from_text(t, r.try_get::<Option<String>, _>(i).ok().flatten())
                })
                .collect()
        })
        .collect();
    let records = match records_format.as_str() {
        "objects" => Value::Array(
            values
                .into_iter()
                .map(|row| Value::Object(chosen.iter().map(|(n, _)| n.clone()).zip(row).collect()))
                .collect(),
        ),
        "lists" => json!(values),
        fmt => {
            let sep = if fmt == "csv" { ',' } else { '\t' };
            let mut out = String::new();
            for row in values {
                let line: Vec<String> = row.iter().map(|v| csv_field(v, sep)).collect();
                out.push_str(&line.join(&sep.to_string()));
                out.push('\n');
            }
            Value::String(out)
        }
    };
    let mut out = serde_json::Map::new();
    out.insert("include_total".into(), json!(include_total));
    out.insert("resource_id".into(), res["id"].clone());
    out.insert(
        "fields".into(),
        Value::Array(
            chosen
                .iter()
                .map(|(n, f)| match f {
                    Some(f) => f.to_json(),
                    None => json!({"id": n, "type": "int"}),
                })
                .collect(),
        ),
    );
    out.insert("records_format".into(), json!(records_format));
    out.insert("records".into(), records);
    out.insert("limit".into(), json!(limit));
    if let Some(o) = offset {
        out.insert("offset".into(), json!(o));
    }
    for (k, v) in [
        ("filters", &filters),
        ("q", &q),
        ("sort", &p.sort),
        ("distinct", &p.distinct),
    ] {
        if let Some(v) = v.as_ref().filter(|v| !v.is_null()) {
            out.insert(k.into(), v.clone());
        }
    }
    out.insert(
        "total_estimation_threshold".into(),
        p.total_estimation_threshold.clone().unwrap_or(Value::Null),
    );
    out.insert("_links".into(), links(&res, &p, limit, offset.unwrap_or(0)));
    if include_total {
        let count_sql = if distinct {
            format!("SELECT COUNT(*) AS n FROM ({inner}) AS x")
        } else {
            format!("SELECT COUNT(*) AS n FROM ({filtered}) AS x")
        };
        let mut cq = sqlx::query(&count_sql);
        for c in binds {
            cq = table::bind(cq, c);
        }
        let total: i64 = cq
            .fetch_one(ctx.db().await?)
            .await
            .map_err(|_| verr("query", "Invalid query"))?
            .try_get("n")?;
        out.insert("total".into(), json!(total));
        out.insert("total_was_estimated".into(), json!(false));
    }
    Ok(Value::Object(out))
}

/// CKAN's `_links`: this search's first and next pages as relative URLs (built from the
/// parameters, so a link works whether the search came as GET or as a JSON body).
fn links(res: &Value, p: &DatastoreSearchParams, limit: i64, offset: i64) -> Value {
    let mut pairs: Vec<(String, String)> = vec![("resource_id".into(), text(&res["id"]))];
    for (k, v) in [
        ("filters", &p.filters),
        ("q", &p.q),
        ("fields", &p.fields),
        ("sort", &p.sort),
        ("distinct", &p.distinct),
        ("records_format", &p.records_format),
    ] {
        if let Some(v) = v.as_ref().filter(|v| !v.is_null()) {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Array(items) => items.iter().map(text).collect::<Vec<_>>().join(","),
                other => other.to_string(),
            };
            pairs.push((k.into(), s));
        }
    }
    if p.limit.is_some() {
        pairs.push(("limit".into(), limit.to_string()));
    }
    let url = |extra: Option<i64>| {
        let mut s = form_urlencoded::Serializer::new(String::new());
        for (k, v) in &pairs {
            s.append_pair(k, v);
        }
        if let Some(o) = extra {
            s.append_pair("offset", &o.to_string());
        }
        format!("/api/3/action/datastore_search?{}", s.finish())
    };
    let mut links = serde_json::Map::new();
    links.insert("start".into(), json!(url(None)));
    links.insert("next".into(), json!(url(Some(offset + limit))));
    if offset - limit > 0 {
        links.insert("prev".into(), json!(url(Some(offset - limit))));
    }
    Value::Object(links)
}
