//! The serving nodes of a deployment on PostgreSQL: each `catalog serve` keeps a row in
//! `catalog_node` while it runs (its file store and when it was last seen), so that a node started beside
//! others on one PostgreSQL database can warn when its file store is a local directory — a
//! file uploaded through one node would not be found by the others (docs/FILE-STORE.md).

use std::time::Duration;

use catalog_framework::context::AppState;
use catalog_framework::store::Backend;
use chrono::Utc;
use sqlx::Row;

/// How often a node says it is still there.
const HEARTBEAT: Duration = Duration::from_secs(30);
/// A node not seen for this long is taken to be gone.
const GONE_AFTER_SECS: i64 = 120;

fn stamp(t: chrono::DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6f").to_string()
}

/// Registers this node; answers the other live nodes' (id, file store).
pub(crate) async fn register(app: &AppState, id: &str) -> anyhow::Result<Vec<(String, String)>> {
    let now = Utc::now();
    let cutoff = stamp(now - chrono::Duration::seconds(GONE_AFTER_SECS));
    let mut conn = app.store.pool.acquire().await?;
    sqlx::query("DELETE FROM catalog_node WHERE seen < $1 OR id = $2")
        .bind(&cutoff)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    let others = sqlx::query("SELECT id, files FROM catalog_node ORDER BY started")
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|r| (r.get::<String, _>(0), r.get::<String, _>(1)))
        .collect();
    sqlx::query("INSERT INTO catalog_node (id, files, started, seen) VALUES ($1, $2, $3, $3)")
        .bind(id)
        .bind(&app.files.describe)
        .bind(stamp(now))
        .execute(&mut *conn)
        .await?;
    Ok(others)
}

/// What a node should be told about its neighbours: a warning when several nodes share the
/// database and a file uploaded through one could not be read through another.
pub(crate) fn file_store_warning(
    mine: &str,
    mine_is_local: bool,
    others: &[(String, String)],
) -> Option<String> {
    let first = others.first()?;
    if mine_is_local {
        return Some(format!(
            "{} other node(s) serve this database (first: {}, file store {}), and this node's file store is a local directory ({mine}): files uploaded through one node will not be found through the others; set catalog.storage.backend = \"s3\" on every node (docs/FILE-STORE.md)",
            others.len(),
            first.0,
            first.1
        ));
    }
    others
        .iter()
        .find(|(_, files)| files != mine)
        .map(|(id, files)| {
            format!(
                "node {id} uses another file store ({files}) than this node ({mine}): files uploaded through one will not be found through the other"
            )
        })
}

/// Registers this node, warns about its file store if need be, and refreshes its row (and the
/// planner statistics of the tables that changed: `Store::analyze_changed_tables`) until
/// the returned task is aborted (the row is removed by [`unregister`], else it goes stale).
/// Only on PostgreSQL: one SQLite file is served from one machine, whose directories its
/// processes share, so there is nothing to warn about and no heartbeat write to make.
pub(crate) async fn start(app: AppState) -> Option<(String, tokio::task::JoinHandle<()>)> {
    if app.store.backend != Backend::Postgres {
        return None;
    }
    let id = format!(
        "{}-{}",
        hostname(),
        uuid::Uuid::new_v4()
            .simple()
            .to_string()
            .get(..8)
            .unwrap_or("node")
    );
    match register(&app, &id).await {
        Ok(others) => {
            if let Some(w) = file_store_warning(&app.files.describe, app.files.is_local(), &others)
            {
                tracing::warn!("{w}");
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, "could not register this node");
            return None;
        }
    }
    let task = {
        let (app, id) = (app.clone(), id.clone());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(HEARTBEAT).await;
                let seen = sqlx::query("UPDATE catalog_node SET seen = $1 WHERE id = $2")
                    .bind(stamp(Utc::now()))
                    .bind(&id);
                let done = match app.store.pool.acquire().await {
                    Ok(mut conn) => seen.execute(&mut *conn).await.map(|_| ()),
                    Err(e) => Err(e),
                };
                if let Err(e) = done {
                    tracing::debug!(error = %e, "node heartbeat failed");
                }
                match app.store.analyze_changed_tables().await {
                    Ok(tables) if !tables.is_empty() => {
                        tracing::debug!(?tables, "planner statistics refreshed");
                    }
                    Ok(_) => {}
                    // Another node (or autovacuum) analyzing the same table at once.
                    Err(e) => tracing::debug!(error = %e, "refreshing planner statistics failed"),
                }
            }
        })
    };
    Some((id, task))
}

/// Removes this node's row (a node that stops cleanly is gone at once).
pub(crate) async fn unregister(app: &AppState, id: &str) {
    if let Ok(mut conn) = app.store.pool.acquire().await {
        let _ = sqlx::query("DELETE FROM catalog_node WHERE id = $1")
            .bind(id)
            .execute(&mut *conn)
            .await;
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "node".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_store_beside_other_nodes_is_warned_about() {
        let s3 = "s3://bucket/".to_string();
        assert_eq!(file_store_warning("local:/data", true, &[]), None);
        let w = file_store_warning("local:/data", true, &[("a-1".into(), s3.clone())]).unwrap();
        assert!(w.contains("local directory") && w.contains("a-1"), "{w}");
        assert_eq!(
            file_store_warning(&s3, false, &[("a-1".into(), s3.clone())]),
            None
        );
        let w = file_store_warning(&s3, false, &[("a-1".into(), "s3://other/".into())]).unwrap();
        assert!(w.contains("another file store"), "{w}");
    }
}
