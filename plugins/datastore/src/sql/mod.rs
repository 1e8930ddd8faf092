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

use std::borrow::Cow;

use catalog_framework::prelude::*;
use catalog_framework::store::Backend;
use catalog_framework::typed::Field;

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
        /// a single SQL SELECT statement (at most 64 KiB)
        sql: SqlText,
    }
}

/// `sql`: required text (absent, null or blank is `Missing value`; a number or any other
/// value is `Must be a string`) of at most [`MAX_SQL_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SqlText(pub String);

impl Field for SqlText {
    fn from_field(v: Option<&Value>) -> Result<Self, Cow<'static, str>> {
        match v {
            Some(Value::String(s)) if !s.trim().is_empty() => {
                if s.len() > MAX_SQL_BYTES {
                    Err(format!("Must be at most {MAX_SQL_BYTES} bytes").into())
                } else {
                    Ok(SqlText(s.clone()))
                }
            }
            Some(Value::String(_)) | None | Some(Value::Null) => Err("Missing value".into()),
            Some(_) => Err("Must be a string".into()),
        }
    }
    fn is_blank(v: &Value) -> bool {
        catalog_framework::typed::blank_trimmed(v)
    }
    fn required() -> bool {
        true
    }
    fn schema() -> Value {
        json!({"type": "string"})
    }
    fn to_value(&self) -> Option<Value> {
        Some(json!(self.0))
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
    let SqlText(sql) = p.sql;
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
    fn sql_is_required_text_of_a_bounded_length() {
        use catalog_framework::typed::ActionParams;
        let decode = |v: Value| {
            DatastoreSearchSqlParams::decode(v.as_object().cloned().unwrap())
                .map(|p| p.sql.0)
                .map_err(|e| e.to_error_object()["sql"][0].clone())
        };
        assert_eq!(decode(json!({"sql": "select 1"})), Ok("select 1".into()));
        for missing in [json!({}), json!({"sql": null}), json!({"sql": " "})] {
            assert_eq!(decode(missing), Err(json!("Missing value")));
        }
        assert_eq!(decode(json!({"sql": 1})), Err(json!("Must be a string")));
        assert_eq!(
            decode(json!({"sql": "x".repeat(MAX_SQL_BYTES + 1)})),
            Err(json!("Must be at most 65536 bytes"))
        );
        assert_eq!(
            DatastoreSearchSqlParams::schema()["required"],
            json!(["sql"])
        );
    }

    #[test]
    fn the_wrapper_survives_a_trailing_comment() {
        let w = wrapped("select 1 -- note", 5);
        assert!(w.contains("-- note\n) AS blah LIMIT 5"));
    }
}
