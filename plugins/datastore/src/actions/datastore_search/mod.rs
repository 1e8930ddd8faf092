//! `datastore_search`: a resource's rows, filtered, searched, sorted and paged. In steps,
//! one file each: the paging, format and field parameters checked (`parse`), the filters,
//! full-text query and sort made into SQL (`plan`), the query and its count run (`run`), and
//! the answer built in CKAN's shape (`shape`).

mod params;
mod parse;
mod plan;
mod run;
mod shape;

use catalog_framework::prelude::*;

use super::common::{backend, readable, resource_id_of, verr};

pub(crate) use params::DatastoreSearchParams;
pub(crate) use parse::rows_max;
pub(crate) use shape::csv_field;

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
    let rid = resource_id_of(&p.id, &p.resource_id);
    let (res, meta) = readable(ctx, rid, "datastore_search", |id| {
        format!("Resource \"{id}\" was not found.")
    })
    .await?;
    if let Some(k) = p.__extras.keys().next() {
        return Err(verr("__extras", format!("invalid value \"{k}\"")));
    }
    let b = backend(ctx);
    let req = parse::parse(ctx, &p, &meta)?;
    let plan = plan::plan(&p, &meta, b, &req, after)?;
    let found = run::run(ctx, &plan, &req).await?;
    Ok(shape::shape(&res, &p, &req, &plan, found))
}
