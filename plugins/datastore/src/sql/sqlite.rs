//! The SQL search on SQLite: a read-only connection of its own to the database file, whose
//! authorizer allows SELECT, reads of DataStore tables and calls of the listed functions, and
//! nothing else (no writes, no PRAGMA, no ATTACH, no system or catalog tables). Preparing
//! the statement once tells which tables it reads (then checked against the caller's rights);
//! the second preparation allows only those. A progress handler stops it at the deadline;
//! length limits bound what one value may grow to.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use catalog_framework::prelude::*;
use catalog_framework::store::Backend;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::limits::Limit;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use super::answer::{query_error, Answer};
use super::settings::SqlSearch;
use super::tables::{check_tables, unrename};

/// Why the authorizer said no (the first refusal).
#[derive(Debug, Clone)]
enum Refusal {
    System,
    Table(String),
    Function(String),
    Write,
}

/// A failure: the authorizer's refusal if it refused, and SQLite's error.
type Failure = (Option<Refusal>, rusqlite::Error);

/// What preparing the statement gave: the connection, what it reads, the database's tables.
type Discovered = (Connection, Seen, Arc<BTreeSet<String>>);

#[derive(Default)]
struct Seen {
    tables: BTreeSet<String>,
    refusal: Option<Refusal>,
}

/// A DataStore table's internal name: `ds_` and 32 hex digits (not its FTS shadow tables).
fn is_datastore_table(name: &str) -> bool {
    name.len() == 35 && name.starts_with("ds_") && name[3..].bytes().all(|b| b.is_ascii_hexdigit())
}

fn open(path: &str) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::from_secs(2))?;
    // One value at most 1 MiB and at most 200 result columns (SQLite holds a whole row while
    // it is read: at most 200 MiB), a nesting depth and a compound limit that keep the
    // parser's work small, nothing attached.
    conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, 1024 * 1024);
    conn.set_limit(Limit::SQLITE_LIMIT_COLUMN, 200);
    conn.set_limit(Limit::SQLITE_LIMIT_SQL_LENGTH, 1024 * 1024);
    conn.set_limit(Limit::SQLITE_LIMIT_EXPR_DEPTH, 200);
    conn.set_limit(Limit::SQLITE_LIMIT_COMPOUND_SELECT, 100);
    conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0);
    conn.set_limit(Limit::SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 1000);
    conn.set_limit(Limit::SQLITE_LIMIT_VARIABLE_NUMBER, 0);
    Ok(conn)
}

/// The database's own tables and views (lower case): a read of any of them that is not a
/// DataStore table is refused. Other names a query reads are its own common table
/// expressions and subqueries (and the JSON table functions).
fn real_tables(conn: &Connection) -> rusqlite::Result<Arc<BTreeSet<String>>> {
    let mut stmt =
        conn.prepare("SELECT lower(name) FROM sqlite_schema WHERE type IN ('table', 'view')")?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<BTreeSet<String>>>()?;
    Ok(Arc::new(names))
}

/// Sets the authorizer: reads of `allowed` tables (every DataStore table when `None`, noting
/// which), the listed functions, SELECT and recursive CTEs.
fn authorize(
    conn: &Connection,
    functions: Arc<dyn Fn(&str) -> bool + Send + Sync>,
    real: Arc<BTreeSet<String>>,
    allowed: Option<BTreeSet<String>>,
    seen: Arc<Mutex<Seen>>,
) {
    conn.authorizer(Some(move |ctx: AuthContext<'_>| {
        let refuse = |r: Refusal| {
            let mut s = seen.lock().unwrap_or_else(|p| p.into_inner());
            s.refusal.get_or_insert(r);
            Authorization::Deny
        };
        match ctx.action {
            AuthAction::Select | AuthAction::Recursive => Authorization::Allow,
            AuthAction::Read { table_name, .. } => {
                if ctx.database_name.is_some_and(|d| d != "main") {
                    return refuse(Refusal::Table(table_name.to_string()));
                }
                let lower = table_name.to_ascii_lowercase();
                if is_datastore_table(&lower) {
                    if allowed.as_ref().is_none_or(|set| set.contains(&lower)) {
                        let mut s = seen.lock().unwrap_or_else(|p| p.into_inner());
                        s.tables.insert(lower);
                        Authorization::Allow
                    } else {
                        refuse(Refusal::Table(table_name.to_string()))
                    }
                } else if lower.starts_with("sqlite_")
                    || lower.starts_with("pragma_")
                    || lower == "dbstat"
                {
                    refuse(Refusal::System)
                } else if real.contains(&lower)
                    || (matches!(lower.as_str(), "json_each" | "json_tree") && !functions(&lower))
                {
                    refuse(Refusal::Table(table_name.to_string()))
                } else {
                    Authorization::Allow
                }
            }
            AuthAction::Function { function_name } => {
                if functions(function_name) {
                    Authorization::Allow
                } else {
                    refuse(Refusal::Function(function_name.to_string()))
                }
            }
            AuthAction::Pragma { .. } => refuse(Refusal::System),
            _ => refuse(Refusal::Write),
        }
    }));
}

