//! `datastore_upsert`: rows inserted, updated, or updated else inserted, matched on the
//! table's unique key or on `_id`; with `dry_run`, checked and run, then undone.

use std::borrow::Cow;

use catalog_framework::prelude::*;
use catalog_framework::store::Backend;
use catalog_framework::typed::{any_text, AnyText, Later, ParamType, Truthy};

use super::common::{
    backend, cells, check_records, insert_records, resource_id_of, row_error, text, verr, writable,
    Records,
};
use crate::params::Opt;
use crate::table::{self, Field, Meta};
use crate::types::{to_cell, Cell};

action_params! {
    /// Inserts, updates or upserts rows of a resource's DataStore table.
    ///
    /// `method`: `upsert` (the default: update the row with the record's key, else insert),
    /// `insert`, or `update` (the row must exist). The key is the table's `primary_key`, or
    /// `_id` when a record gives it. `dry_run`: check and run, then change nothing.
    pub struct DatastoreUpsertParams {
        /// the resource's id
        resource_id: Option<AnyText>,
        /// alias of resource_id
        id: Opt<AnyText>,
        /// the rows
        records: Later<Records>,
        /// upsert (default), insert or update
        method: Opt<Method>,
        /// write to a resource whose url_type is not datastore
        force: Option<Truthy>,
        /// run, then roll back
        dry_run: Option<Truthy>,
        /// accepted and ignored (the count is always exact)
        calculate_record_count: Option<Truthy>,
    }
}

/// The methods of an upsert.
const METHODS: [&str; 3] = ["upsert", "insert", "update"];

/// `method`: one of [`METHODS`] (a value as its text, so `null` is `""`, refused with the
/// others).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Method(pub String);

impl ParamType for Method {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        let s = any_text(v);
        if METHODS.contains(&s.as_str()) {
            Ok(Method(s))
        } else {
            Err("Value must be one of ['upsert', 'insert', 'update']".into())
        }
    }
    fn schema() -> Value {
        json!({"type": "string", "enum": METHODS})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

pub(crate) async fn datastore_upsert(
    ctx: &mut ActionContext,
    p: DatastoreUpsertParams,
) -> CkanResult<Value> {
    let method = p.method.0.as_ref().map_or("upsert", |Method(m)| m.as_str());
    let (res, meta) = writable(
        ctx,
        resource_id_of(&p.id, &p.resource_id),
        "datastore_upsert",
        p.force.is_some_and(|t| t.0),
    )
    .await?;
    let records = p.records.get()?.map(|Records(r)| r).unwrap_or_default();
    let b = backend(ctx);
    let dry_run = p.dry_run.is_some_and(|t| t.0);
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
            upsert_row(ctx, b, &meta, method, i, r).await?;
        }
    }
    let mut out = serde_json::Map::new();
    out.insert("resource_id".into(), res["id"].clone());
    if let Some(m) = &p.method.0 {
        out.insert("method".into(), m.to_value());
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

/// Writes record `i` of an update or upsert: checks its keys, updates the row its key
/// names, and (`upsert`) inserts it when there is none.
async fn upsert_row(
    ctx: &mut ActionContext,
    b: Backend,
    meta: &Meta,
    method: &str,
    i: usize,
    r: &Value,
) -> CkanResult<()> {
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
    let values: Vec<(&Field, Cell)> = cells(meta, i, r)?
        .into_iter()
        .filter(|(f, _)| !key_cols.contains(&f.id))
        .collect();
    let shown_key = key_cols.iter().map(|k| text(&m[k])).collect::<Vec<_>>();
    let changed = table::update_rows(ctx.db().await?, b, meta, key, values)
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
        let cs = cells(meta, i, r)?;
        table::insert_row(ctx.db().await?, b, meta, id, cs)
            .await
            .map_err(|e| row_error(&e, i))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog_framework::typed::ActionParams;

    #[test]
    fn the_method_is_one_of_three_and_null_is_the_default() {
        assert_eq!(
            Method::decode(&json!("update")).unwrap(),
            Method("update".into())
        );
        let decode = |v: Value| DatastoreUpsertParams::decode(v.as_object().cloned().unwrap());
        assert_eq!(decode(json!({})).unwrap().method, Opt(None));
        assert_eq!(decode(json!({"method": null})).unwrap().method, Opt(None));
        for bad in [json!(""), json!("UPSERT"), json!(1)] {
            let e = decode(json!({"method": bad})).unwrap_err();
            assert_eq!(
                e.to_error_object(),
                json!({"__type": "Validation Error",
                       "method": ["Value must be one of ['upsert', 'insert', 'update']"]})
            );
        }
    }
}
