//! A resource and the dataset document it lives in: what the view actions and the default
//! views both read.

use catalog_framework::prelude::*;
use catalog_framework::store as q;

/// An active resource by id: its dataset's id and the stored resource dict. `lock` (in the
/// writing actions) locks the dataset's row until the call commits (PostgreSQL: `FOR
/// UPDATE`; SQLite's write transaction excludes other writers anyway), so that concurrent
/// writers of one dataset's views (the next `order`, a reorder) run one after the other.
pub(crate) async fn find_resource(
    ctx: &mut ActionContext,
    id: &str,
    lock: bool,
) -> CkanResult<Option<(String, Map<String, Value>)>> {
    if id.is_empty() {
        return Ok(None);
    }
    let Some(pkg) = q::active_resource_package_id(ctx.db().await?, id).await? else {
        return Ok(None);
    };
    let row = if lock {
        ctx.package_for_update(&pkg).await?
    } else {
        ctx.package_row(&pkg).await?
    };
    let Some(row) = row else {
        return Ok(None);
    };
    let doc: Value = serde_json::from_str(&row.data)?;
    let resource = doc
        .get("resources")
        .and_then(Value::as_array)
        .and_then(|rs| {
            rs.iter()
                .find(|r| r.get("id").and_then(Value::as_str) == Some(id))
        })
        .and_then(Value::as_object)
        .cloned();
    Ok(resource.map(|r| (row.id, r)))
}

/// A dataset document's resources.
pub(crate) fn resources_of(doc: &Map<String, Value>) -> Vec<Map<String, Value>> {
    doc.get("resources")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_object().cloned())
        .collect()
}
