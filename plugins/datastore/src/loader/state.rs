//! The loader's record of each resource (`datastore_load`): the current load's state, log,
//! counts and the table it is filling, and the table dropped with a load that is replaced,
//! interrupted or forgotten.

use std::sync::{Arc, Mutex};

use catalog_framework::prelude::*;
use catalog_framework::store::time::now_iso;
use sqlx::{AnyConnection, Row};

use crate::table::{self, Meta};

/// Log lines a load keeps.
const MAX_LOG: usize = 200;

/// The loader's row of a resource.
pub(super) struct LoadRow {
    pub(super) job_id: Option<String>,
    pub(super) load_id: Option<String>,
    pub(super) state: String,
    pub(super) file_hash: Option<String>,
    pub(super) loading_table: Option<String>,
    pub(super) rows_loaded: Option<i64>,
    pub(super) error: Option<String>,
    pub(super) logs: String,
    pub(super) requested: String,
    pub(super) finished: Option<String>,
    pub(super) last_updated: String,
}

pub(super) async fn load_row(
    conn: &mut AnyConnection,
    resource_id: &str,
) -> CkanResult<Option<LoadRow>> {
    let row = sqlx::query(
        "SELECT job_id, load_id, state, file_hash, loading_table, CAST(rows_loaded AS BIGINT) AS rows_loaded, error, logs, requested, finished, last_updated FROM datastore_load WHERE resource_id = $1",
    )
    .bind(resource_id)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(|r| LoadRow {
        job_id: r.try_get("job_id").ok(),
        load_id: r.try_get("load_id").ok(),
        state: r.try_get("state").unwrap_or_default(),
        file_hash: r.try_get("file_hash").ok(),
        loading_table: r.try_get("loading_table").ok(),
        rows_loaded: r.try_get("rows_loaded").ok(),
        error: r.try_get("error").ok(),
        logs: r.try_get("logs").unwrap_or_else(|_| "[]".into()),
        requested: r.try_get("requested").unwrap_or_default(),
        finished: r.try_get("finished").ok(),
        last_updated: r.try_get("last_updated").unwrap_or_default(),
    }))
}

/// The log of one load, kept in memory and written with each state change.
#[derive(Clone, Default)]
pub(super) struct Log(Arc<Mutex<Vec<Value>>>);

impl Log {
    pub(super) fn line(&self, level: &str, message: impl Into<String>) {
        let message = message.into();
        tracing::info!(target: "datastore_load", "{message}");
        let mut l = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if l.len() < MAX_LOG {
            l.push(json!({"timestamp": now_iso(), "message": message, "level": level}));
        }
    }
    pub(super) fn json(&self) -> String {
        Value::Array(
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
        )
        .to_string()
    }
}

/// Writes the load's state if it is still the resource's current load (a newer submit wins).
/// Whether it was.
pub(super) async fn set_state(
    app: &AppState,
    resource_id: &str,
    load_id: &str,
    state: &str,
    log: &Log,
    extra: &[(&str, Option<String>)],
) -> anyhow::Result<bool> {
    let mut sets = vec![
        "state = $3".to_string(),
        "logs = $4".to_string(),
        "last_updated = $5".to_string(),
    ];
    for (i, (col, _)) in extra.iter().enumerate() {
        sets.push(format!("{col} = ${}", i + 6));
    }
    let sql = format!(
        "UPDATE datastore_load SET {} WHERE resource_id = $1 AND load_id = $2",
        sets.join(", ")
    );
    let _guard = app.store.lock_writes().await;
    let mut q = sqlx::query(&sql)
        .bind(resource_id)
        .bind(load_id)
        .bind(state)
        .bind(log.json())
        .bind(now_iso());
    for (_, v) in extra {
        q = q.bind(v.clone());
    }
    Ok(q.execute(&app.store.pool).await?.rows_affected() > 0)
}

/// Drops the table the resource's current load was filling, if any.
pub(super) async fn drop_loading_table(app: &AppState, resource_id: &str) -> anyhow::Result<()> {
    let _guard = app.store.lock_writes().await;
    let mut conn = app.store.pool.acquire().await?;
    let Some(row) = load_row(&mut conn, resource_id)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?
    else {
        return Ok(());
    };
    let Some(name) = row.loading_table.filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    let current = table::load(&mut conn, resource_id)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    if current.is_some_and(|m| m.name == name) {
        return Ok(());
    }
    let meta = Meta {
        resource_id: resource_id.to_string(),
        name,
        fields: Vec::new(),
        primary_key: Vec::new(),
    };
    table::drop_bare(&mut conn, app.store.backend, &meta)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    sqlx::query("UPDATE datastore_load SET loading_table = NULL WHERE resource_id = $1")
        .bind(resource_id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Forgets the load of a resource that is deleted, and drops the table it left (a replaced
/// one, or one being filled); its current table goes with `DropTables` (lib.rs).
pub(crate) async fn forget(
    conn: &mut AnyConnection,
    backend: catalog_framework::store::Backend,
    resource_id: &str,
) -> CkanResult<()> {
    if let Some(name) = load_row(conn, resource_id)
        .await?
        .and_then(|r| r.loading_table)
        .filter(|n| !n.is_empty())
    {
        let meta = Meta {
            resource_id: resource_id.to_string(),
            name,
            fields: Vec::new(),
            primary_key: Vec::new(),
        };
        table::drop_bare(conn, backend, &meta).await?;
    }
    sqlx::query("DELETE FROM datastore_load WHERE resource_id = $1")
        .bind(resource_id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}
