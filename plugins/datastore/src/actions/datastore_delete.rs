//! `datastore_delete` and `datastore_records_delete`, one implementation: a resource's table
//! dropped, or the rows that match `filters` deleted.

use catalog_framework::prelude::*;
use catalog_framework::store::Backend;

use super::common::{backend, set_active, verr, writable};
use crate::table::{self, Meta};
use crate::types::Cell;

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
