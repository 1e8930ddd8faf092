//! A write transaction whose caller is dropped while it begins (the client went away, a
//! timeout) leaves no connection inside a transaction, on SQLite and on PostgreSQL.
//!
//! sqlx 0.8 checks a custom `BEGIN` (SQLite's `BEGIN IMMEDIATE`) with one more await after the
//! `BEGIN` is acknowledged; a future dropped there left the pooled connection inside the
//! transaction with nothing to roll it back. On SQLite that connection then held the write
//! lock for good and every later write failed after its busy timeout (a server stalled for
//! good after a benchmark's client closed its connections mid-request).

use std::time::Duration;

use catalog_host::testkit::{stores, StoreKind, TestApp};
use serde_json::json;
use sqlx::Connection;

/// Whether some connection other than a fresh one holds a transaction open: on SQLite, the
/// write lock (a fresh connection's `BEGIN IMMEDIATE` fails at once); on PostgreSQL, a
/// session of this database idle inside a transaction.
async fn transaction_left_open(t: &TestApp) -> bool {
    let mut conn = sqlx::AnyConnection::connect(&t.database_url).await.unwrap();
    match t.kind {
        StoreKind::Sqlite => {
            sqlx::query("PRAGMA busy_timeout = 0")
                .execute(&mut conn)
                .await
                .unwrap();
            let locked = sqlx::query("BEGIN IMMEDIATE")
                .execute(&mut conn)
                .await
                .is_err();
            if !locked {
                sqlx::query("ROLLBACK").execute(&mut conn).await.unwrap();
            }
            locked
        }
        StoreKind::Postgres => {
            let open: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
            )
            .fetch_one(&mut conn)
            .await
            .unwrap();
            open > 0
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_dropped_while_it_begins_leaves_no_transaction_open() {
    for kind in stores().await {
        let t = TestApp::start(kind).await;
        t.ok("organization_create", json!({"name": "office"})).await;
        // The transaction's beginning, dropped at every point of its progress: a few
        // microseconds apart over the first two milliseconds, and dropped at once.
        for i in 0..600u64 {
            let wait = Duration::from_micros(i % 200 * 10);
            let _ = tokio::time::timeout(wait, t.app.store.begin_write()).await;
        }
        // Write calls dropped midway (the same path, under the framework's write lock).
        for i in 0..300u64 {
            let wait = Duration::from_micros(i * 20);
            let params = json!({"name": format!("dropped-{i}"), "owner_org": "office"});
            let call = t.call(Some(&t.admin), "package_create", params);
            // Finished in time or not, the call may fail: the assertions below tell.
            let _ = tokio::time::timeout(wait, call).await;
        }
        // The rollbacks of the dropped transactions are queued as they are dropped.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(
            !transaction_left_open(&t).await,
            "a dropped write left a transaction open ({kind})"
        );
        // And writes go on (a connection left inside a transaction fails them: SQLite refuses
        // a BEGIN inside one).
        for i in 0..8 {
            let params = json!({"name": format!("after-the-drops-{i}"), "owner_org": "office"});
            let after = t.call(Some(&t.admin), "package_create", params).await;
            assert!(after.is_ok(), "a write after the drops ({kind}): {after:?}");
        }
    }
}

/// On SQLite every write transaction runs on the store's one write connection, whose page
/// cache then stays valid from one write to the next (issue 28): what is local to a
/// connection (a temporary table) made in one write transaction is there in the next ones,
/// however the read connections were used in between. (On PostgreSQL write transactions take
/// any pooled connection; nothing to check there.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_write_transactions_share_one_connection() {
    for kind in stores().await {
        if !matches!(kind, StoreKind::Sqlite) {
            continue;
        }
        let t = TestApp::start(kind).await;
        let store = &t.app.store;
        let mut tx = store.begin_write().await.unwrap();
        sqlx::query("CREATE TEMP TABLE write_connection_mark (x INTEGER)")
            .execute(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        for round in 0..5 {
            // Every read connection taken at once and given back: a pool that handed its
            // connections to write transactions in turn would now give another one.
            let mut held = Vec::new();
            for _ in 0..8 {
                held.push(store.pool.acquire().await.unwrap());
            }
            drop(held);
            let mut tx = store.begin_write().await.unwrap();
            let marked = sqlx::query("SELECT count(*) FROM temp.write_connection_mark")
                .execute(&mut *tx)
                .await;
            assert!(
                marked.is_ok(),
                "round {round}: a write transaction ran on another connection: {marked:?}"
            );
            tx.rollback().await.unwrap();
        }
    }
}
