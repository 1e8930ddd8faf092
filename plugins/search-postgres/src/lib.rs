//! The `postgres` search backend: full-text search inside the catalog's PostgreSQL database,
//! so that any number of stateless API nodes share one index. Design, operation and limits:
//! `docs/SEARCH-POSTGRES.md`.
//!
//! One row per dataset in `search_doc`. In the row, what searches read for many matches: the
//! columns to sort and filter on, the multi-valued fields every CKAN search filters or facets
//! on (`tags`, `groups`, `res_format`, `permission_labels`) as arrays, and a small `tsvector`
//! of the title for ranking. Out of line: the stored `package_show` dict, the JSON document of
//! every string field (GIN `jsonb_path_ops`), and the full `tsvector`, whose lexemes carry
//! their field name (`title:run`, `text:water`) so one GIN index serves every text field.
//! Text analysis happens in Rust; queries become SQL with every user value bound.
//!
//! # Where things live
//!
//! - `lib.rs`: the backend, its factory and its cache of answers: indexing, searching (facets
//!   included), rebuilding.
//! - [`analysis`]: text analysis (tokens, stems, the `tsvector` and `tsquery` texts).
//! - [`compile`]: queries to SQL, in `compile/` (its files listed in `compile/mod.rs`).
//! - [`schema`]: the tables, and a dataset's row.
#![forbid(unsafe_code)]

pub mod analysis;
pub mod compile;
pub mod schema;

use std::sync::Arc;

use anyhow::Context as _;
use catalog_framework::error::search_error;
use catalog_framework::plugin::SearchBackendPlugin;
use catalog_framework::prelude::*;
use catalog_framework::register_search_backend;
use catalog_framework::search::fields::{kind, FieldKind, SORTABLE};
use catalog_framework::search::{
    IndexDocument, IndexRebuild, SearchBackend, SearchBackendFactory, SearchBackendInit,
    SearchHits, SearchRequest, SortField,
};
use catalog_framework::store::Backend;
use sqlx::any::AnyRow;
use sqlx::{Any, AnyConnection, AnyPool, Connection, Executor, Row};

use compile::{Arg, Compiler, Score, Sql};
use schema::{
    Row as DocRow, ARRAY_COLUMNS, DDL_LOCK, EXACT_BY_COLUMN, GONE, INDEX_SUFFIXES, LIVE, NEW,
    REBUILD_LOCK, VERSION,
};

register_plugin!(SearchBackendPlugin {
    name: "search_postgres",
    backend: "postgres",
});
register_search_backend!("postgres", PostgresFactory);

/// Rows per insert statement.
const INSERT_BATCH: usize = 200;
/// The table layout; a table written with another one is recreated empty (and then refilled
/// by the start-up rebuild).
const LAYOUT: &str = "catalog-search-postgres layout 2";
/// Cached counts and facets (of one index version) kept at most.
const CACHE_ENTRIES: usize = 512;

/// Opens the PostgreSQL backend for `catalog.search.backend = "postgres"`.
pub struct PostgresFactory;

#[async_trait]
impl SearchBackendFactory for PostgresFactory {
    async fn open(&self, init: SearchBackendInit) -> anyhow::Result<Arc<dyn SearchBackend>> {
        // Connections of its own: searches run inside actions that hold a store connection.
        let pool = match init.store.backend {
            catalog_framework::store::Backend::Postgres => init.store.separate_pool(8).await?,
            catalog_framework::store::Backend::Sqlite => init.store.pool.clone(),
        };
        Ok(Arc::new(
            PostgresBackend::open(pool, init.store.backend).await?,
        ))
    }
}

/// The PostgreSQL search backend.
pub struct PostgresBackend {
    pool: AnyPool,
    /// Counts and facets of recent searches, valid for one version of the index: a busy
    /// portal asks the same (front page, organization pages) again and again, and counting
    /// facets over a large part of the catalog is the slow part of a search.
    cache: std::sync::Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    version: i64,
    entries: std::collections::HashMap<String, (u64, Facets)>,
}

type Facets = Vec<(String, Vec<(String, u64)>)>;

