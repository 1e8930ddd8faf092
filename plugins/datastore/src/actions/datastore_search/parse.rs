//! The first step of a search: the paging, format and field parameters checked, in CKAN's
//! order, into what the later steps read.

use catalog_framework::prelude::*;

use super::params::DatastoreSearchParams;
use crate::actions::common::{list_or_csv, text, truthy, verr};
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
    let limit = int_param(p.limit.as_ref(), "limit")?.unwrap_or(ROWS_DEFAULT);
    if limit < 0 {
        return Err(verr("limit", "Must be a natural number"));
    }
    let limit = limit.min(rows_max(ctx));
    let offset = int_param(p.offset.as_ref(), "offset")?;
    if let Some(o) = offset.filter(|o| *o < 0) {
        return Err(verr("offset", format!("invalid value \"{o}\"")));
    }
    let records_format = p
        .records_format
        .as_ref()
        .map(text)
        .unwrap_or_else(|| "objects".into());
    if !["objects", "lists", "csv", "tsv"].contains(&records_format.as_str()) {
        return Err(verr(
            "records_format",
            "Value must be one of ['objects', 'lists', 'csv', 'tsv']",
        ));
    }
    let include_total = p.include_total.as_ref().is_none_or(truthy);
    let distinct = p.distinct.as_ref().is_some_and(truthy);
    // The output fields.
    let all: Vec<(String, Option<&Field>)> = std::iter::once(("_id".to_string(), None))
        .chain(meta.fields.iter().map(|f| (f.id.clone(), Some(f))))
        .collect();
    let chosen: Vec<(String, Option<&Field>)> = match p.fields.as_ref().filter(|v| !v.is_null()) {
        Some(v) => {
            let mut out = Vec::new();
            for name in list_or_csv(v) {
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

fn int_param(v: Option<&Value>, key: &str) -> CkanResult<Option<i64>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| verr(key, "Invalid integer")),
        Some(v) => text(v)
            .trim()
            .parse::<i64>()
            .map(Some)
            .map_err(|_| verr(key, "Invalid integer")),
    }
}