fn refusal_error(r: Refusal, tables: &BTreeMap<String, String>) -> CkanError {
    match r {
        Refusal::System => not_authorized("Not authorized to access system tables"),
        Refusal::Function(f) => not_authorized(format!("Not authorized to call function {f}")),
        // A table that is not a DataStore table does not exist, as far as the query can tell.
        Refusal::Table(t) => query_error(format!("no such table: {}", unrename(&t, tables))),
        Refusal::Write => query_error("cannot execute anything but SELECT in a read-only search"),
    }
}

fn sqlite_error(e: rusqlite::Error, tables: &BTreeMap<String, String>) -> CkanError {
    if let rusqlite::Error::SqliteFailure(f, _) = &e {
        if f.code == rusqlite::ErrorCode::OperationInterrupted {
            return query_error("Query took too long");
        }
    }
    let msg = match &e {
        rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
        other => other.to_string(),
    };
    query_error(unrename(&msg, tables))
}

/// A field's type in PostgreSQL's names, from the column's declared type or its first value.
fn type_of(decl: Option<&str>, first: Option<&ValueRef<'_>>) -> &'static str {
    match decl.map(str::to_ascii_uppercase).as_deref() {
        Some("INTEGER") => "int8",
        Some("REAL") => "numeric",
        Some("TEXT") => "text",
        _ => match first {
            Some(ValueRef::Integer(_)) => "int8",
            Some(ValueRef::Real(_)) => "float8",
            Some(ValueRef::Blob(_)) => "bytea",
            _ => "text",
        },
    }
}

fn json_of(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => json!(i),
        ValueRef::Real(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        ValueRef::Text(t) => json!(String::from_utf8_lossy(t)),
        ValueRef::Blob(b) => json!(format!("\\x{}", hex::encode(b))),
    }
}

/// Prepares the statement to learn what it reads (every DataStore table allowed, none named
/// is trusted yet).
fn discover(
    path: &str,
    statement: &str,
    functions: Arc<dyn Fn(&str) -> bool + Send + Sync>,
) -> Result<Discovered, Failure> {
    let conn = open(path).map_err(|e| (None, e))?;
    let real = real_tables(&conn).map_err(|e| (None, e))?;
    let seen = Arc::new(Mutex::new(Seen::default()));
    authorize(&conn, functions, real.clone(), None, seen.clone());
    let prepared = conn.prepare(statement).map(|_| ());
    let seen = std::mem::take(&mut *seen.lock().unwrap_or_else(|p| p.into_inner()));
    match prepared {
        Ok(()) => Ok((conn, seen, real)),
        Err(e) => Err((seen.refusal, e)),
    }
}

/// Runs the statement with only `tables` readable, until the deadline.
fn execute(
    conn: Connection,
    statement: &str,
    functions: Arc<dyn Fn(&str) -> bool + Send + Sync>,
    real: Arc<BTreeSet<String>>,
    tables: BTreeSet<String>,
    deadline: Instant,
    max_bytes: usize,
) -> Result<Answer, Failure> {
    let seen = Arc::new(Mutex::new(Seen::default()));
    authorize(&conn, functions, real, Some(tables), seen.clone());
    conn.progress_handler(1_000, Some(move || Instant::now() > deadline));
    let refusal = || {
        seen.lock()
            .unwrap_or_else(|p| p.into_inner())
            .refusal
            .clone()
    };
    let mut stmt = conn.prepare(statement).map_err(|e| (refusal(), e))?;
    let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
    let decls: Vec<Option<String>> = stmt
        .columns()
        .iter()
        .map(|c| c.decl_type().map(str::to_string))
        .collect();
    let mut rows = stmt.query([]).map_err(|e| (None, e))?;
    let mut records = Vec::new();
    let mut types: Vec<Option<&'static str>> = vec![None; names.len()];
    let mut total = 0usize;
    let mut truncated = false;
    while let Some(row) = rows.next().map_err(|e| (None, e))? {
        let mut obj = serde_json::Map::new();
        for (i, name) in names.iter().enumerate() {
            let v = row.get_ref(i).map_err(|e| (None, e))?;
            if types[i].is_none() && !matches!(v, ValueRef::Null) {
                types[i] = Some(type_of(decls[i].as_deref(), Some(&v)));
            }
            // Counted before it is copied: the answer stops at the cap, value by value.
            total += name.len()
                + match v {
                    ValueRef::Text(t) | ValueRef::Blob(t) => t.len() * 2,
                    _ => 24,
                };
            if total > max_bytes {
                break;
            }
            obj.insert(name.clone(), json_of(v));
        }
        if total > max_bytes {
            truncated = true;
            break;
        }
        records.push(Value::Object(obj));
    }
    let fields = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            json!({"id": n, "type": types[i].unwrap_or_else(|| type_of(decls[i].as_deref(), None))})
        })
        .collect();
    Ok(Answer {
        fields,
        records,
        truncated,
    })
}