impl Cache {
    fn get(&mut self, version: i64, key: &str) -> Option<(u64, Facets)> {
        if self.version != version {
            return None;
        }
        self.entries.get(key).cloned()
    }

    fn put(&mut self, version: i64, key: String, value: (u64, Facets)) {
        if version < self.version {
            // A search that began before the latest change: its answer is already stale.
            return;
        }
        if version > self.version || self.entries.len() >= CACHE_ENTRIES {
            // Entries of an older version are of no use; a full cache starts over.
            self.entries.clear();
            self.version = version;
        }
        self.entries.insert(key, value);
    }
}

impl PostgresBackend {
    /// Creates the tables if needed. Fails unless the store is PostgreSQL.
    pub async fn open(pool: AnyPool, backend: Backend) -> anyhow::Result<PostgresBackend> {
        if backend != Backend::Postgres {
            anyhow::bail!("catalog.search.backend = postgres needs a postgres:// database URL");
        }
        let mut tx = pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(DDL_LOCK)
            .execute(&mut *tx)
            .await?;
        let layout: Option<String> =
            sqlx::query_scalar("SELECT obj_description(to_regclass($1), 'pg_class')::text")
                .bind(LIVE)
                .fetch_one(&mut *tx)
                .await?;
        let exists: bool = sqlx::query_scalar("SELECT to_regclass($1) IS NOT NULL")
            .bind(LIVE)
            .fetch_one(&mut *tx)
            .await?;
        if !exists || layout.as_deref() != Some(LAYOUT) {
            if exists {
                tracing::warn!(
                    found = ?layout,
                    expected = LAYOUT,
                    "search_doc has another layout: recreating it empty (a rebuild refills it)"
                );
                tx.execute(format!("DROP TABLE {LIVE}").as_str()).await?;
            }
            for stmt in schema::create_table(LIVE) {
                tx.execute(stmt.as_str()).await?;
            }
            tx.execute(format!("COMMENT ON TABLE {LIVE} IS '{LAYOUT}'").as_str())
                .await?;
        }
        tx.execute(
            format!("CREATE TABLE IF NOT EXISTS {VERSION} (id INT PRIMARY KEY, v BIGINT NOT NULL)")
                .as_str(),
        )
        .await?;
        tx.execute(
            format!(
                "INSERT INTO {VERSION} (id, v) VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET v = {VERSION}.v + 1"
            )
            .as_str(),
        )
        .await?;
        tx.commit().await?;
        drop_abandoned_rebuild(&pool).await?;
        Ok(PostgresBackend {
            pool,
            cache: Default::default(),
        })
    }
}

/// Drops what a rebuild that died left behind, unless a rebuild is running (on any node).
async fn drop_abandoned_rebuild(pool: &AnyPool) -> anyhow::Result<()> {
    let mut conn = pool.acquire().await?;
    let free: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(REBUILD_LOCK)
        .fetch_one(&mut *conn)
        .await?;
    if free {
        let result = conn
            .execute(format!("DROP TABLE IF EXISTS {NEW}, {GONE}").as_str())
            .await;
        sqlx::query("SELECT pg_advisory_unlock($1)")
            .bind(REBUILD_LOCK)
            .execute(&mut *conn)
            .await?;
        result?;
    }
    Ok(())
}

/// How an upsert treats what the table already holds.
#[derive(Clone, Copy, PartialEq)]
enum Upsert {
    /// A live change: replaces the row unless the row is newer (by `metadata_modified`): on
    /// several nodes, a drain that read a dataset before another node's later edit may land
    /// after that edit's drain.
    Live,
    /// A rebuild batch, which may have been read before a live change: also skips datasets
    /// deleted since the rebuild began.
    Rebuild,
}

