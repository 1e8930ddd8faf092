//! The relational store: one sqlx `Any` pool over SQLite (embedded default) or PostgreSQL.
//!
//! Queries are written once in portable SQL with `$N` placeholders; ids and timestamps are
//! TEXT, JSON documents are TEXT. Only the migration files differ per backend.

use std::path::Path;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Connection, Executor};

/// Which database a store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A connection pool plus what it is connected to.
#[derive(Clone)]
pub struct Store {
    pub pool: AnyPool,
    /// Where [`Store::begin_write`] takes its connection. SQLite: a pool of one connection.
    /// Write transactions run one at a time anyway, and a connection that is the only one to
    /// write keeps its page cache from one transaction to the next; any other connection
    /// drops its whole cache when it finds the database changed since its last transaction,
    /// so a write on whichever pooled connection came first read the pages it touches again,
    /// with `read()` calls, while holding the write lock (issue 28). PostgreSQL: the pool.
    write_pool: AnyPool,
    pub backend: Backend,
    /// The URL the pool connects to, for components that need connections of their own.
    pub url: String,
    /// SQLite admits one writer at a time: write actions queue here instead of failing busy.
    write_lock: std::sync::Arc<tokio::sync::Mutex<()>>,
    /// Write calls between their start and their commit (what a group commit waits for).
    writers: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// SQLite: the task that checkpoints the write-ahead log beside the writers (stopped when
    /// the last clone of the store is dropped).
    _checkpointer: Option<std::sync::Arc<Checkpointer>>,
}

/// SQLite's write-ahead log is copied back into the database file (a checkpoint: writes and
/// two `fsync`s) by this background task instead of by whichever writer commits the page that
/// fills [`AUTO_CHECKPOINT_PAGES`]: that writer would hold the single-writer lock for the
/// checkpoint's milliseconds while every other write waits (issue 28). A passive checkpoint
/// takes no lock a writer or a reader needs.
struct Checkpointer(tokio::task::JoinHandle<()>);

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// How often the background task checkpoints SQLite's write-ahead log.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);

/// SQLite's own checkpoint after a commit, kept as a backstop should the background task fall
/// behind (SQLite's default is 1,000 pages): the log then stays under about 40 MB.
const AUTO_CHECKPOINT_PAGES: u32 = 10_000;

