//! The second step of a search: `filters`, the full-text query (`q`, `full_text`) and `sort`
//! checked and made into the SQL of the page and of its count, with the values to bind.

use catalog_framework::prelude::*;
use catalog_framework::store::Backend;
use catalog_framework::typed::{CsvList, ParamType};

use super::params::{DatastoreSearchParams, FilterSpec, TextQuery};
use super::parse::Request;
use crate::actions::common::verr;
use crate::table::{self, Meta};
use crate::types::{quote, Cell};

/// The SQL a search runs.
pub(super) struct Plan {
    /// `filters` and `q` as read (a query string's JSON parsed), echoed in the answer.
    pub(super) filters: Option<Value>,
    pub(super) q: Option<Value>,
    /// The page: column `c<i>` is the text of output column `i`.
    pub(super) sql: String,
    /// The count of every row that matches (`n`).
    pub(super) count_sql: String,
    /// The values of both queries' placeholders.
    pub(super) binds: Vec<Cell>,
}

/// Checks `filters`, `q`, `full_text` and `sort` (in that order) and makes the SQL;
/// `after`: only rows whose `_id` is above it.
pub(super) fn plan(
    p: &DatastoreSearchParams,
    meta: &Meta,
    b: Backend,
    req: &Request<'_>,
    after: Option<i64>,
) -> CkanResult<Plan> {
    // WHERE: filters, then the full-text query.
    let mut binds = Vec::new();
    let filters = p.filters.get()?.map(|FilterSpec(f)| f);
    let mut wheres = match &filters {
        None => Vec::new(),
        Some(f) => crate::filters::where_clauses(f, meta, b, &mut binds)?,
    };
    let q = p.q.get()?;
    for (field, t) in &text_queries(p, meta, q.as_ref())? {
        wheres.push(text_condition(meta, b, field.as_deref(), t, &mut binds));
    }
    if let Some(after) = after {
        binds.push(Cell::Int(after));
        wheres.push(format!("_id > ${}", binds.len()));
    }
    let where_sql = if wheres.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", wheres.join(" AND "))
    };
    let order = order(p, meta, req.distinct)?;
    let (sql, count_sql) = select(meta, b, req, &where_sql, &order);
    Ok(Plan {
        filters,
        q: q.as_ref().map(TextQuery::to_value),
        sql,
        count_sql,
        binds,
    })
}

/// The full-text queries: `q` (a text over every field, or {field: text}), then `full_text`;
/// each with its field (`None`: every field).
fn text_queries(
    p: &DatastoreSearchParams,
    meta: &Meta,
    q: Option<&TextQuery>,
) -> CkanResult<Vec<(Option<String>, String)>> {
    let mut texts: Vec<(Option<String>, String)> = Vec::new();
    match q {
        Some(TextQuery::Text(s)) if !s.trim().is_empty() => texts.push((None, s.clone())),
        Some(TextQuery::Fields(m)) => {
            for (k, v) in m {
                let Some(f) = meta.field(k) else {
                    return Err(verr("q", format!("invalid value \"{k}\"")));
                };
                let Value::String(s) = v else {
                    return Err(verr("q", format!("invalid value \"{k}\"")));
                };
                texts.push((Some(f.id.clone()), s.clone()));
            }
        }
        _ => {}
    }
    if let Some(ft) = p.full_text.as_ref().filter(|t| !t.0.trim().is_empty()) {
        texts.push((None, ft.0.clone()));
    }
    Ok(texts)
}

/// The condition of one full-text query on the store (PostgreSQL's `tsvector`s, SQLite's
/// FTS5 index or a substring), its text pushed to `binds`.
fn text_condition(
    meta: &Meta,
    b: Backend,
    field: Option<&str>,
    t: &str,
    binds: &mut Vec<Cell>,
) -> String {
    binds.push(Cell::Text(match b {
        Backend::Sqlite if field.is_none() => fts5_query(t),
        Backend::Sqlite => t.to_lowercase(),
        Backend::Postgres => t.to_string(),
    }));
    let n = binds.len();
    match (b, field) {
        (Backend::Postgres, None) => {
            format!("_full_text @@ plainto_tsquery('english', ${n})")
        }
        (Backend::Postgres, Some(f)) => format!(
            "to_tsvector('english', CAST({} AS text)) @@ plainto_tsquery('english', ${n})",
            quote(f)
        ),
        (Backend::Sqlite, None) => {
            let fts = quote(&format!("{}_fts", meta.name));
            format!("_id IN (SELECT rowid FROM {fts} WHERE {fts} MATCH ${n})")
        }
        (Backend::Sqlite, Some(f)) => {
            format!("instr(lower(CAST({} AS TEXT)), ${n}) > 0", quote(f))
        }
    }
}

