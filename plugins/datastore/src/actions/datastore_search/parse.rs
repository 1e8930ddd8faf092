//! The first step of a search: the paging, format and field parameters checked, in CKAN's
//! order, into what the later steps read.

use catalog_framework::prelude::*;
use catalog_framework::typed::CsvList;

use super::params::{DatastoreSearchParams, Limit, Offset, RecordsFormat};
use crate::actions::common::verr;
use crate::table::{Field, Meta};

/// Rows a search returns unless `limit` says otherwise, and at most
/// (`catalog.datastore.search.rows_max`).
const ROWS_DEFAULT: i64 = 100;
const ROWS_MAX: i64 = 32_000;

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

/// The checked parameters of a search.
pub(super) struct Request<'m> {
    /// The rows asked for, at most `rows_max`.
    pub(super) limit: i64,
    pub(super) offset: Option<i64>,
    /// objects, lists, csv or tsv.
    pub(super) records_format: String,
    pub(super) include_total: bool,
    pub(super) distinct: bool,
    /// The output columns in order: `_id` (no field) or a field of the table.
    pub(super) chosen: Vec<(String, Option<&'m Field>)>,
}

/// Checks `limit`, `offset`, `records_format`, `include_total`, `distinct` and `fields`.
pub(super) fn parse<'m>(
    ctx: &ActionContext,
    p: &DatastoreSearchParams,
    meta: &'m Meta,
) -> CkanResult<Request<'m>> {
    let limit = p.limit.get()?.map_or(ROWS_DEFAULT, |Limit(n)| n);
    let limit = limit.min(rows_max(ctx));
    let offset = p.offset.get()?.map(|Offset(o)| o);
    let records_format = p
        .records_format
        .get()?
        .map_or_else(|| "objects".into(), |RecordsFormat(f)| f);
    let include_total = p.include_total.0.is_none_or(|t| t.0);
    let distinct = p.distinct.get()?.is_some_and(|t| t.0);
    // The output fields.
    let all: Vec<(String, Option<&Field>)> = std::iter::once(("_id".to_string(), None))
        .chain(meta.fields.iter().map(|f| (f.id.clone(), Some(f))))
        .collect();
    let chosen: Vec<(String, Option<&Field>)> = match p.fields.get()? {
        Some(CsvList(names)) => {
            let mut out = Vec::new();
            for name in names {
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
    Ok(Request {
        limit,
        offset,
        records_format,
        include_total,
        distinct,
        chosen,
    })
}