/// Inserts or replaces `docs` in `table`.
async fn upsert(
    conn: &mut AnyConnection,
    table: &str,
    docs: &[IndexDocument],
    mode: Upsert,
) -> anyhow::Result<()> {
    // One row per id (the last wins): an upsert cannot touch a row twice.
    let mut rows: Vec<DocRow> = Vec::with_capacity(docs.len());
    let mut seen = std::collections::HashMap::new();
    for d in docs {
        let row = DocRow::from_document(d);
        match seen.get(&row.id) {
            Some(&i) => rows[i] = row,
            None => {
                seen.insert(row.id.clone(), rows.len());
                rows.push(row);
            }
        }
    }
    let filter = if mode == Upsert::Rebuild {
        format!(" WHERE NOT EXISTS (SELECT 1 FROM {GONE} g WHERE g.id = r.id)")
    } else {
        String::new()
    };
    let sql = format!(
        "INSERT INTO {table} ({cols}) {select}{filter} \
         ON CONFLICT (id) DO UPDATE SET {set} \
         WHERE EXCLUDED.metadata_modified IS NULL OR {table}.metadata_modified IS NULL \
         OR EXCLUDED.metadata_modified >= {table}.metadata_modified",
        cols = schema::insert_columns(),
        select = schema::select_from_batch(),
        set = schema::update_set(),
    );
    for chunk in rows.chunks(INSERT_BATCH) {
        let batch = serde_json::to_string(chunk)?;
        sqlx::query(&sql).bind(batch).execute(&mut *conn).await?;
    }
    Ok(())
}

async fn delete(conn: &mut AnyConnection, table: &str, ids: &[String]) -> anyhow::Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    sqlx::query(&format!(
        "DELETE FROM {table} WHERE id IN (SELECT json_array_elements_text($1::json))"
    ))
    .bind(serde_json::to_string(ids)?)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

async fn tombstone(conn: &mut AnyConnection, ids: &[String], on: bool) -> anyhow::Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    let sql = if on {
        format!(
            "INSERT INTO {GONE} (id) SELECT json_array_elements_text($1::json) \
             ON CONFLICT (id) DO NOTHING"
        )
    } else {
        format!("DELETE FROM {GONE} WHERE id IN (SELECT json_array_elements_text($1::json))")
    };
    sqlx::query(&sql)
        .bind(serde_json::to_string(ids)?)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Marks the index changed (cached counts and facets of every node go stale).
async fn bump_version(conn: &mut AnyConnection) -> anyhow::Result<()> {
    conn.execute(format!("UPDATE {VERSION} SET v = v + 1 WHERE id = 1").as_str())
        .await?;
    Ok(())
}

fn bind_all<'q>(
    mut q: sqlx::query::Query<'q, Any, sqlx::any::AnyArguments<'q>>,
    args: &'q [Arg],
) -> sqlx::query::Query<'q, Any, sqlx::any::AnyArguments<'q>> {
    for a in args {
        q = match a {
            Arg::Text(s) => q.bind(s.as_str()),
            Arg::Int(i) => q.bind(*i),
            Arg::Float(f) => q.bind(*f),
        };
    }
    q
}

/// The `ORDER BY` list of a request, with `id` as the last tiebreaker.
fn order_by(req: &SearchRequest, score: &Score, sql: &mut Sql) -> CkanResult<String> {
    let mut keys = Vec::new();
    let mut has_id = false;
    for k in &req.sort {
        let dir = if k.descending { "DESC" } else { "ASC" };
        match &k.field {
            SortField::Score => {
                // A constant score orders nothing; leaving it out lets an index serve the rest.
                if !score.is_constant() {
                    keys.push(format!("({}) {dir}", score.expression(sql)));
                }
            }
            SortField::Field(f) if matches!(f.as_str(), "metadata_modified" | "metadata_created") => {
                let nulls = if k.descending { "NULLS LAST" } else { "NULLS FIRST" };
                keys.push(format!("d.{f} {dir} {nulls}"));
            }
            SortField::Field(f) if SORTABLE.contains(&f.as_str()) => {
                has_id |= f == "id";
                // SORTABLE names are fixed identifiers, each a column.
                keys.push(format!("d.{f} {dir}"));
            }
            SortField::Field(f) => {
                return Err(search_error(format!(
                    "Search engine returned an error running query: can not sort on undefined field: {f}"
                )))
            }
        }
    }
    if !has_id {
        keys.push("d.id ASC".into());
    }
    Ok(keys.join(", "))
}

fn db_error(e: impl std::fmt::Display) -> CkanError {
    internal(format!("postgres search: {e}"))
}