/// The words of a full-text query, each quoted for FTS5 (AND of the words).
fn fts5_query(q: &str) -> String {
    q.split_whitespace()
        .take(32)
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The ORDER BY clauses: `sort`'s, else `_id` (none for a `distinct` search).
fn order(p: &DatastoreSearchParams, meta: &Meta, distinct: bool) -> CkanResult<Vec<String>> {
    let mut order = Vec::new();
    if let Some(CsvList(clauses)) = p.sort.get()? {
        for clause in clauses {
            match sort_clause(meta, &clause) {
                Some(c) => order.push(c),
                None => return Err(verr("sort", format!("invalid value \"{clause}\""))),
            }
        }
    } else if !distinct {
        order.push("_id ASC".to_string());
    }
    Ok(order)
}

/// One sort clause: `field [asc|desc] [nulls first|last]`, the field possibly quoted.
fn sort_clause(meta: &Meta, clause: &str) -> Option<String> {
    let c = clause.trim();
    let lower = c.to_ascii_lowercase();
    let (rest, nulls) = if let Some(at) = lower.rfind(" nulls ") {
        let tail = lower[at + 7..].trim().to_string();
        if tail != "first" && tail != "last" {
            return None;
        }
        (c[..at].trim(), Some(tail))
    } else {
        (c, None)
    };
    let lower_rest = rest.to_ascii_lowercase();
    let (field, dir) = if lower_rest.ends_with(" desc") {
        (rest[..rest.len() - 5].trim(), "DESC")
    } else if lower_rest.ends_with(" asc") {
        (rest[..rest.len() - 4].trim(), "ASC")
    } else {
        (rest, "ASC")
    };
    let field = field
        .strip_prefix('"')
        .and_then(|f| f.strip_suffix('"'))
        .unwrap_or(field);
    let col = if field == "_id" {
        "_id".to_string()
    } else {
        quote(&meta.field(field)?.id)
    };
    Some(match nulls {
        Some(n) => format!("{col} {dir} NULLS {}", n.to_ascii_uppercase()),
        None => format!("{col} {dir}"),
    })
}

/// The page's SQL and the count's.
///
/// The rows are chosen (filters, distinct) by an inner query over the stored columns and
/// ordered outside it by those columns: the output is every value as text, under names
/// that cannot shadow a column the order names. Without `distinct` the page is first
/// chosen by `_id` alone (`LIMIT`/`OFFSET` over the keys, an index-only scan where the
/// order allows), so only the rows returned are read whole and turned into text, however
/// deep the offset.
fn select(
    meta: &Meta,
    b: Backend,
    req: &Request<'_>,
    where_sql: &str,
    order: &[String],
) -> (String, String) {
    let (chosen, limit, distinct) = (&req.chosen, req.limit, req.distinct);
    let t = meta.qualified(b);
    let filtered = format!("SELECT * FROM {t}{where_sql}");
    let skip = req.offset.unwrap_or(0);
    let (inner, page) = if distinct {
        let raw: Vec<String> = chosen
            .iter()
            .map(|(n, _)| {
                if n == "_id" {
                    "_id".to_string()
                } else {
                    quote(n)
                }
            })
            .collect();
        (
            format!("SELECT DISTINCT {} FROM {t}{where_sql}", raw.join(", ")),
            format!(" LIMIT {limit} OFFSET {skip}"),
        )
    } else {
        let key_order = if order.is_empty() {
            String::new()
        } else {
            format!(" ORDER BY {}", order.join(", "))
        };
        (
            format!(
                "SELECT r.* FROM {t} AS r JOIN (SELECT _id FROM {t}{where_sql}{key_order} LIMIT {limit} OFFSET {skip}) AS k ON r._id = k._id"
            ),
            String::new(),
        )
    };
    let cols: Vec<String> = chosen
        .iter()
        .enumerate()
        .map(|(i, (n, _))| {
            let col = if n == "_id" {
                "x._id".to_string()
            } else {
                format!("x.{}", quote(n))
            };
            format!("{} AS c{i}", table::select_expr(b, &col))
        })
        .collect();
    let order: Vec<String> = order
        .iter()
        .map(|o| {
            if o.starts_with('"') || o.starts_with("_id") {
                format!("x.{o}")
            } else {
                o.clone()
            }
        })
        .collect();
    let sql = format!(
        "SELECT {} FROM ({inner}) AS x{}{page}",
        cols.join(", "),
        if order.is_empty() {
            String::new()
        } else {
            format!(" ORDER BY {}", order.join(", "))
        },
    );
    let count_sql = if distinct {
        format!("SELECT COUNT(*) AS n FROM ({inner}) AS x")
    } else {
        format!("SELECT COUNT(*) AS n FROM ({filtered}) AS x")
    };
    (sql, count_sql)
}
