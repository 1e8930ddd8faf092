//! A resource's table: what the DataStore records of it (`datastore_table`), its DDL on
//! SQLite and PostgreSQL, writing rows and reading them back. Table names are made from a hash
//! of the resource id, never from user text; column names are checked (CKAN's rules) and
//! always quoted.

use catalog_framework::prelude::*;
use catalog_framework::store::Backend;
use sha2::{Digest, Sha256};
use sqlx::any::AnyArguments;
use sqlx::query::Query;
use sqlx::{Any, AnyConnection, Row};

/// Plain indexes a table may have.
pub(crate) const MAX_INDEXES: usize = 64;

use crate::types::{parse_type, quote, Cell, FieldType, Kind};

/// A column: its id, its type and CKAN's free-form `info`.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub(crate) id: String,
    pub(crate) ftype: FieldType,
    pub(crate) info: Option<Value>,
}

impl Field {
    /// The field as `datastore_search` and `datastore_info` report it.
    pub(crate) fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("id".into(), json!(self.id));
        m.insert("type".into(), json!(self.ftype.reported));
        if let Some(info) = self.info.as_ref().filter(|i| !is_empty(i)) {
            m.insert("info".into(), info.clone());
        }
        Value::Object(m)
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// What the DataStore records of a resource's table.
#[derive(Debug, Clone)]
pub(crate) struct Meta {
    pub(crate) resource_id: String,
    pub(crate) name: String,
    pub(crate) fields: Vec<Field>,
    pub(crate) primary_key: Vec<String>,
}

/// The database file of a `sqlite://path?options` URL (`None` for an in-memory database):
/// what the SQL search and the loader open connections of their own to.
pub(crate) fn sqlite_file(url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or_default();
    (!path.is_empty() && path != ":memory:").then(|| path.to_string())
}

/// The table's name for a resource id (a hash: any id makes a safe name).
pub(crate) fn table_name(resource_id: &str) -> String {
    let h = hex::encode(Sha256::digest(resource_id.as_bytes()));
    format!("ds_{}", &h[..32])
}

impl Meta {
    /// The table as SQL names it.
    pub(crate) fn qualified(&self, backend: Backend) -> String {
        match backend {
            Backend::Postgres => format!("datastore.{}", quote(&self.name)),
            Backend::Sqlite => quote(&self.name),
        }
    }

    fn fts(&self) -> String {
        quote(&format!("{}_fts", self.name))
    }

    pub(crate) fn field(&self, id: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.id == id)
    }
}

fn fields_json(fields: &[Field]) -> String {
    Value::Array(
        fields
            .iter()
            .map(|f| json!({"id": f.id, "type": f.ftype.reported, "info": f.info}))
            .collect(),
    )
    .to_string()
}

/// The table of a resource, if it has one.
pub(crate) async fn load(conn: &mut AnyConnection, resource_id: &str) -> CkanResult<Option<Meta>> {
    let row = sqlx::query(
        "SELECT resource_id, table_name, fields, primary_key FROM datastore_table WHERE resource_id = $1",
    )
    .bind(resource_id)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let fields: Vec<Value> =
        serde_json::from_str(&row.try_get::<String, _>("fields").unwrap_or_default())
            .unwrap_or_default();
    let fields = fields
        .iter()
        .filter_map(|f| {
            Some(Field {
                id: f["id"].as_str()?.to_string(),
                ftype: parse_type(f["type"].as_str()?)?,
                info: Some(f["info"].clone()).filter(|i| !i.is_null()),
            })
        })
        .collect();
    let primary_key: Vec<String> =
        serde_json::from_str(&row.try_get::<String, _>("primary_key").unwrap_or_default())
            .unwrap_or_default();
    Ok(Some(Meta {
        resource_id: row.try_get("resource_id")?,
        name: row.try_get("table_name")?,
        fields,
        primary_key,
    }))
}

async fn exec(conn: &mut AnyConnection, sql: &str) -> CkanResult<()> {
    sqlx::query(sql).execute(&mut *conn).await?;
    Ok(())
}

