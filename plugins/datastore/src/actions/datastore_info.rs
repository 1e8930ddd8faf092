//! `datastore_info`: a resource's table, its row count, fields and aliases.

use catalog_framework::prelude::*;
use sqlx::Row;

use catalog_framework::typed::AnyText;

use super::common::{backend, readable, resource_id_of};
use crate::params::Opt;
use crate::table;

action_params! {
    /// Returns a resource's DataStore table: its row count and its fields.
    pub struct DatastoreInfoParams {
        /// the resource's id
        resource_id: Option<AnyText>,
        /// alias of resource_id
        id: Opt<AnyText>,
    }
}

pub(crate) async fn datastore_info(
    ctx: &mut ActionContext,
    p: DatastoreInfoParams,
) -> CkanResult<Value> {
    let rid = resource_id_of(&p.id, &p.resource_id);
    let (res, meta) = readable(ctx, rid, "datastore_info", |id| {
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
