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

pub(crate) mod lex;
mod postgres;
mod sqlite;

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use catalog_framework::prelude::*;
use catalog_framework::store::Backend;
use sqlx::Row;

/// The longest SQL text accepted.
pub(crate) const MAX_SQL_BYTES: usize = 64 * 1024;

const DEFAULT_PG_FUNCTIONS: &str = include_str!("../../sql/allowed_functions_postgres.txt");
const DEFAULT_SQLITE_FUNCTIONS: &str = include_str!("../../sql/allowed_functions_sqlite.txt");

/// The SQL search's settings and its PostgreSQL pool, kept for the app's lifetime.
pub(crate) struct SqlSearch {
    pub(crate) enabled: bool,
    functions: Option<HashSet<String>>,
    pub(crate) timeout: Duration,
    pub(crate) max_bytes: usize,
    pub(crate) role: String,
    /// `work_mem_kb`: the memory a sort or hash of one query may use before it spills to disk
    /// (set per query).
    pub(crate) work_mem_kb: u64,
    /// `temp_file_limit_kb`: the temporary files one query may write (set on the reader role,
    /// which takes a superuser; refused otherwise with a warning).
    pub(crate) temp_file_limit_kb: u64,
    /// `catalog.datastore.sqlsearch.read_url`: how to connect as the reader role.
    pub(crate) read_url: Option<String>,
    pg: tokio::sync::OnceCell<sqlx::PgPool>,
    /// SQLite queries run on blocking threads: at most this many at once.
    sqlite_slots: std::sync::Arc<tokio::sync::Semaphore>,
}

fn sqlsearch_section(config: &Config) -> Option<&Value> {
    config
        .catalog
        .other
        .get("datastore")
        .and_then(|d| d.get("sqlsearch"))
}

/// A whole number setting (a number or its text).
fn number(section: Option<&Value>, key: &str) -> Option<u64> {
    let v = section?.get(key)?;
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

/// Whether `catalog.datastore.sqlsearch.enabled` is set.
pub(crate) fn enabled(config: &Config) -> bool {
    sqlsearch_section(config)
        .and_then(|s| s.get("enabled"))
        .is_some_and(|v| catalog_framework::params::truthy(Some(v)))
}

/// Names from an allow-list's text: words split by white space, `#` to the end of a line is a
/// comment; a name in double quotes is kept as written, else lower-cased.
fn parse_functions(text: &str) -> HashSet<String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or_default())
        .flat_map(str::split_whitespace)
        .map(
            |w| match w.strip_prefix('"').and_then(|w| w.strip_suffix('"')) {
                Some(quoted) => quoted.to_string(),
                None => w.to_ascii_lowercase(),
            },
        )
        .collect()
}

impl SqlSearch {
    /// Reads the settings; an unreadable allow-list file or a bad role name stops start-up.
    pub(crate) fn load(config: &Config) -> anyhow::Result<SqlSearch> {
        let section = sqlsearch_section(config);
        let functions_file = section
            .and_then(|s| s.get("allowed_functions_file"))
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_string);
        let functions = match &functions_file {
            Some(path) => Some(parse_functions(&std::fs::read_to_string(path).map_err(
                |e| {
                    anyhow::anyhow!(
                        "catalog.datastore.sqlsearch.allowed_functions_file {path}: {e}"
                    )
                },
            )?)),
            None => None,
        };
        let role = section
            .and_then(|s| s.get("role"))
            .and_then(Value::as_str)
            .unwrap_or("catalog_datastore_reader")
            .to_string();
        if role.is_empty()
            || role.len() > 63
            || !role
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            anyhow::bail!(
                "catalog.datastore.sqlsearch.role `{role}`: lower case letters, digits and `_` only"
            );
        }
        Ok(SqlSearch {
            enabled: enabled(config),
            functions,
            timeout: Duration::from_millis(
                number(section, "timeout_ms")
                    .unwrap_or(10_000)
                    .clamp(100, 600_000),
            ),
            max_bytes: number(section, "max_bytes")
                .unwrap_or(32 * 1024 * 1024)
                .clamp(1024, 1 << 30) as usize,
            role,
            work_mem_kb: number(section, "work_mem_kb")
                .unwrap_or(4096)
                .clamp(64, 1 << 20),
            temp_file_limit_kb: number(section, "temp_file_limit_kb")
                .unwrap_or(256 * 1024)
                .clamp(64, 1 << 30),
            read_url: section
                .and_then(|s| s.get("read_url"))
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .map(str::to_string),
            pg: tokio::sync::OnceCell::new(),
            sqlite_slots: std::sync::Arc::new(tokio::sync::Semaphore::new(2)),
        })
    }

    /// Whether the query may call `name` (as the lexer or the store reports it).
    pub(crate) fn allows_function(&self, backend: Backend, name: &str) -> bool {
        static PG: std::sync::OnceLock<HashSet<String>> = std::sync::OnceLock::new();
        static SQLITE: std::sync::OnceLock<HashSet<String>> = std::sync::OnceLock::new();
        let list = match (&self.functions, backend) {
            (Some(list), _) => list,
            (None, Backend::Postgres) => PG.get_or_init(|| parse_functions(DEFAULT_PG_FUNCTIONS)),
            (None, Backend::Sqlite) => {
                SQLITE.get_or_init(|| parse_functions(DEFAULT_SQLITE_FUNCTIONS))
            }
        };
        list.contains(&name.to_ascii_lowercase()) || list.contains(name)
    }
}

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