#[async_trait]
impl SearchBackend for PostgresBackend {
    fn shared(&self) -> bool {
        true
    }

    async fn apply(&self, upserts: Vec<IndexDocument>, deletes: Vec<String>) -> anyhow::Result<()> {
        if upserts.is_empty() && deletes.is_empty() {
            return Ok(());
        }
        let mut tx = self.pool.begin().await?;
        // Taken first, so that a rebuild's swap (which locks the live table, then the new one)
        // either waits for this transaction or has finished before it looks for the new table.
        tx.execute(format!("LOCK TABLE {LIVE} IN ROW EXCLUSIVE MODE").as_str())
            .await?;
        let mut rebuilding: bool = sqlx::query_scalar("SELECT to_regclass($1) IS NOT NULL")
            .bind(NEW)
            .fetch_one(&mut *tx)
            .await?;
        if rebuilding {
            // A rebuild holds its lock while it runs: if the shared lock is free, the new table
            // was left by one that died, and is not worth writing to.
            let abandoned: bool = sqlx::query_scalar("SELECT pg_try_advisory_xact_lock_shared($1)")
                .bind(REBUILD_LOCK)
                .fetch_one(&mut *tx)
                .await?;
            rebuilding = !abandoned;
        }
        upsert(&mut tx, LIVE, &upserts, Upsert::Live).await?;
        delete(&mut tx, LIVE, &deletes).await?;
        if rebuilding {
            // Live changes reach the index being rebuilt too, from whichever node makes them.
            let ids: Vec<String> = upserts.iter().map(|d| d.id.clone()).collect();
            tombstone(&mut tx, &ids, false).await?;
            upsert(&mut tx, NEW, &upserts, Upsert::Live).await?;
            delete(&mut tx, NEW, &deletes).await?;
            tombstone(&mut tx, &deletes, true).await?;
        }
        bump_version(&mut tx).await?;
        tx.commit().await.context("committing the search index")?;
        Ok(())
    }

    async fn search(&self, req: &SearchRequest) -> CkanResult<SearchHits> {
        let mut sql = Sql::default();
        let mut score = Score::default();
        let mut conds = Vec::new();
        let reads_out_of_line = {
            let mut c = Compiler::new(&mut sql);
            let main = c.cond(&req.query, Some((&mut score, 1.0)))?;
            if main != "TRUE" {
                conds.push(format!("({main})"));
            }
            for f in &req.filters {
                let f = c.cond(f, None)?;
                if f != "TRUE" {
                    conds.push(format!("({f})"));
                }
            }
            c.reads_out_of_line
        };
        let cond = if conds.is_empty() {
            "TRUE".to_string()
        } else {
            conds.join(" AND ")
        };
        let mut tx = self.pool.begin().await.map_err(db_error)?;
        // One snapshot for the count, the page and the facets; plans for the actual values.
        let mut settings = vec![
            "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY",
            "SET LOCAL plan_cache_mode = force_custom_plan",
            // Compiling a plan costs more than these short queries run.
            "SET LOCAL jit = off",
        ];
        if reads_out_of_line {
            // The planner prices a full-text or JSON test on a row like any operator, not as
            // the read of an out-of-line value it is: a sequential scan testing every row looks
            // cheaper than the index. Make it take the index wherever one applies.
            settings.push("SET LOCAL enable_seqscan = off");
        }
        for stmt in settings {
            tx.execute(stmt).await.map_err(db_error)?;
        }

        let (count_sql, count_args) =
            sql.statement(&format!("SELECT count(*) FROM {LIVE} d WHERE {cond}"));
        let version: i64 = sqlx::query_scalar(&format!("SELECT v FROM {VERSION} WHERE id = 1"))
            .fetch_one(&mut *tx)
            .await
            .map_err(db_error)?;
        let cache_key = format!(
            "{count_sql}\u{1}{count_args:?}\u{1}{:?}\u{1}{:?}\u{1}{}",
            req.facet_fields, req.facet_limit, req.facet_mincount
        );
        let cached = self
            .cache
            .lock()
            .expect("poisoned")
            .get(version, &cache_key);
        let (count, cached_facets) = match cached {
            Some((count, facets)) => (count as i64, Some(facets)),
            None => {
                let count: i64 = bind_all(sqlx::query(&count_sql), &count_args)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(db_error)?
                    .try_get(0)
                    .map_err(db_error)?;
                (count, None)
            }
        };

        let mut docs = Vec::new();
        if req.rows > 0 && (req.start as i64) < count {
            let mut page = Sql {
                args: sql.args.clone(),
            };
            let order = order_by(req, &score, &mut page)?;
            let limit = page.bind(Arg::Int(req.rows as i64));
            let offset = page.bind(Arg::Int(req.start as i64));
            let page_sql = format!(
                "SELECT d.data FROM {LIVE} d WHERE {cond} ORDER BY {order} LIMIT {limit} OFFSET {offset}"
            );
            let (page_sql, page_args) = page.statement(&page_sql);
            let rows = bind_all(sqlx::query(&page_sql), &page_args)
                .fetch_all(&mut *tx)
                .await
                .map_err(db_error)?;
            for r in rows {
                docs.push(r.try_get::<String, _>(0).map_err(db_error)?);
            }
        } else {
            // Still reject a bad sort, as a search engine would.
            order_by(req, &score, &mut Sql::default())?;
        }

        let facets = match cached_facets {
            Some(f) => f,
            None => {
                let facets =
                    if req.facet_fields.is_empty() || (count == 0 && req.facet_mincount > 0) {
                        req.facet_fields
                            .iter()
                            .map(|f| (f.clone(), Vec::new()))
                            .collect()
                    } else {
                        facet_counts(&mut tx, req, &cond, &sql.args).await?
                    };
                self.cache.lock().expect("poisoned").put(
                    version,
                    cache_key,
                    (count as u64, facets.clone()),
                );
                facets
            }
        };
        tx.commit().await.map_err(db_error)?;
        Ok(SearchHits {
            count: count as u64,
            docs,
            facets,
        })
    }

