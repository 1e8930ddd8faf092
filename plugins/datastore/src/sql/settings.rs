//! The SQL search's settings (`catalog.datastore.sqlsearch.*`): whether it is on, the
//! functions a query may call, its deadline and caps, and the PostgreSQL reader role.

use std::collections::HashSet;
use std::time::Duration;

use catalog_framework::prelude::*;
use catalog_framework::store::Backend;

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
    pub(super) pg: tokio::sync::OnceCell<sqlx::PgPool>,
    /// SQLite queries run on blocking threads: at most this many at once.
    pub(super) sqlite_slots: std::sync::Arc<tokio::sync::Semaphore>,
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
}
