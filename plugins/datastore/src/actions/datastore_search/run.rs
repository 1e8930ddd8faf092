//! The third step of a search: the page's query run and its text read back as typed
//! values, and (with `include_total`) the count run.

use catalog_framework::prelude::*;
use sqlx::Row;

use super::parse::Request;
use super::plan::Plan;
use crate::actions::common::verr;
use crate::table;
use crate::types::{self, parse_type};

/// What a search found.
pub(super) struct Found {
    /// The rows of the page, a value for each output column.
    pub(super) values: Vec<Vec<Value>>,
    /// The count of every row that matches, when asked for.
    pub(super) total: Option<i64>,
}

/// Runs the plan's queries; a query the store refuses is CKAN's `Invalid query`.
pub(super) async fn run(
    ctx: &mut ActionContext,
    plan: &Plan,
    req: &Request<'_>,
) -> CkanResult<Found> {
    let mut query = sqlx::query(&plan.sql);
    for c in plan.binds.clone() {
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
            req.chosen
                .iter()
                .enumerate()
                .map(|(i, (_, f))| {
                    let t = f.map_or(&int8, |f| &f.ftype);
                    types::from_text(t, r.try_get::<Option<String>, _>(i).ok().flatten())
                })
                .collect()
        })
        .collect();
    let total = if req.include_total {
        let mut cq = sqlx::query(&plan.count_sql);
        for c in plan.binds.clone() {
            cq = table::bind(cq, c);
        }
        let total: i64 = cq
            .fetch_one(ctx.db().await?)
            .await
            .map_err(|_| verr("query", "Invalid query"))?
            .try_get("n")?;
        Some(total)
    } else {
        None
    };
    Ok(Found { values, total })
}
