use catalog_framework::prelude::*;
use catalog_framework::store;
use catalog_framework::store::PackageRow;

use super::{load, show_row};

action_params! {
    /// Return the names of the site's active public datasets.
    ///
    /// :param limit: optional
    /// :param offset: optional
    pub struct PackageListParams {
        /// at most this many names (0 or absent: all)
        limit: Option<Natural>,
        /// skip this many names
        offset: Option<Natural>,
    }
}

pub(crate) async fn package_list(
    ctx: &mut ActionContext,
    p: PackageListParams,
) -> CkanResult<Value> {
    let limit = p
        .limit
        .map(|l| l.0)
        .filter(|l| *l > 0)
        .unwrap_or(i64::MAX / 2);
    let offset = p.offset.map_or(0, |o| o.0);
    ctx.check_access("package_list", &p.__extras).await?;
    let names = store::public_package_names(ctx.db().await?, limit, offset).await?;
    Ok(json!(names))
}

/// Rows of visible datasets, newest change first (the database stands in for the search index).
async fn recent_rows(
    ctx: &mut ActionContext,
    limit: i64,
    offset: i64,
) -> CkanResult<Vec<PackageRow>> {
    let include_private = ctx.is_sysadmin();
    let ids = store::recently_modified_package_ids(ctx.db().await?, include_private, limit, offset)
        .await?;
    let mut out = Vec::new();
    for id in ids {
        out.push(load(ctx, &id).await?);
    }
    Ok(out)
}

action_params! {
    /// Return the most recently modified datasets with their resources.
    pub struct CurrentPackageListWithResourcesParams {
        /// the number of datasets (default 10, at most catalog.search.rows_max)
        limit: Option<Natural>,
        /// the page, from 1, of `limit` datasets (when `offset` is not given)
        page: Option<Positive>,
        /// the number of datasets to skip
        offset: Option<Natural>,
    }
}

pub(crate) async fn current_package_list_with_resources(
    ctx: &mut ActionContext,
    p: CurrentPackageListWithResourcesParams,
) -> CkanResult<Value> {
    let limit = p.limit.map(|l| l.0);
    let offset = match (p.offset, p.page, limit) {
        (Some(o), _, _) => o.0,
        (None, Some(pg), Some(l)) => (pg.0 - 1) * l,
        _ => 0,
    };
    ctx.check_access("current_package_list_with_resources", &p.__extras)
        .await?;
    let rows_max = ctx.config().catalog.search.rows_max;
    let limit = limit.filter(|l| *l > 0).unwrap_or(10).min(rows_max);
    let rows = recent_rows(ctx, limit, offset).await?;
    let mut out = Vec::new();
    for r in rows {
        out.push(show_row(ctx, &r).await?);
    }
    Ok(Value::Array(out))
}
