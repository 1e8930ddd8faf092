//! Filling a new, unrecorded table from a surveyed file: PostgreSQL by `COPY` on a connection
//! of its own, SQLite by multi-row inserts in short transactions (each behind the writer lock
//! for a moment, so other writes go on during a long load). The table is no resource's until
//! the loader swaps it in, so readers never see it half-filled.

use catalog_framework::prelude::*;
use catalog_framework::store::Backend;
use sqlx::Connection;
use tokio::sync::mpsc;

use super::read::{csv_reader, Survey};
use crate::table::{self, Meta};
use crate::types::{quote, to_cell, Cell};

/// Rows handed from the reading thread to the writer at a time.
const BATCH_ROWS: usize = 2_000;
/// Batches in flight between the reader and the writer (what bounds the memory a load uses).
const BATCHES_IN_FLIGHT: usize = 4;
/// Rows a SQLite transaction writes before letting other writers in.
const SQLITE_ROWS_PER_TX: usize = 20_000;

/// Reads the rows of the surveyed file on a blocking thread, in batches of trimmed cells.
fn spawn_reader(survey: &Survey) -> mpsc::Receiver<anyhow::Result<Vec<Vec<String>>>> {
    let (tx, rx) = mpsc::channel(BATCHES_IN_FLIGHT);
    let path = survey.path.clone();
    let delimiter = survey.delimiter;
    let width = survey.columns.len();
    tokio::task::spawn_blocking(move || {
        let mut reader = match csv_reader(&path, delimiter) {
            Ok(r) => r,
            Err(e) => {
                let _ = tx.blocking_send(Err(anyhow::anyhow!("{e}")));
                return;
            }
        };
        let mut record = csv::StringRecord::new();
        let mut header_seen = false;
        let mut batch = Vec::with_capacity(BATCH_ROWS);
        loop {
            match reader.read_record(&mut record) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    let _ = tx.blocking_send(Err(anyhow::anyhow!("{e}")));
                    return;
                }
            }
            let blank = record.iter().all(|c| c.trim().is_empty());
            if !header_seen {
                header_seen = !blank;
                continue;
            }
            if blank && record.len() != width {
                continue;
            }
            batch.push(record.iter().map(|c| c.trim().to_string()).collect());
            if batch.len() == BATCH_ROWS {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH_ROWS));
                if tx.blocking_send(Ok(full)).is_err() {
                    return; // the writer gave up
                }
            }
        }
        if !batch.is_empty() {
            let _ = tx.blocking_send(Ok(batch));
        }
    });
    rx
}

/// Fills the table of `meta` (made with [`table::create_bare`]) with the file's rows and sets
/// up its full-text index; `progress` hears the rows written so far.
pub(crate) async fn fill(
    app: &AppState,
    meta: &Meta,
    survey: &Survey,
    progress: &(dyn Fn(u64) + Send + Sync),
) -> anyhow::Result<u64> {
    match app.store.backend {
        Backend::Postgres => fill_postgres(app, meta, survey, progress).await,
        Backend::Sqlite => fill_sqlite(app, meta, survey, progress).await,
    }
}

/// One row as `COPY … (FORMAT csv)` reads it: an empty cell unquoted (NULL), every other one
/// quoted.
fn copy_line(out: &mut Vec<u8>, row: &[String]) {
    for (i, cell) in row.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        if !cell.is_empty() {
            out.push(b'"');
            for b in cell.bytes() {
                if b == b'"' {
                    out.push(b'"');
                }
                out.push(b);
            }
            out.push(b'"');
        }
    }
    out.push(b'\n');
}

