//! The SQL search on PostgreSQL: a pool of its own (at most four queries at once) connected as
//! the reader role (USAGE on the schema `datastore` and SELECT on its tables, nothing else),
//! each query in a `READ ONLY` transaction with `statement_timeout` and an empty search path. The plan
//! (`EXPLAIN (VERBOSE, FORMAT JSON)` of the very statement that runs) names the tables and
//! table functions; the rows come back as JSON text, each measured before it is sent.

use std::collections::BTreeMap;
use std::time::Duration;

use catalog_framework::prelude::*;
use catalog_framework::store::Backend;
use futures::TryStreamExt;
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::{Column, Executor, Row, Statement, TypeInfo};

use super::answer::{query_error, Answer};
use super::settings::SqlSearch;
use super::tables::{check_tables, unrename};

/// The pool, made on first use, connected **as the reader role itself** (a LOGIN role with
/// SELECT on the schema `datastore` only), so nothing a query does — `set_config('role', …)`,
/// `RESET ROLE` — can reach the catalog's own login and tables. Its URL is
/// `catalog.datastore.sqlsearch.read_url` (CKAN's `ckan.datastore.read_url`), else the store's
/// with the role as the user (enough where local connections are trusted; elsewhere a DBA
/// gives the role a password and the operator sets the URL).
async fn pool<'a>(search: &'a SqlSearch, url: &str) -> CkanResult<&'a PgPool> {
    search
        .pg
        .get_or_try_init(|| async {
            // The role and its grants, made with the catalog's own login. Two processes (or
            // two test databases) may set up at once: a lost race is settled by a retry.
            let mut last = None;
            for _ in 0..3 {
                match setup_role(url, search).await {
                    Ok(()) => {
                        last = None;
                        break;
                    }
                    Err(e) => last = Some(e),
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            if let Some(e) = last {
                tracing::error!(error = %e, role = %search.role, "datastore_search_sql: cannot set up the reader role");
                return Err(query_error(format!(
                    "The SQL search is not available: the reader role {} could not be set up (see docs/DATASTORE.md)",
                    search.role
                )));
            }
            let opts: sqlx::postgres::PgConnectOptions = match &search.read_url {
                Some(read) => read.parse().map_err(internal)?,
                None => url
                    .parse::<sqlx::postgres::PgConnectOptions>()
                    .map_err(internal)?
                    .username(&search.role),
            };
            let pool = PgPoolOptions::new()
                .max_connections(4)
                .acquire_timeout(Duration::from_secs(5))
                .connect_with(opts)
                .await
                .map_err(|e| {
                    tracing::error!(error = %e, "datastore_search_sql: cannot connect as the reader role");
                    query_error(format!(
                        "The SQL search is not available: it cannot connect as {} (set catalog.datastore.sqlsearch.read_url; see docs/DATASTORE.md)",
                        search.role
                    ))
                })?;
            Ok(pool)
        })
        .await
}

/// Creates the reader role if it is missing (a LOGIN role without a password) and grants it
/// reading the DataStore schema (and the tables made there later), nothing else. Its
/// `temp_file_limit` bounds the disk one query may fill (a setting only a superuser may give a
/// role: without one the limit is left to the DBA, with a warning).
async fn setup_role(url: &str, search: &SqlSearch) -> Result<(), sqlx::Error> {
    use sqlx::Connection;
    let role = search.role.as_str();
    let mut conn = sqlx::PgConnection::connect(url).await?;
    let r = format!("\"{role}\"");
    conn.execute(
        format!(
            "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') THEN \
             CREATE ROLE {r} LOGIN; END IF; END $$"
        )
        .as_str(),
    )
    .await?;
    let can_login: bool = sqlx::query_scalar("SELECT rolcanlogin FROM pg_roles WHERE rolname = $1")
        .bind(role)
        .fetch_one(&mut conn)
        .await?;
    if !can_login {
        conn.execute(format!("ALTER ROLE {r} LOGIN").as_str())
            .await?;
    }
    conn.execute(
        format!(
            "GRANT USAGE ON SCHEMA datastore TO {r}; \
             ALTER DEFAULT PRIVILEGES IN SCHEMA datastore GRANT SELECT ON TABLES TO {r}; \
             GRANT SELECT ON ALL TABLES IN SCHEMA datastore TO {r}"
        )
        .as_str(),
    )
    .await?;
    let limit = format!(
        "ALTER ROLE {r} SET temp_file_limit = '{}kB'",
        search.temp_file_limit_kb
    );
    if let Err(e) = conn.execute(limit.as_str()).await {
        tracing::warn!(error = %e, role, "datastore_search_sql: cannot set the reader role's temp_file_limit (it takes a superuser); a query's temporary files are not bounded by the catalog (see docs/DATASTORE.md)");
    }
    conn.close().await.ok();
    Ok(())
}

/// The plan's keys that hold expressions as PostgreSQL prints them.
const EXPRESSION_KEYS: &[&str] = &[
    "Output",
    "Filter",
    "Join Filter",
    "Hash Cond",
    "Merge Cond",
    "Index Cond",
    "Recheck Cond",
    "One-Time Filter",
    "Function Call",
    "Table Function Call",
    "Sort Key",
    "Presorted Key",
    "Group Key",
    "Run Condition",
    "Cache Key",
    "Order By",
    "TID Cond",
    "Hash Key",
    "Sampling Parameters",
    "Repeatable Seed",
];

/// The tables, table functions and expressions a plan reads.
fn walk_plan(
    plan: &Value,
    tables: &mut Vec<(String, String)>,
    functions: &mut Vec<String>,
    expressions: &mut Vec<String>,
) {
    if let Some(name) = plan["Relation Name"].as_str() {
        let schema = plan["Schema"].as_str().unwrap_or_default().to_string();
        tables.push((schema, name.to_string()));
    }
    if let Some(f) = plan["Function Name"].as_str() {
        functions.push(f.to_string());
    }
    for key in EXPRESSION_KEYS {
        match &plan[*key] {
            Value::String(e) => expressions.push(e.clone()),
            Value::Array(items) => {
                expressions.extend(items.iter().filter_map(Value::as_str).map(str::to_string))
            }
            _ => {}
        }
    }
    if let Some(children) = plan["Plans"].as_array() {
        for c in children {
            walk_plan(c, tables, functions, expressions);
        }
    }
}

/// A store error as CKAN reports it: permission denied is 403, a cancelled statement "Query
/// took too long", anything else a validation error with PostgreSQL's message.
fn store_error(e: sqlx::Error, user_sql: &str, tables: &BTreeMap<String, String>) -> CkanError {
    match &e {
        sqlx::Error::Database(d) => match d.code().as_deref() {
            Some("42501") => not_authorized("Not authorized to read resource."),
            Some("57014") => query_error("Query took too long"),
            // 53400: past the role's temp_file_limit; 53100 disk full; 53200 out of memory.
            Some("53100") | Some("53200") | Some("53400") => {
                query_error("Query used too much memory or disk")
            }
            _ => {
                let msg = unrename(d.message(), tables);
                let mut errs = validation();
                errs.push("query", msg.clone());
                errs.set(
                    "info",
                    json!({"statement": [user_sql], "params": [{}], "orig": [msg]}),
                );
                errs.build()
            }
        },
        sqlx::Error::PoolTimedOut => query_error("Too many SQL searches at once; try again"),
        _ => internal(format!("datastore_search_sql: {e}")),
    }
}

/// CKAN's type names: PostgreSQL's `typname` (`int4`, `_text` for an array of text).
fn type_name(info: &sqlx::postgres::PgTypeInfo) -> String {
    let n = info.name().to_ascii_lowercase();
    match n.strip_suffix("[]") {
        Some(inner) => format!("_{inner}"),
        None => n,
    }
}

pub(super) async fn run(
    ctx: &mut ActionContext,
    search: &SqlSearch,
    user_sql: &str,
    statement: &str,
    tables: &BTreeMap<String, String>,
) -> CkanResult<Answer> {
    let url = ctx.app.store.url.clone();
    let pool = pool(search, &url).await?;
    let err = |e: sqlx::Error| store_error(e, user_sql, tables);
    let mut tx = pool.begin().await.map_err(err)?;
    let ms = search.timeout.as_millis();
    for setup in [
        "SET TRANSACTION READ ONLY".to_string(),
        format!("SET LOCAL statement_timeout = {ms}"),
        // A sort or hash past this spills to temporary files (bounded by the role's
        // temp_file_limit) instead of growing the backend.
        format!("SET LOCAL work_mem = '{}kB'", search.work_mem_kb),
        "SET LOCAL search_path = pg_catalog".to_string(),
        // The lexer reads '…' without backslash escapes, as PostgreSQL does with this on.
        "SET LOCAL standard_conforming_strings = on".to_string(),
        "SET LOCAL idle_in_transaction_session_timeout = 60000".to_string(),
    ] {
        tx.execute(setup.as_str()).await.map_err(err)?;
    }
    // What the statement reads, from its plan.
    let cap = search.max_bytes;
    let outer = format!(
        "SELECT CASE WHEN octet_length(j) <= {cap} THEN j END AS j, octet_length(j) AS n \
         FROM (SELECT row_to_json(r)::text AS j FROM ({statement}) AS r) AS s"
    );
    let plan_row = sqlx::query(&format!("EXPLAIN (VERBOSE, FORMAT JSON) {outer}"))
        .persistent(false)
        .fetch_one(&mut *tx)
        .await
        .map_err(err)?;
    let plan_text: String = plan_row.try_get_unchecked(0).map_err(internal)?;
    let plan: Value = serde_json::from_str(&plan_text)?;
    let mut read = Vec::new();
    let mut functions = Vec::new();
    let mut expressions = Vec::new();
    walk_plan(
        &plan[0]["Plan"],
        &mut read,
        &mut functions,
        &mut expressions,
    );
    // Every call PostgreSQL will make, as its plan prints it (so a call the text hid from the
    // lexer — attribute notation, a name the scanners read differently — is still seen).
    for e in &expressions {
        let toks = super::lex::lex(e, Backend::Postgres)
            .map_err(|_| query_error("The query could not be checked"))?;
        functions.extend(super::lex::called_functions(e, &toks));
    }
    if read.iter().any(|(schema, name)| {
        schema.starts_with("pg_") || schema == "information_schema" || name.starts_with("pg_")
    }) {
        return Err(not_authorized("Not authorized to access system tables"));
    }
    if read.iter().any(|(schema, _)| schema != "datastore") {
        return Err(not_authorized("Not authorized to read resource."));
    }
    let mut names: Vec<String> = read.into_iter().map(|(_, n)| n).collect();
    names.sort();
    names.dedup();
    check_tables(ctx, &names).await?;
    for f in functions {
        if !search.allows_function(Backend::Postgres, &f) {
            return Err(not_authorized(format!(
                "Not authorized to call function {f}"
            )));
        }
    }
    // The columns, then the rows.
    let described = (&mut *tx).prepare(statement).await.map_err(err)?;
    let fields: Vec<Value> = described
        .columns()
        .iter()
        .map(|c| json!({"id": c.name(), "type": type_name(c.type_info())}))
        .collect();
    let mut records = Vec::new();
    let mut total = 0usize;
    let mut truncated = false;
    {
        let mut rows = sqlx::query(&outer).persistent(false).fetch(&mut *tx);
        while let Some(row) = rows.try_next().await.map_err(err)? {
            let n: i32 = row.try_get("n").map_err(internal)?;
            let j: Option<String> = row.try_get("j").map_err(internal)?;
            total += n.max(0) as usize;
            let Some(j) = j.filter(|_| total <= cap) else {
                truncated = true;
                break;
            };
            records.push(serde_json::from_str::<Value>(&j)?);
        }
    }
    tx.rollback().await.map_err(err)?;
    Ok(Answer {
        fields,
        records,
        truncated,
    })
}