/// SQLite keeps the full-text index with triggers that name every column: made again when
/// the columns change.
async fn sqlite_fts_triggers(conn: &mut AnyConnection, meta: &Meta) -> CkanResult<()> {
    let t = quote(&meta.name);
    let fts = meta.fts();
    let body = |row: &str| full_text_body(meta, row, Backend::Sqlite);
    for suffix in ["ai", "au", "ad"] {
        exec(
            conn,
            &format!(
                "DROP TRIGGER IF EXISTS {}",
                quote(&format!("{}_{suffix}", meta.name))
            ),
        )
        .await?;
    }
    exec(
        conn,
        &format!(
            "CREATE TRIGGER {} AFTER INSERT ON {t} BEGIN INSERT INTO {fts}(rowid, body) VALUES (new._id, {}); END",
            quote(&format!("{}_ai", meta.name)),
            body("new")
        ),
    )
    .await?;
    exec(
        conn,
        &format!(
            "CREATE TRIGGER {} AFTER UPDATE ON {t} BEGIN DELETE FROM {fts} WHERE rowid = old._id; INSERT INTO {fts}(rowid, body) VALUES (new._id, {}); END",
            quote(&format!("{}_au", meta.name)),
            body("new")
        ),
    )
    .await?;
    exec(
        conn,
        &format!(
            "CREATE TRIGGER {} AFTER DELETE ON {t} BEGIN DELETE FROM {fts} WHERE rowid = old._id; END",
            quote(&format!("{}_ad", meta.name))
        ),
    )
    .await
}

/// Creates the table of `meta` (new), with its full-text index, and records it.
pub(crate) async fn create(
    conn: &mut AnyConnection,
    backend: Backend,
    meta: &Meta,
) -> CkanResult<()> {
    create_bare(conn, backend, meta).await?;
    full_text(conn, backend, meta, false).await?;
    record(conn, meta).await
}

/// Creates the table of `meta` alone: its columns (and on SQLite the empty full-text table),
/// without the full-text upkeep, which [`full_text`] adds once the rows are in (the loader
/// fills a table this way, faster than row by row). Not recorded.
pub(crate) async fn create_bare(
    conn: &mut AnyConnection,
    backend: Backend,
    meta: &Meta,
) -> CkanResult<()> {
    let cols: Vec<String> = meta
        .fields
        .iter()
        .map(|f| format!("{} {}", quote(&f.id), f.ftype.column_sql(backend)))
        .collect();
    let t = meta.qualified(backend);
    let mut all = match backend {
        Backend::Postgres => vec![
            "_id BIGSERIAL PRIMARY KEY".to_string(),
            "_full_text tsvector".to_string(),
        ],
        Backend::Sqlite => vec!["_id INTEGER PRIMARY KEY AUTOINCREMENT".to_string()],
    };
    all.extend(cols);
    exec(conn, &format!("CREATE TABLE {t} ({})", all.join(", "))).await?;
    if backend == Backend::Sqlite {
        exec(
            conn,
            &format!(
                "CREATE VIRTUAL TABLE {} USING fts5(body, tokenize = 'porter unicode61')",
                meta.fts()
            ),
        )
        .await?;
    }
    Ok(())
}

/// PostgreSQL: the statements that make a table for a load inside the loading transaction
/// (so `COPY … FREEZE` may write it frozen, visible to index-only scans without a VACUUM),
/// with `_full_text` a generated column, computed as each row is copied (no second pass over
/// the table); [`load_table_finish`] turns it into a plain column kept by the trigger.
pub(crate) fn load_table_sql(meta: &Meta) -> String {
    let cols: Vec<String> = meta
        .fields
        .iter()
        .map(|f| format!("{} {}", quote(&f.id), f.ftype.column_sql(Backend::Postgres)))
        .collect();
    let body: Vec<String> = meta
        .fields
        .iter()
        .map(|f| {
            let col = quote(&f.id);
            match f.ftype.kind {
                Kind::Text => format!("coalesce({col}, '')"),
                Kind::Int | Kind::Float | Kind::Numeric | Kind::Bool => {
                    format!("coalesce(CAST({col} AS text), '')")
                }
                _ => format!("coalesce(datastore.as_text({col}), '')"),
            }
        })
        .collect();
    let body = if body.is_empty() {
        "''".to_string()
    } else {
        body.join(" || ' ' || ")
    };
    let mut all = vec![
        "_id BIGSERIAL PRIMARY KEY".to_string(),
        format!("_full_text tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, {body})) STORED"),
    ];
    all.extend(cols);
    format!(
        "CREATE TABLE {} ({})",
        meta.qualified(Backend::Postgres),
        all.join(", ")
    )
}

