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
/// Values one SQLite statement binds at most.
const SQLITE_MAX_BINDS: usize = 30_000;
/// Rows indexed for full text per SQLite transaction.
const SQLITE_FTS_ROWS_PER_TX: i64 = 100_000;

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
    let mut pg = sqlx::PgConnection::connect(&app.store.url).await?;
    let cols: Vec<String> = meta.fields.iter().map(|f| quote(&f.id)).collect();
    let mut copy = pg
        .copy_in_raw(&format!(
            "COPY {} ({}) FROM STDIN WITH (FORMAT csv)",
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
    // The full-text column in one pass, its index and trigger, and fresh statistics.
    let mut conn = app.store.pool.acquire().await?;
    table::full_text(&mut conn, Backend::Postgres, meta, true)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    sqlx::query(&format!("ANALYZE {}", meta.qualified(Backend::Postgres)))
        .execute(&mut *conn)
        .await?;
    pg.close().await.ok();
    Ok(rows)
}

async fn fill_sqlite(
    app: &AppState,
    meta: &Meta,
    survey: &Survey,
    progress: &(dyn Fn(u64) + Send + Sync),
) -> anyhow::Result<u64> {
    let width = meta.fields.len().max(1);
    let per_stmt = (SQLITE_MAX_BINDS / width).clamp(1, 500);
    let cols: Vec<String> = meta.fields.iter().map(|f| quote(&f.id)).collect();
    let stmt = |n: usize| {
        let mut sql = format!(
            "INSERT INTO {} ({}) VALUES ",
            meta.qualified(Backend::Sqlite),
            cols.join(", ")
        );
        let mut k = 0;
        for r in 0..n {
            if r > 0 {
                sql.push_str(", ");
            }
            sql.push('(');
            for c in 0..width {
                if c > 0 {
                    sql.push_str(", ");
                }
                k += 1;
                sql.push_str(&format!("${k}"));
            }
            sql.push(')');
        }
        sql
    };
    let full = stmt(per_stmt);
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
        let _guard = app.store.lock_writes().await;
        let mut tx = app.store.pool.begin_with("BEGIN IMMEDIATE").await?;
        for chunk in pending.chunks(per_stmt) {
            let partial;
            let sql = if chunk.len() == per_stmt {
                &full
            } else {
                partial = stmt(chunk.len());
                &partial
            };
            let mut q = sqlx::query(sql);
            for row in chunk {
                for (f, cell) in meta.fields.iter().zip(row) {
                    // An empty cell is NULL, as PostgreSQL's COPY reads it.
                    let c = if cell.is_empty() {
                        Cell::Null
                    } else {
                        to_cell(&f.ftype, &Value::String(cell.clone()))
                            .map_err(|m| anyhow::anyhow!("{m}"))?
                    };
                    q = table::bind(q, c);
                }
            }
            q.execute(&mut *tx).await?;
        }
        tx.commit().await?;
        rows += pending.len() as u64;
        pending.clear();
        progress(rows);
    }
    // The full-text index, in pieces, then the triggers that keep it.
    let mut after = 0i64;
    while after < rows as i64 {
        let upto = after + SQLITE_FTS_ROWS_PER_TX;
        let _guard = app.store.lock_writes().await;
        let mut tx = app.store.pool.begin_with("BEGIN IMMEDIATE").await?;
        table::fill_sqlite_fts(&mut tx, meta, after, upto)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        tx.commit().await?;
        after = upto;
    }
    let _guard = app.store.lock_writes().await;
    let mut tx = app.store.pool.begin_with("BEGIN IMMEDIATE").await?;
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