async fn fill_postgres(
    app: &AppState,
    meta: &Meta,
    survey: &Survey,
    progress: &(dyn Fn(u64) + Send + Sync),
) -> anyhow::Result<u64> {
    let started = std::time::Instant::now();
    let mut pg = sqlx::PgConnection::connect(&app.store.url).await?;
    // One transaction: the table is made, copied into frozen (COPY FREEZE needs the table
    // made in the same transaction), its full text computed as rows arrive. A load that fails
    // or dies leaves nothing behind. The full-text index is built once the table is swapped in
    // (`ensure_full_text_index`).
    let mut tx = pg.begin().await?;
    sqlx::query(&table::load_table_sql(meta))
        .execute(&mut *tx)
        .await?;
    let cols: Vec<String> = meta.fields.iter().map(|f| quote(&f.id)).collect();
    let mut copy = tx
        .copy_in_raw(&format!(
            "COPY {} ({}) FROM STDIN WITH (FORMAT csv, FREEZE)",
            meta.qualified(Backend::Postgres),
            cols.join(", ")
        ))
        .await?;
    let mut rx = spawn_reader(survey);
    let mut rows: u64 = 0;
    let mut buf = Vec::with_capacity(1 << 20);
    let mut reported = 0;
    while let Some(batch) = rx.recv().await {
        let batch = match batch {
            Ok(b) => b,
            Err(e) => {
                let _ = copy.abort("the file could not be read").await;
                return Err(e);
            }
        };
        for row in &batch {
            copy_line(&mut buf, row);
        }
        rows += batch.len() as u64;
        if buf.len() >= 1 << 20 {
            copy.send(std::mem::take(&mut buf)).await?;
        }
        if rows - reported >= 100_000 {
            reported = rows;
            progress(rows);
        }
    }
    if !buf.is_empty() {
        copy.send(buf).await?;
    }
    copy.finish().await?;
    progress(rows);
    let copied = started.elapsed();
    for stmt in table::load_table_finish(meta) {
        sqlx::query(&stmt).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    let indexed = started.elapsed();
    sqlx::query(&format!("ANALYZE {}", meta.qualified(Backend::Postgres)))
        .execute(&mut pg)
        .await?;
    tracing::info!(
        table = %meta.name,
        rows,
        copy_s = copied.as_secs_f64(),
        finish_s = (indexed - copied).as_secs_f64(),
        analyze_s = (started.elapsed() - indexed).as_secs_f64(),
        "datastore load filled (PostgreSQL)"
    );
    pg.close().await.ok();
    Ok(rows)
}

/// A cell as SQLite stores it: empty is NULL (as PostgreSQL's COPY reads it), else the
/// column type's value.
fn sqlite_value(f: &crate::table::Field, cell: &str) -> anyhow::Result<rusqlite::types::Value> {
    use rusqlite::types::Value as V;
    if cell.is_empty() {
        return Ok(V::Null);
    }
    Ok(
        match to_cell(&f.ftype, &Value::String(cell.to_string()))
            .map_err(|m| anyhow::anyhow!("{m}"))?
        {
            Cell::Null => V::Null,
            Cell::Text(t) => V::Text(t),
            Cell::Int(i) => V::Integer(i),
            Cell::Float(x) => V::Real(x),
            Cell::Bool(b) => V::Integer(i64::from(b)),
        },
    )
}

/// Writes one transaction's rows and their full-text entries on the loader's own
/// connection.
fn sqlite_chunk(
    conn: &rusqlite::Connection,
    meta: &Meta,
    insert: &str,
    fts: &str,
    rows: &[Vec<String>],
) -> anyhow::Result<()> {
    let tx = conn.unchecked_transaction()?;
    {
        let mut ins = tx.prepare_cached(insert)?;
        let mut ft = tx.prepare_cached(fts)?;
        let mut values = Vec::with_capacity(meta.fields.len());
        for row in rows {
            values.clear();
            for (f, cell) in meta.fields.iter().zip(row) {
                values.push(sqlite_value(f, cell)?);
            }
            ins.execute(rusqlite::params_from_iter(values.iter()))?;
            let id = tx.last_insert_rowid();
            ft.execute(rusqlite::params![id, row.join(" ")])?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// PostgreSQL: builds the full-text index of the resource's table if it has none, or only an
/// invalid one (left by a build that was killed); answers how long a build took, or `None`
/// when there was nothing to do.
pub(crate) async fn ensure_full_text_index(
    app: &AppState,
    resource_id: &str,
) -> anyhow::Result<Option<std::time::Duration>> {
    let meta = {
        let mut conn = app.store.pool.acquire().await?;
        table::load(&mut conn, resource_id)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?
    };
    let Some(meta) = meta else { return Ok(None) };
    let (name, build) = table::full_text_index_sql(&meta);
    let mut pg = sqlx::PgConnection::connect(&app.store.url).await?;
    let valid: Option<bool> = sqlx::query_scalar(
        "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
         JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'datastore' AND c.relname = $1",
    )
    .bind(&name)
    .fetch_optional(&mut pg)
    .await?;
    match valid {
        Some(true) => return Ok(None),
        Some(false) => {
            sqlx::query(&format!(
                "DROP INDEX CONCURRENTLY IF EXISTS datastore.{}",
                quote(&name)
            ))
            .execute(&mut pg)
            .await?;
        }
        None => {}
    }
    let started = std::time::Instant::now();
    sqlx::query("SET maintenance_work_mem = '256MB'")
        .execute(&mut pg)
        .await?;
    sqlx::query(&build).execute(&mut pg).await?;
    pg.close().await.ok();
    Ok(Some(started.elapsed()))
}

async fn fill_sqlite(
    app: &AppState,
    meta: &Meta,
    survey: &Survey,
    progress: &(dyn Fn(u64) + Send + Sync),
) -> anyhow::Result<u64> {
    // A connection of its own (rusqlite: prepared statements bound straight from the cells,
    // no per-value conversions on the way), used on a blocking thread, one transaction of
    // rows at a time behind the writer lock.
    let path = table::sqlite_file(&app.store.url)
        .ok_or_else(|| anyhow::anyhow!("the loader needs the SQLite database in a file"))?;
    let conn = tokio::task::spawn_blocking(move || -> anyhow::Result<rusqlite::Connection> {
        let c = rusqlite::Connection::open(&path)?;
        c.busy_timeout(std::time::Duration::from_secs(10))?;
        c.execute_batch("PRAGMA synchronous = NORMAL;")?;
        Ok(c)
    })
    .await??;
    let cols: Vec<String> = meta.fields.iter().map(|f| quote(&f.id)).collect();
    let marks = vec!["?"; meta.fields.len()].join(", ");
    let insert = format!(
        "INSERT INTO {} ({}) VALUES ({marks})",
        meta.qualified(Backend::Sqlite),
        cols.join(", ")
    );
    let fts = format!(
        "INSERT INTO {}(rowid, body) VALUES (?, ?)",
        quote(&format!("{}_fts", meta.name))
    );
    let shared = std::sync::Arc::new((std::sync::Mutex::new(conn), meta.clone(), insert, fts));
    let mut rx = spawn_reader(survey);
    let mut rows: u64 = 0;
    let mut pending: Vec<Vec<String>> = Vec::new();
    let mut done = false;
    while !done {
        // Gather a transaction's worth of rows, then write them behind the lock.
        while pending.len() < SQLITE_ROWS_PER_TX {
            match rx.recv().await {
                Some(Ok(batch)) => pending.extend(batch),
                Some(Err(e)) => return Err(e),
                None => {
                    done = true;
                    break;
                }
            }
        }
        if pending.is_empty() {
            break;
        }
        let n = pending.len() as u64;
        let _guard = app.store.lock_writes().await;
        let (s, chunk) = (shared.clone(), std::mem::take(&mut pending));
        tokio::task::spawn_blocking(move || {
            let (conn, meta, insert, fts) = &*s;
            let conn = conn.lock().unwrap_or_else(|p| p.into_inner());
            sqlite_chunk(&conn, meta, insert, fts, &chunk)
        })
        .await??;
        rows += n;
        progress(rows);
    }
    tracing::info!(table = %meta.name, rows, "datastore load filled (SQLite)");
    // The triggers that keep the full-text index from now on.
    let _guard = app.store.lock_writes().await;
    let mut tx = app.store.begin_write().await?;
    table::full_text(&mut tx, Backend::Sqlite, meta, true)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    tx.commit().await?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    #[test]
    fn copy_lines_quote_cells_and_leave_empty_ones_null() {
        let mut out = Vec::new();
        super::copy_line(&mut out, &["a\"b".into(), String::new(), "x,y\nz".into()]);
        assert_eq!(out, b"\"a\"\"b\",,\"x,y\nz\"\n");
    }
}