/// PostgreSQL: after a load's `COPY`, `_full_text` becomes a plain column (a catalog change,
/// no rewrite) kept by the trigger like every other table's. Its GIN index is built after the
/// table is swapped in ([`full_text_index_sql`]).
pub(crate) fn load_table_finish(meta: &Meta) -> Vec<String> {
    let t = meta.qualified(Backend::Postgres);
    vec![
        format!("ALTER TABLE {t} ALTER COLUMN _full_text DROP EXPRESSION"),
        format!(
            "CREATE TRIGGER {} BEFORE INSERT OR UPDATE ON {t} FOR EACH ROW EXECUTE FUNCTION datastore.full_text()",
            quote(&format!("{}_full_text_trigger", meta.name))
        ),
    ]
}

/// PostgreSQL: the name of a table's full-text index, and the statement that builds it without
/// blocking the table's readers or writers.
pub(crate) fn full_text_index_sql(meta: &Meta) -> (String, String) {
    let name = format!("{}_full_text", meta.name);
    let sql = format!(
        "CREATE INDEX CONCURRENTLY IF NOT EXISTS {} ON {} USING gin(_full_text)",
        quote(&name),
        meta.qualified(Backend::Postgres)
    );
    (name, sql)
}

/// The text of a row the full-text index holds: every column, as text, space-separated.
fn full_text_body(meta: &Meta, row: &str, backend: Backend) -> String {
    if meta.fields.is_empty() {
        return "''".to_string();
    }
    let cols: Vec<String> = meta
        .fields
        .iter()
        .map(|f| {
            let col = if row.is_empty() {
                quote(&f.id)
            } else {
                format!("{row}.{}", quote(&f.id))
            };
            match backend {
                Backend::Postgres => format!("coalesce(CAST({col} AS text), '')"),
                Backend::Sqlite => format!("coalesce({col}, '')"),
            }
        })
        .collect();
    balanced_concat(&cols)
}

/// `a || ' ' || b || …` as a balanced tree of parenthesised halves: SQLite refuses an
/// expression deeper than 1,000, which a flat chain reached at about 500 columns (issue 46);
/// halves keep the depth near 2·log2(columns).
fn balanced_concat(parts: &[String]) -> String {
    match parts {
        [] => "''".to_string(),
        [one] => one.clone(),
        _ => {
            let (l, r) = parts.split_at(parts.len() / 2);
            format!("({} || ' ' || {})", balanced_concat(l), balanced_concat(r))
        }
    }
}

/// Sets up the full-text index of the table of `meta` and what keeps it current: on
/// PostgreSQL the GIN index and the trigger, on SQLite the triggers. `rows_in`: the table has
/// rows already, which PostgreSQL indexes first in one statement (SQLite's loader fills the
/// full-text table as it writes the rows).
pub(crate) async fn full_text(
    conn: &mut AnyConnection,
    backend: Backend,
    meta: &Meta,
    rows_in: bool,
) -> CkanResult<()> {
    let t = meta.qualified(backend);
    match backend {
        Backend::Postgres => {
            if rows_in {
                exec(
                    conn,
                    &format!(
                        "UPDATE {t} SET _full_text = to_tsvector('english', {})",
                        full_text_body(meta, "", backend)
                    ),
                )
                .await?;
            }
            exec(
                conn,
                &format!(
                    "CREATE INDEX {} ON {t} USING gin(_full_text)",
                    quote(&format!("{}_full_text", meta.name))
                ),
            )
            .await?;
            exec(
                conn,
                &format!(
                    "CREATE TRIGGER {} BEFORE INSERT OR UPDATE ON {t} FOR EACH ROW EXECUTE FUNCTION datastore.full_text()",
                    quote(&format!("{}_full_text_trigger", meta.name))
                ),
            )
            .await
        }
        Backend::Sqlite => sqlite_fts_triggers(conn, meta).await,
    }
}

