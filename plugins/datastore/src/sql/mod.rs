//! `datastore_search_sql`: one read-only SELECT over the DataStore tables of resources the
//! caller may read, when `catalog.datastore.sqlsearch.enabled` is set (CKAN leaves the action
//! out otherwise, and so do we: it answers as an unknown action).
//!
//! The guards, in order (docs/DATASTORE.md "SQL search"):
//! 1. The text: at most [`MAX_SQL_BYTES`], no NUL, lexed as the store lexes it; one statement
//!    only ("Query is not a single statement."), balanced parentheses (so nothing closes the
//!    wrapper around it), and every function it calls on the allow-list
//!    (`catalog.datastore.sqlsearch.allowed_functions_file`, else our list per store).
//! 2. Quoted resource ids become the tables' internal names; the query is wrapped as CKAN does,
//!    `SELECT * FROM (…) AS blah LIMIT rows_max + 1`.
//! 3. The store says which tables the query reads — PostgreSQL's plan (`EXPLAIN`), SQLite's
//!    authorizer — and each must be a DataStore table of a resource the caller may read;
//!    system tables answer "Not authorized to access system tables", and the catalog's own
//!    tables (users, tokens) are not visible at all.
//! 4. It runs read-only with a deadline: PostgreSQL in a `READ ONLY` transaction as a role that
//!    may only SELECT in the schema `datastore`, with `statement_timeout`; SQLite on a
//!    read-only connection whose authorizer allows reads of the checked tables and the listed
//!    functions only, with a progress handler that stops it at the deadline and length limits.
//! 5. The answer is capped: `rows_max` rows (then `records_truncated`), and
//!    `catalog.datastore.sqlsearch.max_bytes` of rows (PostgreSQL measures each row before it
//!    is sent).
//!
//! This file holds the action; the guards and the runs are in `lex.rs` (the text),
//! `tables.rs` (the names, the tables read and its auth), `settings.rs`, and `postgres.rs` /
//! `sqlite.rs` (one run per store, each giving an `answer.rs` answer).

mod answer;
pub(crate) mod lex;
mod postgres;
mod settings;
mod sqlite;
mod tables;

use catalog_framework::prelude::*;
use catalog_framework::store::Backend;

use answer::{query_error, Answer};
pub(crate) use settings::{enabled, SqlSearch};
use tables::rewrite;
pub(crate) use tables::SqlAuth;

/// The longest SQL text accepted.
pub(crate) const MAX_SQL_BYTES: usize = 64 * 1024;

action_params! {
    /// Runs one SQL SELECT over the DataStore (when catalog.datastore.sqlsearch.enabled).
    ///
    /// Tables are named by their resource ids, in double quotes:
    /// `SELECT * FROM "<resource id>" WHERE …`. Only resources the caller may read, only the
    /// allowed functions; at most catalog.datastore.search.rows_max rows (then
    /// `records_truncated` is true), stopped after catalog.datastore.sqlsearch.timeout_ms.
    pub struct DatastoreSearchSqlParams {
        /// a single SQL SELECT statement
        sql: Option<Value>,
    }
}

/// The statement the stores run: the user's (rewritten) SQL as CKAN wraps it, on lines of its
/// own so a trailing `--` comment cannot swallow the wrapper.
pub(crate) fn wrapped(sql: &str, rows: i64) -> String {
    format!("SELECT * FROM (\n{sql}\n) AS blah LIMIT {rows}")
}

pub(crate) async fn datastore_search_sql(
    ctx: &mut ActionContext,
    p: DatastoreSearchSqlParams,
) -> CkanResult<Value> {
    let sql = match &p.sql {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::String(_)) | None | Some(Value::Null) => return Err(missing("sql")),
        Some(_) => return Err(validation().field("sql", "Must be a string").build()),
    };
    if sql.len() > MAX_SQL_BYTES {
        return Err(validation()
            .field("sql", format!("Must be at most {MAX_SQL_BYTES} bytes"))
            .build());
    }
    let app = ctx.app.clone();
    let Some(search) = app.extension::<SqlSearch>().filter(|s| s.enabled) else {
        return Err(query_error("The SQL search is not enabled"));
    };
    let backend = ctx.app.store.backend;
    let toks = lex::lex(&sql, backend).map_err(query_error)?;
    if !lex::single_statement(&sql, &toks) {
        return Err(query_error("Query is not a single statement."));
    }
    if !lex::balanced(&sql, &toks) {
        return Err(query_error("The query's parentheses do not balance"));
    }
    // PostgreSQL runs what the plan names: its functions are checked before it plans (planning
    // folds constant calls). SQLite's authorizer checks every call itself.
    if backend == Backend::Postgres {
        for f in lex::called_functions(&sql, &toks) {
            if !search.allows_function(backend, &f) {
                return Err(not_authorized(format!(
                    "Not authorized to call function {f}"
                )));
            }
        }
    }
    let (rewritten, tables) = rewrite(ctx, &sql, &toks, backend).await?;
    let rows_max = crate::actions::rows_max(ctx);
    let statement = wrapped(&rewritten, rows_max + 1);
    let answer = match backend {
        Backend::Postgres => postgres::run(ctx, search, &sql, &statement, &tables).await?,
        Backend::Sqlite => sqlite::run(ctx, search, &statement, &tables).await?,
    };
    let Answer {
        fields,
        mut records,
        mut truncated,
    } = answer;
    if records.len() as i64 > rows_max {
        records.truncate(rows_max as usize);
        truncated = true;
    }
    let mut out = serde_json::Map::new();
    out.insert("sql".into(), json!(sql));
    out.insert("records".into(), Value::Array(records));
    out.insert("fields".into(), Value::Array(fields));
    if truncated {
        out.insert("records_truncated".into(), json!(true));
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wrapper_survives_a_trailing_comment() {
        let w = wrapped("select 1 -- note", 5);
        assert!(w.contains("-- note\n) AS blah LIMIT 5"));
    }
}