pub(super) async fn run(
    ctx: &mut ActionContext,
    search: &SqlSearch,
    statement: &str,
    tables: &BTreeMap<String, String>,
) -> CkanResult<Answer> {
    let Some(path) = crate::table::sqlite_file(&ctx.app.store.url) else {
        return Err(query_error(
            "The SQL search needs the catalog's SQLite database in a file",
        ));
    };
    // A blocking thread per query, at most two at once; a third waits up to the timeout. The
    // permit goes with the blocking work, so a client that hangs up does not free it early.
    let slot = tokio::time::timeout(search.timeout, search.sqlite_slots.clone().acquire_owned())
        .await
        .map_err(|_| query_error("Too many SQL searches at once; try again"))?
        .map_err(internal)?;
    let app = ctx.app.clone();
    let functions: Arc<dyn Fn(&str) -> bool + Send + Sync> = Arc::new(move |f: &str| {
        app.extension::<SqlSearch>()
            .is_some_and(|s| s.allows_function(Backend::Sqlite, f))
    });
    let stmt = statement.to_string();
    let (p, f) = (path.clone(), functions.clone());
    let found = tokio::task::spawn_blocking(move || {
        let held = slot;
        (discover(&p, &stmt, f), held)
    })
    .await
    .map_err(internal)?;
    let (found, slot) = found;
    let (conn, seen, real) = match found {
        Ok(found) => found,
        Err((Some(r), _)) => return Err(refusal_error(r, tables)),
        Err((None, e)) => return Err(sqlite_error(e, tables)),
    };
    let names: Vec<String> = seen.tables.iter().cloned().collect();
    check_tables(ctx, &names).await?;
    let deadline = Instant::now() + search.timeout;
    let stmt = statement.to_string();
    let max_bytes = search.max_bytes;
    let done = tokio::task::spawn_blocking(move || {
        let _held = slot;
        execute(
            conn,
            &stmt,
            functions,
            real,
            seen.tables,
            deadline,
            max_bytes,
        )
    })
    .await
    .map_err(internal)?;
    match done {
        Ok(answer) => Ok(answer),
        Err((Some(r), _)) => Err(refusal_error(r, tables)),
        Err((None, e)) => Err(sqlite_error(e, tables)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths() {
        assert!(is_datastore_table("ds_0123456789abcdef0123456789abcdef"));
        assert!(!is_datastore_table(
            "ds_0123456789abcdef0123456789abcdef_fts"
        ));
        assert!(!is_datastore_table("user"));
        assert_eq!(
            crate::table::sqlite_file("sqlite:///tmp/x/catalog.db?mode=rwc").as_deref(),
            Some("/tmp/x/catalog.db")
        );
        assert_eq!(crate::table::sqlite_file("sqlite::memory:"), None);
    }
}