pub(crate) fn query_error(msg: impl Into<String>) -> CkanError {
    validation().field("query", msg).build()
}

/// What a run gives back: the fields (`id`, `type`) and the records, and whether either cap
/// cut them short.
pub(crate) struct Answer {
    pub(crate) fields: Vec<Value>,
    pub(crate) records: Vec<Value>,
    pub(crate) truncated: bool,
}

/// The statement the stores run: the user's (rewritten) SQL as CKAN wraps it, on lines of its
/// own so a trailing `--` comment cannot swallow the wrapper.
pub(crate) fn wrapped(sql: &str, rows: i64) -> String {
    format!("SELECT * FROM (\n{sql}\n) AS blah LIMIT {rows}")
}

/// Distinct table names a query may give (quoted or after FROM/JOIN), at most.
const MAX_TABLE_NAMES: usize = 1_000;

/// The tokens that may name a table, with the name: a quoted name anywhere; a bare one only
/// where a table is named (after FROM or JOIN), so an alias that is also a common word does
/// not change other queries. Only tokens before `end` (the trailing `;`s left out).
fn table_names<'t>(
    sql: &'t str,
    toks: &'t [lex::Token],
    end: usize,
) -> impl Iterator<Item = (&'t lex::Token, &'t str)> {
    toks.iter()
        .enumerate()
        .filter(move |(_, t)| t.span.end <= end)
        .filter_map(move |(i, t)| {
            let after_from = i.checked_sub(1).is_some_and(|p| {
                toks[p].kind == lex::Kind::Word && {
                    let w = &sql[toks[p].span.clone()];
                    w.eq_ignore_ascii_case("from") || w.eq_ignore_ascii_case("join")
                }
            });
            match &t.kind {
                lex::Kind::Quoted(n) => Some((t, n.as_str())),
                lex::Kind::Word if after_from => Some((t, &sql[t.span.clone()])),
                _ => None,
            }
        })
}

/// The internal table names of the resources the SQL names (by id or alias), and the SQL
/// with each name replaced; `tables` maps internal names back to those names (for messages).
async fn rewrite(
    ctx: &mut ActionContext,
    sql: &str,
    toks: &[lex::Token],
    backend: Backend,
) -> CkanResult<(String, BTreeMap<String, String>)> {
    // The statement without its trailing `;`s (it is wrapped in a subquery).
    let end = toks
        .iter()
        .rposition(|t| !t.is_op(sql, ";"))
        .map_or(0, |p| toks[p].span.end);
    let mut candidates: Vec<&str> = table_names(sql, toks, end)
        .map(|(_, n)| n)
        .filter(|n| !n.is_empty() && n.len() <= 100)
        .collect();
    candidates.sort_unstable();
    candidates.dedup();
    if candidates.len() > MAX_TABLE_NAMES {
        return Err(query_error(format!(
            "The query names more than {MAX_TABLE_NAMES} quoted names or tables"
        )));
    }
    let mut by_name: BTreeMap<String, String> = BTreeMap::new();
    for chunk in candidates.chunks(200) {
        let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("${i}")).collect();
        let marks = marks.join(", ");
        // Resource ids and aliases in one query (the same values serve both halves).
        let q = format!(
            "SELECT resource_id AS name, table_name FROM datastore_table WHERE resource_id IN ({marks}) \
             UNION ALL SELECT a.alias AS name, t.table_name AS table_name FROM datastore_alias a \
             JOIN datastore_table t ON t.resource_id = a.resource_id WHERE a.alias IN ({marks})"
        );
        let mut query = sqlx::query(&q);
        for c in chunk {
            query = query.bind(c.to_string());
        }
        for row in query.fetch_all(ctx.db().await?).await? {
            by_name.insert(row.try_get("name")?, row.try_get("table_name")?);
        }
    }
    let mut out = String::with_capacity(sql.len() + 64);
    let mut last = 0;
    for (t, name) in table_names(sql, toks, end) {
        if let Some(table) = by_name.get(name) {
            out.push_str(&sql[last..t.span.start]);
            out.push_str(&match backend {
                Backend::Postgres => format!("datastore.{}", crate::types::quote(table)),
                Backend::Sqlite => crate::types::quote(table),
            });
            last = t.span.end;
        }
    }
    out.push_str(&sql[last..end]);
    let tables = by_name.into_iter().map(|(n, t)| (t, n)).collect();
    Ok((out, tables))
}