    async fn indexed(&self) -> anyhow::Result<Vec<(String, String)>> {
        let rows = sqlx::query(&format!("SELECT id, mm_raw FROM {LIVE}"))
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get::<String, _>(0)?, r.try_get::<String, _>(1)?)))
            .collect()
    }

    async fn rebuild(&self) -> anyhow::Result<Box<dyn IndexRebuild>> {
        // A session of its own holds the rebuild lock; it ends (and frees the lock) with the
        // rebuild, finished or dropped.
        let mut conn = self.pool.acquire().await?.detach();
        // Live changes hold the lock shared for a moment; another rebuild holds it for long.
        conn.execute("SET lock_timeout = '5s'").await?;
        let locked = sqlx::query("SELECT pg_advisory_lock($1)")
            .bind(REBUILD_LOCK)
            .execute(&mut conn)
            .await;
        if locked.is_err() {
            anyhow::bail!("another search index rebuild is running (on this or another node)");
        }
        conn.execute("RESET lock_timeout").await?;
        let mut tx = conn.begin().await?;
        tx.execute(format!("DROP TABLE IF EXISTS {NEW}, {GONE}").as_str())
            .await?;
        for stmt in schema::create_table(NEW) {
            tx.execute(stmt.as_str()).await?;
        }
        tx.execute(format!("CREATE TABLE {GONE} (id TEXT PRIMARY KEY)").as_str())
            .await?;
        tx.commit().await?;
        Ok(Box::new(PostgresRebuild { conn }))
    }
}