/// Checkpoints the write-ahead log every [`CHECKPOINT_EVERY`] while the pool is open.
fn spawn_checkpointer(pool: AnyPool) -> Checkpointer {
    Checkpointer(tokio::spawn(async move {
        let mut tick = tokio::time::interval(CHECKPOINT_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        while !pool.is_closed() {
            tick.tick().await;
            if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
                .execute(&pool)
                .await
            {
                tracing::debug!(error = %e, "checkpointing the write-ahead log");
            }
        }
    }))
}

/// SQLite's page cache of the write connection, in KiB: the pages a write touches (the upper
/// levels of the tables' and indexes' B-trees, the datasets being changed, the activity and
/// job tables' ends) stay in it from one write to the next. Read connections keep SQLite's
/// default, 2 MiB each: each drops its cache after every write anyway.
const WRITE_CACHE_KIB: u32 = 65_536;

/// A pool of at most `max` SQLite connections with the store's settings, each with a page
/// cache of `cache_kib` KiB (`None`: SQLite's default).
fn sqlite_pool(max: u32, cache_kib: Option<u32>) -> AnyPoolOptions {
    AnyPoolOptions::new()
        .max_connections(max)
        .min_connections(1)
        // An embedded database's connection does not go stale as a server's can: no ping (a
        // round trip to the connection's thread) before each use, which a write would
        // otherwise pay while holding the single-writer lock.
        .test_before_acquire(false)
        .after_connect(move |conn, _| {
            Box::pin(async move {
                let cache = cache_kib
                    .map(|k| format!(" PRAGMA cache_size = -{k};"))
                    .unwrap_or_default();
                conn.execute(
                    format!(
                        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
                         PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON; \
                         PRAGMA wal_autocheckpoint = {AUTO_CHECKPOINT_PAGES};{cache}"
                    )
                    .as_str(),
                )
                .await?;
                Ok(())
            })
        })
}

/// A write call in progress, counted by [`Store::writers_in_progress`] until dropped.
pub struct WriterGuard(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl Drop for WriterGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

const MIGRATIONS: &[crate::model::Migration] = &[
    crate::migration!("migrations", "0001_init"),
    crate::migration!("migrations", "0002_search_outbox"),
    crate::migration!("migrations", "0003_reindex_drafts"),
    crate::migration!("migrations", "0004_core_tables"),
    crate::migration!("migrations", "0005_job_queue"),
    crate::migration!("migrations", "0006_plugin_data_reset_key"),
    crate::migration!("migrations", "0007_search_feed"),
    crate::migration!("migrations", "0008_node"),
    crate::migration!("migrations", "0009_lookup_indexes"),
    crate::migration!("migrations", "0010_job_queue_trigger"),
];

/// Splits a migration into statements at `;`, keeping SQLite trigger bodies
/// (`BEGIN … END`) and PostgreSQL dollar-quoted bodies (`$$ … $$`) whole.
fn statements(sql: &str) -> Vec<String> {
    // Whole-line comments go first, so a `;` in a comment does not end a statement.
    let sql = sql
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    let mut cur = String::new();
    for piece in sql.split(';') {
        if !cur.is_empty() {
            cur.push(';');
        }
        cur.push_str(piece);
        let body = cur.trim();
        let upper = body.trim().to_ascii_uppercase();
        let open_dollar = body.matches("$$").count() % 2 == 1;
        let open_trigger = upper.starts_with("CREATE TRIGGER")
            && upper.contains("BEGIN")
            && !upper.ends_with("END");
        if open_dollar || open_trigger {
            continue;
        }
        if !body.is_empty() {
            out.push(body.to_string());
        }
        cur.clear();
    }
    out
}

impl Store {
    /// Connects to `url` (`sqlite://…` or `postgres://…`).
    pub async fn connect(url: &str) -> anyhow::Result<Store> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("postgres") {
            Backend::Postgres
        } else {
            Backend::Sqlite
        };
        let opts: AnyConnectOptions = url.parse()?;
        let pool = match backend {
            Backend::Sqlite => sqlite_pool(8, None).connect_with(opts.clone()).await?,
            Backend::Postgres => {
                AnyPoolOptions::new()
                    .max_connections(16)
                    .acquire_timeout(Duration::from_secs(30))
                    // A connection keeps its prepared statements' plans; PostgreSQL may keep a
                    // generic plan made while a table was small. Renewing connections every few
                    // minutes bounds how long a plan made for an empty catalog serves a big one.
                    .max_lifetime(Duration::from_secs(300))
                    .connect_with(opts.clone())
                    .await?
            }
        };
        let write_pool = match backend {
            Backend::Sqlite => {
                sqlite_pool(1, Some(WRITE_CACHE_KIB))
                    // As long as SQLite's own wait for its write lock (`busy_timeout`).
                    .acquire_timeout(Duration::from_secs(10))
                    .connect_with(opts)
                    .await?
            }
            Backend::Postgres => pool.clone(),
        };
        let checkpointer = (backend == Backend::Sqlite)
            .then(|| std::sync::Arc::new(spawn_checkpointer(pool.clone())));
        Ok(Store {
            pool,
            write_pool,
            backend,
            url: url.to_string(),
            write_lock: Default::default(),
            writers: Default::default(),
            _checkpointer: checkpointer,
        })
    }

    /// Begins a write transaction: SQLite `BEGIN IMMEDIATE` (the database's write lock taken at
    /// once) on the store's write connection, PostgreSQL `BEGIN`. It runs in a task of its
    /// own, so that a caller dropped meanwhile (its client went away, a timeout) cannot stop it
    /// halfway. sqlx 0.8 checks that a custom BEGIN took effect with one more await after the
    /// BEGIN was acknowledged; a future dropped at that await leaves the pooled connection
    /// inside the transaction with nothing to roll it back, and on SQLite that connection then
    /// holds the write lock for good: every later write waits its busy timeout and fails (a
    /// server whose writes all stalled after a benchmark's client closed its connections
    /// mid-request). Dropped here, the task still finishes, and the transaction it made is
    /// rolled back as it is dropped.
    pub async fn begin_write(&self) -> sqlx::Result<sqlx::Transaction<'static, sqlx::Any>> {
        let pool = self.write_pool.clone();
        let backend = self.backend;
        tokio::spawn(async move {
            match backend {
                Backend::Sqlite => pool.begin_with("BEGIN IMMEDIATE").await,
                Backend::Postgres => pool.begin().await,
            }
        })
        .await
        .map_err(|e| sqlx::Error::Protocol(format!("beginning a transaction: {e}")))?
    }

    /// A PostgreSQL pool of its own, beside the store's: for work that runs while an action
    /// holds one of the store's connections (a search inside a write transaction). Sharing the
    /// store's pool there deadlocks once every connection is held by a waiting transaction.
    pub async fn separate_pool(&self, max_connections: u32) -> anyhow::Result<AnyPool> {
        let opts: AnyConnectOptions = self.url.parse()?;
        Ok(AnyPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(opts)
            .await?)
    }

    /// The SQLite URL of the default database file in a data directory.
    pub fn sqlite_url_in(data_dir: &Path) -> String {
        format!(
            "sqlite://{}?mode=rwc",
            data_dir.join("catalog.db").display()
        )
    }

    /// PostgreSQL: refreshes the planner's statistics of the tables changed by more than
    /// autovacuum's own threshold (50 rows and a tenth of the table) since their last ANALYZE,
    /// and answers their names. A server with autovacuum off, or a bulk load faster than its
    /// one-minute round, otherwise plans every statement for the empty tables it started with
    /// (sequential scans of `package` that grew with the catalog, issue 28); an ANALYZE also
    /// makes PostgreSQL plan its prepared statements again. SQLite: nothing (its planner does
    /// not depend on gathered statistics here).
    pub async fn analyze_changed_tables(&self) -> sqlx::Result<Vec<String>> {
        if self.backend != Backend::Postgres {
            return Ok(Vec::new());
        }
        let mut conn = self.pool.acquire().await?;
        let changed: Vec<String> = sqlx::query_scalar(
            "SELECT relname::text FROM pg_stat_user_tables \
             WHERE schemaname = current_schema() \
             AND n_mod_since_analyze > 50 + n_live_tup / 10 ORDER BY relname",
        )
        .fetch_all(&mut *conn)
        .await?;
        for table in &changed {
            let quoted = format!("\"{}\"", table.replace('"', "\"\""));
            sqlx::query(&format!("ANALYZE {quoted}"))
                .execute(&mut *conn)
                .await?;
        }
        Ok(changed)
    }

    /// Applies the migrations not yet applied. Safe to run on every start.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        self.apply(None, MIGRATIONS).await
    }

    /// Applies a plugin's migrations not yet applied, recorded in `plugin_migration` under the
    /// plugin's name.
    pub async fn migrate_plugin(
        &self,
        plugin: &str,
        migrations: &[crate::model::Migration],
    ) -> anyhow::Result<()> {
        self.apply(Some(plugin), migrations).await
    }

    /// Applies, in version order and each in its own transaction, the migrations not yet
    /// recorded: the framework's in `catalog_migration` (`owner` `None`), a plugin's in
    /// `plugin_migration`.
    async fn apply(
        &self,
        owner: Option<&str>,
        migrations: &[crate::model::Migration],
    ) -> anyhow::Result<()> {
        let mut conn = self.pool.acquire().await?;
        let (create, select, insert) = match owner {
            None => (
                "CREATE TABLE IF NOT EXISTS catalog_migration (version TEXT PRIMARY KEY, applied_at TEXT NOT NULL)",
                "SELECT version FROM catalog_migration WHERE version = $1",
                "INSERT INTO catalog_migration (version, applied_at) VALUES ($1, $2)",
            ),
            Some(_) => (
                "CREATE TABLE IF NOT EXISTS plugin_migration (plugin TEXT NOT NULL, version TEXT NOT NULL, applied_at TEXT NOT NULL, PRIMARY KEY (plugin, version))",
                "SELECT version FROM plugin_migration WHERE version = $1 AND plugin = $2",
                "INSERT INTO plugin_migration (version, applied_at, plugin) VALUES ($1, $2, $3)",
            ),
        };
        conn.execute(create).await?;
        let mut ordered: Vec<&crate::model::Migration> = migrations.iter().collect();
        ordered.sort_by_key(|m| m.version);
        for m in ordered {
            let mut done = sqlx::query_as::<_, (String,)>(select).bind(m.version);
            if let Some(p) = owner {
                done = done.bind(p);
            }
            if done.fetch_optional(&mut *conn).await?.is_some() {
                continue;
            }
            let sql = match self.backend {
                Backend::Sqlite => m.sqlite,
                Backend::Postgres => m.postgres,
            };
            let plugin = owner.unwrap_or("catalog");
            let mut tx = conn.begin().await?;
            for stmt in statements(sql) {
                tx.execute(stmt.as_str())
                    .await
                    .map_err(|e| anyhow::anyhow!("{plugin} migration {}: {e}", m.version))?;
            }
            let mut record = sqlx::query(insert)
                .bind(m.version)
                .bind(crate::time::now_iso());
            if let Some(p) = owner {
                record = record.bind(p);
            }
            record.execute(&mut *tx).await?;
            tx.commit().await?;
            tracing::info!(plugin, version = m.version, "applied migration");
        }
        Ok(())
    }

    /// Counts a write call as in progress until the guard drops (at its commit or failure).
    pub fn writer_started(&self) -> WriterGuard {
        self.writers
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        WriterGuard(self.writers.clone())
    }

    /// Write calls of this process that started and have not committed or failed yet.
    pub fn writers_in_progress(&self) -> usize {
        self.writers.load(std::sync::atomic::Ordering::Acquire)
    }

    /// On SQLite, waits for the single-writer lock (held until the guard drops).
    pub async fn lock_writes(&self) -> Option<tokio::sync::OwnedMutexGuard<()>> {
        match self.backend {
            Backend::Sqlite => Some(self.write_lock.clone().lock_owned().await),
            Backend::Postgres => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::statements;

    #[test]
    fn a_semicolon_in_a_comment_does_not_end_a_statement() {
        let sql =
            "-- one; two\nCREATE TABLE a (x TEXT);\n-- three; four\nCREATE INDEX a_x ON a (x);\n";
        assert_eq!(
            statements(sql),
            ["CREATE TABLE a (x TEXT)", "CREATE INDEX a_x ON a (x)"]
        );
    }

    #[test]
    fn splits_keeping_trigger_and_function_bodies() {
        let sqlite = statements(include_str!("migrations/sqlite/0002_search_outbox.sql"));
        assert_eq!(sqlite.len(), 8);
        assert!(sqlite[1].starts_with("CREATE TRIGGER") && sqlite[1].ends_with("END"));
        let pg = statements(include_str!("migrations/postgres/0002_search_outbox.sql"));
        assert_eq!(pg.len(), 7);
        assert!(pg[1].contains("RETURN NULL;") && pg[1].ends_with("$$"));
        assert_eq!(
            statements("CREATE TABLE a (x INT);\n-- c\nCREATE TABLE b (y INT);").len(),
            2
        );
    }
}
