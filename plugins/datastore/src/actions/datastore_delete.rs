//! `datastore_delete` and `datastore_records_delete`, one implementation: a resource's table
//! dropped, or the rows that match `filters` deleted.

use std::borrow::Cow;

use catalog_framework::prelude::*;
use catalog_framework::store::Backend;
use catalog_framework::typed::{AnyText, Dict, Later, ParamType, Truthy};

use super::common::{backend, resource_id_of, set_active, verr, writable};
use crate::params::Opt;
use crate::table::{self, Meta};
use crate::types::Cell;

action_params! {
    /// Deletes a resource's DataStore table, or (with `filters`) the rows that match.
    pub struct DatastoreDeleteParams {
        /// the resource's id
        resource_id: Option<AnyText>,
        /// alias of resource_id
        id: Opt<AnyText>,
        /// delete the rows matching these {field: value} (a value may be a list); without
        /// it the whole table is deleted
        filters: Later<TableFilters>,
        /// write to a resource whose url_type is not datastore
        force: Option<Truthy>,
        /// accepted and ignored
        calculate_record_count: Option<Truthy>,
    }
}

/// `datastore_delete`'s `filters`: a dict, or null for the whole table (anything else is
/// `filters must be either a dict or null.`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TableFilters(pub Map<String, Value>);

impl ParamType for TableFilters {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match v {
            Value::Object(m) => Ok(TableFilters(m.clone())),
            _ => Err("filters must be either a dict or null.".into()),
        }
    }
    fn schema() -> Value {
        json!({"type": "object"})
    }
    fn to_value(&self) -> Value {
        Value::Object(self.0.clone())
    }
}

pub(crate) async fn datastore_delete(
    ctx: &mut ActionContext,
    p: DatastoreDeleteParams,
) -> CkanResult<Value> {
    let filters = p.filters.get()?.map(|TableFilters(f)| f);
    let rid = resource_id_of(&p.id, &p.resource_id);
    delete(ctx, rid, p.force.is_some_and(|t| t.0), filters).await
}

/// Drops the table of the resource `rid` (`filters` `None`) or deletes the rows that match.
async fn delete(
    ctx: &mut ActionContext,
    rid: Option<String>,
    force: bool,
    filters: Option<Map<String, Value>>,
) -> CkanResult<Value> {
    let (res, meta) = writable(ctx, rid, "datastore_delete", force).await?;
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
        resource_id: Option<AnyText>,
        /// alias of resource_id
        id: Opt<AnyText>,
        /// {field: value}; a value may be a list
        filters: Dict,
        /// write to a resource whose url_type is not datastore
        force: Option<Truthy>,
    }
}

pub(crate) async fn datastore_records_delete(
    ctx: &mut ActionContext,
    p: DatastoreRecordsDeleteParams,
) -> CkanResult<Value> {
    let rid = resource_id_of(&p.id, &p.resource_id);
    delete(ctx, rid, p.force.is_some_and(|t| t.0), Some(p.filters.0)).await
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

#[cfg(test)]
mod tests {
    use super::*;
    use catalog_framework::typed::ActionParams;

    #[test]
    fn filters_are_a_dict_or_null() {
        assert_eq!(TableFilters::decode(&json!({"a": 1})).unwrap().0["a"], 1);
        assert_eq!(
            TableFilters::decode(&json!([])).unwrap_err(),
            "filters must be either a dict or null."
        );
        let p =
            DatastoreDeleteParams::decode(json!({"filters": null}).as_object().cloned().unwrap())
                .unwrap();
        assert_eq!(p.filters.get().unwrap(), None);
        // `datastore_records_delete` needs them.
        let e = DatastoreRecordsDeleteParams::decode(Map::new()).unwrap_err();
        assert_eq!(
            e.to_error_object(),
            json!({"__type": "Validation Error", "filters": ["Missing value"]})
        );
    }
}