/// Facet counts over every match: one scan for the string and date fields, one query per text
/// field (whose values are its tokens, as Solr facets analysed fields).
async fn facet_counts(
    tx: &mut sqlx::Transaction<'_, Any>,
    req: &SearchRequest,
    cond: &str,
    args: &[Arg],
) -> CkanResult<Vec<(String, Vec<(String, u64)>)>> {
    let mut out: Vec<(String, Vec<(String, u64)>)> = req
        .facet_fields
        .iter()
        .map(|f| (f.clone(), Vec::new()))
        .collect();
    let (filter_where, count_expr) = if req.facet_mincount == 0 {
        // Solr's mincount 0 lists every indexed value, matched or not.
        (String::new(), format!("count(*) FILTER (WHERE {cond})"))
    } else {
        (format!("WHERE {cond}"), "count(*)".to_string())
    };
    let mut sql = Sql {
        args: args.to_vec(),
    };
    let min = sql.bind(Arg::Int(req.facet_mincount as i64));
    let limit_filter = match req.facet_limit {
        Some(l) => format!("WHERE rn <= {}", sql.bind(Arg::Int(l as i64))),
        None => String::new(),
    };
    // Per facet: its values in a row, as an array; from the row's own columns where there is one.
    let mut values = Vec::new();
    for (i, field) in req.facet_fields.iter().enumerate() {
        let array = match kind(field) {
            FieldKind::Text | FieldKind::TextGeneral => {
                out[i].1 = text_facet(tx, req, cond, args, field).await?;
                continue;
            }
            _ if ARRAY_COLUMNS.contains(&field.as_str()) => format!("d.{field}"),
            _ if EXACT_BY_COLUMN.contains(&field.as_str()) => format!(
                "CASE WHEN d.{field} = '' THEN '{{}}'::text[] ELSE ARRAY[d.{field}::text] END"
            ),
            FieldKind::Date => format!(
                "ARRAY(SELECT jsonb_array_elements_text(d.dates -> {}))",
                sql.text(field.as_str())
            ),
            FieldKind::String => format!(
                "ARRAY(SELECT jsonb_array_elements_text(d.fields -> {}))",
                sql.text(field.as_str())
            ),
        };
        values.push(format!("({}::int, ({array}) COLLATE \"C\")", i as i64));
    }
    if values.is_empty() {
        return Ok(out);
    }
    // One scan (which PostgreSQL can run in parallel): every facet's values of a row, counted.
    let query = format!(
        "SELECT i, val, n FROM (\
           SELECT k.i, v.val, {count_expr} AS n, \
             row_number() OVER (PARTITION BY k.i ORDER BY {count_expr} DESC, v.val COLLATE \"C\") AS rn \
           FROM {LIVE} d \
           CROSS JOIN LATERAL (VALUES {values}) AS k(i, vals) \
           CROSS JOIN LATERAL unnest(k.vals) AS v(val) \
           {filter_where} \
           GROUP BY k.i, v.val HAVING {count_expr} >= {min}) s \
         {limit_filter} ORDER BY i, rn",
        values = values.join(", "),
    );
    let (query, query_args) = sql.statement(&query);
    let rows = bind_all(sqlx::query(&query), &query_args)
        .fetch_all(&mut **tx)
        .await
        .map_err(db_error)?;
    for r in rows {
        let (i, val, n) = facet_row(&r)?;
        if let Some(slot) = out.get_mut(i) {
            slot.1.push((val, n));
        }
    }
    Ok(out)
}

fn facet_row(r: &AnyRow) -> CkanResult<(usize, String, u64)> {
    let i: i32 = r.try_get(0).map_err(db_error)?;
    let val: String = r.try_get(1).map_err(db_error)?;
    let n: i64 = r.try_get(2).map_err(db_error)?;
    Ok((i as usize, val, n as u64))
}

async fn text_facet(
    tx: &mut sqlx::Transaction<'_, Any>,
    req: &SearchRequest,
    cond: &str,
    args: &[Arg],
    field: &str,
) -> CkanResult<Vec<(String, u64)>> {
    let Some(prefix) = analysis::lexeme(field, "") else {
        return Ok(Vec::new());
    };
    let mut sql = Sql {
        args: args.to_vec(),
    };
    let len = prefix.chars().count() as i64;
    let plen = sql.bind(Arg::Int(len));
    let p = sql.text(prefix);
    let from = sql.bind(Arg::Int(len + 1));
    let min = sql.bind(Arg::Int(req.facet_mincount as i64));
    let (filter_where, count_expr) = if req.facet_mincount == 0 {
        (String::new(), format!("count(*) FILTER (WHERE {cond})"))
    } else {
        (format!("AND {cond}"), "count(*)".to_string())
    };
    let limit = match req.facet_limit {
        Some(l) => format!("LIMIT {}", sql.bind(Arg::Int(l as i64))),
        None => String::new(),
    };
    // Ordered by the whole lexeme (its prefix is the same in every row): an expression in
    // ORDER BY cannot name an output column such as `val`.
    let query = format!(
        "SELECT substr(u.lexeme, {from}::int) AS val, {count_expr} AS n \
         FROM {LIVE} d CROSS JOIN LATERAL unnest(d.tsv) AS u \
         WHERE left(u.lexeme, {plen}::int) = {p} {filter_where} \
         GROUP BY u.lexeme HAVING {count_expr} >= {min} \
         ORDER BY n DESC, u.lexeme COLLATE \"C\" {limit}"
    );
    let (query, query_args) = sql.statement(&query);
    let rows = bind_all(sqlx::query(&query), &query_args)
        .fetch_all(&mut **tx)
        .await
        .map_err(db_error)?;
    rows.iter()
        .map(|r| {
            let v: String = r.try_get(0).map_err(db_error)?;
            let n: i64 = r.try_get(1).map_err(db_error)?;
            Ok((v, n as u64))
        })
        .collect()
}