/// The resource ids of internal table names the store reports (all must be DataStore
/// tables); `None` for a name that is not one.
async fn resources_of(
    ctx: &mut ActionContext,
    names: &[String],
) -> CkanResult<Result<Vec<String>, String>> {
    let mut out = Vec::new();
    for name in names {
        let id: Option<String> =
            sqlx::query("SELECT resource_id FROM datastore_table WHERE table_name = $1")
                .bind(name)
                .fetch_optional(ctx.db().await?)
                .await?
                .map(|r| r.try_get("resource_id"))
                .transpose()?;
        match id {
            Some(id) => out.push(id),
            None => return Ok(Err(name.clone())),
        }
    }
    Ok(Ok(out))
}

/// CKAN's `datastore_search_sql` auth: read access to every resource the query reads.
pub(crate) struct SqlAuth;

#[async_trait]
impl AuthFunction for SqlAuth {
    fn allow_anonymous(&self) -> bool {
        true
    }
    async fn check(&self, ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
        let ids: Vec<String> = data
            .get("resource_ids")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        for id in ids {
            let res = match ctx
                .call_ignoring_auth(
                    "resource_show",
                    Params::from_iter([("id".into(), json!(id))]),
                )
                .await
            {
                Ok(r) => r,
                Err(e) if e.kind == ErrorKind::NotFound => {
                    return Err(not_authorized("Not authorized to read resource."))
                }
                Err(e) => return Err(e),
            };
            let mut p = Params::new();
            p.insert("resource_id".into(), res["id"].clone());
            p.insert("package_id".into(), res["package_id"].clone());
            if !crate::dataset_allows(ctx, "package_show", &p).await? {
                return Err(not_authorized("Not authorized to read resource."));
            }
        }
        Ok(())
    }
}

/// Checks the caller may read the resources behind `tables` (internal names).
pub(crate) async fn check_tables(ctx: &mut ActionContext, tables: &[String]) -> CkanResult<()> {
    let ids = match resources_of(ctx, tables).await? {
        Ok(ids) => ids,
        Err(_) => return Err(not_authorized("Not authorized to read resource.")),
    };
    let mut p = Params::new();
    p.insert("resource_ids".into(), json!(ids));
    ctx.check_access("datastore_search_sql", &p).await
}

/// Replaces internal table names in a store's message with the resource ids they stand for.
pub(crate) fn unrename(msg: &str, tables: &BTreeMap<String, String>) -> String {
    let mut out = msg.replace("datastore.", "");
    for (table, id) in tables {
        out = out.replace(table, id);
    }
    out
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
    fn allow_lists_parse() {
        let set = parse_functions("# c\nabs Count  # x\n\"MixedCase\"\n");
        assert!(set.contains("abs") && set.contains("count") && set.contains("MixedCase"));
        assert!(!set.contains("x") && !set.contains("c"));
        let pg = parse_functions(DEFAULT_PG_FUNCTIONS);
        for bad in [
            "pg_sleep",
            "set_config",
            "pg_read_file",
            "query_to_xml",
            "dblink",
            "lo_import",
        ] {
            assert!(!pg.contains(bad), "{bad}");
        }
        let sqlite = parse_functions(DEFAULT_SQLITE_FUNCTIONS);
        for bad in [
            "load_extension",
            "randomblob",
            "zeroblob",
            "readfile",
            "writefile",
            "fts3_tokenizer",
        ] {
            assert!(!sqlite.contains(bad), "{bad}");
        }
    }

    #[test]
    fn the_wrapper_survives_a_trailing_comment() {
        let w = wrapped("select 1 -- note", 5);
        assert!(w.contains("-- note\n) AS blah LIMIT 5"));
    }
}