/// Records the table of `meta` as its resource's.
pub(crate) async fn record(conn: &mut AnyConnection, meta: &Meta) -> CkanResult<()> {
    sqlx::query(
        "INSERT INTO datastore_table (resource_id, table_name, fields, primary_key, created) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&meta.resource_id)
    .bind(&meta.name)
    .bind(fields_json(&meta.fields))
    .bind(json!(meta.primary_key).to_string())
    .bind(catalog_framework::store::time::now_iso())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Adds the fields of `meta` after the first `existing` ones as new columns.
pub(crate) async fn add_columns(
    conn: &mut AnyConnection,
    backend: Backend,
    meta: &Meta,
    existing: usize,
) -> CkanResult<()> {
    let t = meta.qualified(backend);
    for f in &meta.fields[existing..] {
        exec(
            conn,
            &format!(
                "ALTER TABLE {t} ADD COLUMN {} {}",
                quote(&f.id),
                f.ftype.column_sql(backend)
            ),
        )
        .await?;
    }
    if backend == Backend::Sqlite && existing < meta.fields.len() {
        sqlite_fts_triggers(conn, meta).await?;
    }
    save_meta(conn, meta).await
}

/// Records the fields and key of `meta`.
pub(crate) async fn save_meta(conn: &mut AnyConnection, meta: &Meta) -> CkanResult<()> {
    sqlx::query("UPDATE datastore_table SET fields = $2, primary_key = $3 WHERE resource_id = $1")
        .bind(&meta.resource_id)
        .bind(fields_json(&meta.fields))
        .bind(json!(meta.primary_key).to_string())
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Makes the unique index of the key (`primary_key`, CKAN's unique index) and the plain
/// `indexes`, replacing the earlier ones. `Err` names what failed (an existing duplicate).
pub(crate) async fn set_indexes(
    conn: &mut AnyConnection,
    backend: Backend,
    meta: &Meta,
    indexes: Option<&[Vec<String>]>,
    key_changed: bool,
) -> CkanResult<()> {
    let t = meta.qualified(backend);
    let schema = if backend == Backend::Postgres {
        "datastore."
    } else {
        ""
    };
    if key_changed {
        let name = format!("{}_key", meta.name);
        exec(
            conn,
            &format!("DROP INDEX IF EXISTS {schema}{}", quote(&name)),
        )
        .await?;
        if !meta.primary_key.is_empty() {
            let cols: Vec<String> = meta.primary_key.iter().map(|c| quote(c)).collect();
            let made = sqlx::query(&format!(
                "CREATE UNIQUE INDEX {} ON {t} ({})",
                quote(&name),
                cols.join(", ")
            ))
            .execute(&mut *conn)
            .await;
            if let Err(e) = made {
                let mut errs = ValidationBuilder::default();
                errs.push(
                    "constraints",
                    "Cannot insert records or create indexbecause of uniqueness constraint",
                );
                tracing::debug!("datastore unique index: {e}");
                return Err(errs.finish().unwrap_err());
            }
        }
    }
    if let Some(indexes) = indexes {
        // The plain indexes made before (named `<table>_idx<n>`), as the store lists them.
        let listed = match backend {
            Backend::Postgres => {
                "SELECT CAST(indexname AS text) AS name FROM pg_indexes WHERE schemaname = 'datastore' AND tablename = $1"
            }
            Backend::Sqlite => {
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = $1"
            }
        };
        let prefix = format!("{}_idx", meta.name);
        let old: Vec<String> = sqlx::query(listed)
            .bind(&meta.name)
            .fetch_all(&mut *conn)
            .await?
            .iter()
            .filter_map(|r| r.try_get::<String, _>("name").ok())
            .filter(|n| n.starts_with(&prefix))
            .collect();
        for name in old {
            exec(
                conn,
                &format!("DROP INDEX IF EXISTS {schema}{}", quote(&name)),
            )
            .await?;
        }
        for (n, cols) in indexes.iter().enumerate() {
            let cols: Vec<String> = cols.iter().map(|c| quote(c)).collect();
            exec(
                conn,
                &format!(
                    "CREATE INDEX {} ON {t} ({})",
                    quote(&format!("{prefix}{n}")),
                    cols.join(", ")
                ),
            )
            .await?;
        }
    }
    Ok(())
}

/// Drops the table of `meta` (and its full-text table), recorded or not.
pub(crate) async fn drop_bare(
    conn: &mut AnyConnection,
    backend: Backend,
    meta: &Meta,
) -> CkanResult<()> {
    exec(
        conn,
        &format!("DROP TABLE IF EXISTS {}", meta.qualified(backend)),
    )
    .await?;
    if backend == Backend::Sqlite {
        exec(conn, &format!("DROP TABLE IF EXISTS {}", meta.fts())).await?;
    }
    Ok(())
}

/// Forgets the resource's table without dropping it (the loader drops a replaced table a
/// little later).
pub(crate) async fn forget(conn: &mut AnyConnection, resource_id: &str) -> CkanResult<()> {
    sqlx::query("DELETE FROM datastore_table WHERE resource_id = $1")
        .bind(resource_id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// The resource id an alias stands for, if `name` is one.
pub(crate) async fn alias_target(
    conn: &mut AnyConnection,
    name: &str,
) -> CkanResult<Option<String>> {
    Ok(
        sqlx::query("SELECT resource_id FROM datastore_alias WHERE alias = $1")
            .bind(name)
            .fetch_optional(&mut *conn)
            .await?
            .map(|r| r.try_get("resource_id"))
            .transpose()?,
    )
}

/// The table of a resource, found by its id or by an alias of it.
pub(crate) async fn load_by_name(conn: &mut AnyConnection, name: &str) -> CkanResult<Option<Meta>> {
    if let Some(meta) = load(conn, name).await? {
        return Ok(Some(meta));
    }
    match alias_target(conn, name).await? {
        Some(id) => load(conn, &id).await,
        None => Ok(None),
    }
}

/// The aliases of a resource's table, sorted.
pub(crate) async fn aliases_of(
    conn: &mut AnyConnection,
    resource_id: &str,
) -> CkanResult<Vec<String>> {
    let rows =
        sqlx::query("SELECT alias FROM datastore_alias WHERE resource_id = $1 ORDER BY alias")
            .bind(resource_id)
            .fetch_all(&mut *conn)
            .await?;
    rows.iter()
        .map(|r| r.try_get::<String, _>("alias").map_err(CkanError::from))
        .collect()
}

/// Replaces a resource's aliases (CKAN: `aliases` given to datastore_create replaces the old
/// ones). A name another resource's alias or table has is refused with CKAN's messages.
pub(crate) async fn set_aliases(
    conn: &mut AnyConnection,
    resource_id: &str,
    aliases: &[String],
) -> CkanResult<()> {
    sqlx::query("DELETE FROM datastore_alias WHERE resource_id = $1")
        .bind(resource_id)
        .execute(&mut *conn)
        .await?;
    for alias in aliases {
        if alias_target(conn, alias).await?.is_some() {
            return Err(validation()
                .field("alias", format!("The alias \"{alias}\" already exists."))
                .build());
        }
        if alias == resource_id || load(conn, alias).await?.is_some() {
            return Err(validation()
                .field("alias", format!("\"{alias}\" already exists"))
                .build());
        }
        sqlx::query("INSERT INTO datastore_alias (alias, resource_id) VALUES ($1, $2)")
            .bind(alias)
            .bind(resource_id)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Drops the table and forgets it, with its aliases.
pub(crate) async fn drop(
    conn: &mut AnyConnection,
    backend: Backend,
    meta: &Meta,
) -> CkanResult<()> {
    drop_bare(conn, backend, meta).await?;
    // The aliases go with the table (CKAN drops their views with it).
    set_aliases(conn, &meta.resource_id, &[]).await?;
    forget(conn, &meta.resource_id).await
}

/// Binds a value.
pub(crate) fn bind<'q>(
    q: Query<'q, Any, AnyArguments<'q>>,
    cell: Cell,
) -> Query<'q, Any, AnyArguments<'q>> {
    match cell {
        Cell::Null => q.bind(None::<String>),
        Cell::Text(s) => q.bind(s),
        Cell::Int(i) => q.bind(i),
        Cell::Float(f) => q.bind(f),
        Cell::Bool(b) => q.bind(b),
    }
}

/// Inserts one row (`_id` when given): the columns named in `cells`.
pub(crate) async fn insert_row(
    conn: &mut AnyConnection,
    backend: Backend,
    meta: &Meta,
    id: Option<i64>,
    cells: Vec<(&Field, Cell)>,
) -> Result<(), sqlx::Error> {
    let mut cols = Vec::new();
    let mut marks = Vec::new();
    if id.is_some() {
        cols.push("_id".to_string());
        marks.push("$1".to_string());
    }
    let first = usize::from(id.is_some()) + 1;
    for (i, (f, _)) in cells.iter().enumerate() {
        cols.push(quote(&f.id));
        marks.push(f.ftype.placeholder(backend, first + i));
    }
    let sql = if cols.is_empty() {
        format!("INSERT INTO {} DEFAULT VALUES", meta.qualified(backend))
    } else {
        format!(
            "INSERT INTO {} ({}) VALUES ({})",
            meta.qualified(backend),
            cols.join(", "),
            marks.join(", ")
        )
    };
    let mut q = sqlx::query(&sql);
    if let Some(id) = id {
        q = q.bind(id);
    }
    for (_, c) in cells {
        q = bind(q, c);
    }
    q.execute(&mut *conn).await.map(|_| ())
}

/// Updates the row(s) whose key columns equal `key`: the columns named in `cells`. The number
/// of rows changed.
pub(crate) async fn update_rows(
    conn: &mut AnyConnection,
    backend: Backend,
    meta: &Meta,
    key: Vec<(String, Option<FieldType>, Cell)>,
    cells: Vec<(&Field, Cell)>,
) -> Result<u64, sqlx::Error> {
    let mut n = 0;
    let mut sets = Vec::new();
    for (f, _) in &cells {
        n += 1;
        sets.push(format!(
            "{} = {}",
            quote(&f.id),
            f.ftype.placeholder(backend, n)
        ));
    }
    if sets.is_empty() {
        // Nothing to change: the rows that match still count as found.
        sets.push("_id = _id".to_string());
    }
    let mut wheres = Vec::new();
    for (col, t, _) in &key {
        n += 1;
        let mark = t.map_or(format!("${n}"), |t| t.placeholder(backend, n));
        wheres.push(format!(
            "{} = {mark}",
            if col == "_id" {
                col.clone()
            } else {
                quote(col)
            }
        ));
    }
    let sql = format!(
        "UPDATE {} SET {} WHERE {}",
        meta.qualified(backend),
        sets.join(", "),
        wheres.join(" AND ")
    );
    let mut q = sqlx::query(&sql);
    for (_, c) in cells {
        q = bind(q, c);
    }
    for (_, _, c) in key {
        q = bind(q, c);
    }
    q.execute(&mut *conn).await.map(|r| r.rows_affected())
}

/// A column as read back: every value as text (each store's own text of it), converted by
/// [`crate::types::from_text`].
pub(crate) fn select_expr(backend: Backend, col: &str) -> String {
    match backend {
        Backend::Postgres => format!("CAST({col} AS text)"),
        Backend::Sqlite => format!("CAST({col} AS TEXT)"),
    }
}

#[cfg(test)]
mod tests {
    use super::balanced_concat;

    #[test]
    fn a_concatenation_of_many_columns_stays_shallow() {
        let parts: Vec<String> = (0..4).map(|i| format!("c{i}")).collect();
        assert_eq!(
            balanced_concat(&parts),
            "((c0 || ' ' || c1) || ' ' || (c2 || ' ' || c3))"
        );
        let many: Vec<String> = (0..1000).map(|i| format!("c{i}")).collect();
        let sql = balanced_concat(&many);
        let mut depth = 0i32;
        let mut max = 0;
        for ch in sql.chars() {
            match ch {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            max = max.max(depth);
        }
        assert!(max <= 11, "{max}");
    }
}