/// A rebuild filling `search_doc_new` on its own session, which holds the rebuild lock.
struct PostgresRebuild {
    conn: AnyConnection,
}

#[async_trait]
impl IndexRebuild for PostgresRebuild {
    async fn add(&mut self, docs: Vec<IndexDocument>) -> anyhow::Result<()> {
        let mut tx = self.conn.begin().await?;
        upsert(&mut tx, NEW, &docs, Upsert::Rebuild).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn replace(&mut self, docs: Vec<IndexDocument>) -> anyhow::Result<()> {
        // An upsert replaces what is there.
        self.add(docs).await
    }

    async fn delete(&mut self, ids: Vec<String>) -> anyhow::Result<()> {
        let mut tx = self.conn.begin().await?;
        delete(&mut tx, NEW, &ids).await?;
        tombstone(&mut tx, &ids, true).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn finish(self: Box<Self>) -> anyhow::Result<()> {
        let mut conn = self.conn;
        conn.execute(format!("ANALYZE {NEW}").as_str()).await?;
        let mut tx = conn.begin().await?;
        // The live table first, in the order `apply` locks them.
        for stmt in [
            format!("LOCK TABLE {LIVE} IN ACCESS EXCLUSIVE MODE"),
            format!("LOCK TABLE {NEW} IN ACCESS EXCLUSIVE MODE"),
            format!("DROP TABLE {LIVE}"),
            format!("DROP TABLE {GONE}"),
            format!("ALTER TABLE {NEW} RENAME TO {LIVE}"),
            format!("ALTER TABLE {LIVE} RENAME CONSTRAINT {NEW}_pkey TO {LIVE}_pkey"),
            format!("COMMENT ON TABLE {LIVE} IS '{LAYOUT}'"),
        ] {
            tx.execute(stmt.as_str()).await?;
        }
        bump_version(&mut tx).await?;
        for suffix in INDEX_SUFFIXES {
            tx.execute(format!("ALTER INDEX {NEW}_{suffix} RENAME TO {LIVE}_{suffix}").as_str())
                .await?;
        }
        tx.commit().await?;
        sqlx::query("SELECT pg_advisory_unlock($1)")
            .bind(REBUILD_LOCK)
            .execute(&mut conn)
            .await?;
        conn.close().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facets(n: u64) -> (u64, Facets) {
        (n, vec![("tags".into(), vec![("a".into(), n)])])
    }

    #[test]
    fn cache_holds_one_version() {
        let mut c = Cache::default();
        c.put(1, "q".into(), facets(1));
        assert_eq!(c.get(1, "q"), Some(facets(1)));
        assert_eq!(c.get(2, "q"), None, "a change makes every entry stale");
        c.put(2, "q".into(), facets(2));
        // A search that started before the change does not bring the old answer back.
        c.put(1, "q".into(), facets(1));
        assert_eq!(c.get(2, "q"), Some(facets(2)));
        for i in 0..CACHE_ENTRIES + 1 {
            c.put(2, format!("k{i}"), facets(3));
        }
        assert!(c.entries.len() <= CACHE_ENTRIES);
    }
}
