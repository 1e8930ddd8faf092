use catalog_framework::prelude::*;
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

pub async fn package_list(ctx: &mut ActionContext, p: PackageListParams) -> CkanResult<Value> {
    let limit = p
        .limit
        .map(|l| l.0)
        .filter(|l| *l > 0)
        .unwrap_or(i64::MAX / 2);
    let offset = p.offset.map_or(0, |o| o.0);
    ctx.check_access("package_list", &p.__extras).await?;
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT name FROM package WHERE state = 'active' AND private = false ORDER BY name LIMIT $1 OFFSET $2",
    )
    .bind(limit)
    .bind(offset)
    .fetch_all(ctx.db().await?)
    .await?;
    Ok(json!(rows.into_iter().map(|r| r.0).collect::<Vec<_>>()))
}

/// Rows of visible datasets, newest change first (the database stands in for the search index).
async fn recent_rows(
    ctx: &mut ActionContext,
    limit: i64,
    offset: i64,
) -> CkanResult<Vec<PackageRow>> {
    let private_clause = if ctx.is_sysadmin() {
        ""
    } else {
        " AND private = false"
    };
    let sql = format!(
        "SELECT id FROM package WHERE state = 'active'{private_clause} ORDER BY metadata_modified DESC LIMIT $1 OFFSET $2"
    );
    let ids: Vec<(String,)> = sqlx::query_as(&sql)
        .bind(limit)
        .bind(offset)
        .fetch_all(ctx.db().await?)
        .await?;
    let mut out = Vec::new();
    for (id,) in ids {
        out.push(load(ctx, &id).await?);
    }
    Ok(out)
}

pub async fn current_package_list_with_resources(
    ctx: &mut ActionContext,
    p: Params,
) -> CkanResult<Value> {
    let limit = natural(&p, "limit")?;
    let page = positive(&p, "page")?;
    let offset = match (natural(&p, "offset")?, page, limit) {
        (Some(o), _, _) => o,
        (None, Some(pg), Some(l)) => (pg - 1) * l,
        _ => 0,
    };
    ctx.check_access("current_package_list_with_resources", &p)
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
