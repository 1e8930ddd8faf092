//! PostgreSQL plans for the tables it has statistics for. With autovacuum off (or slower than a
//! bulk load), a catalog that started empty was planned as empty for good: its lookups by id or
//! name became sequential scans that grew with the catalog (issue 28). Each node refreshes the
//! statistics of the tables that changed (`Store::analyze_changed_tables`, run with the node's
//! heartbeat).

use std::time::{Duration, Instant};

use catalog_host::testkit::{postgres, TestApp};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_that_grew_get_fresh_planner_statistics() {
    let Some(kind) = postgres().await else { return };
    let t = TestApp::start(kind).await;
    let store = &t.app.store;
    let reltuples = |table: &'static str| async move {
        let mut conn = store.pool.acquire().await.unwrap();
        sqlx::query_scalar::<_, f64>(
            "SELECT reltuples::float8 FROM pg_class WHERE relname = $1 AND relkind = 'r'",
        )
        .bind(table)
        .fetch_one(&mut *conn)
        .await
        .unwrap()
    };
    // Nothing changed yet but the few rows the start wrote: not worth an ANALYZE.
    let first = store.analyze_changed_tables().await.unwrap();
    assert!(!first.contains(&"catalog_node".to_string()), "{first:?}");
    assert!(reltuples("catalog_node").await < 1.0);
    {
        let mut conn = store.pool.acquire().await.unwrap();
        for i in 0..300 {
            sqlx::query(
                "INSERT INTO catalog_node (id, files, started, seen) VALUES ($1, 'x', 'y', 'z')",
            )
            .bind(format!("stats-{i}"))
            .execute(&mut *conn)
            .await
            .unwrap();
        }
    }
    // PostgreSQL publishes a backend's table counters within a second or so of its last write.
    let deadline = Instant::now() + Duration::from_secs(15);
    let analyzed = loop {
        let tables = store.analyze_changed_tables().await.unwrap();
        if tables.contains(&"catalog_node".to_string()) || Instant::now() > deadline {
            break tables;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        analyzed.contains(&"catalog_node".to_string()),
        "{analyzed:?}"
    );
    assert!(
        reltuples("catalog_node").await >= 300.0,
        "the planner knows the table's size"
    );
    // Analyzed once: no second ANALYZE until it changes again.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let again = store.analyze_changed_tables().await.unwrap();
    assert!(!again.contains(&"catalog_node".to_string()), "{again:?}");
}
