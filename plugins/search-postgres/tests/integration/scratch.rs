//! Scratch databases (the testkit's).

use std::future::Future;

use catalog_framework::store::Store;
use catalog_host::testkit::ScratchDb;

/// Runs `body` with a migrated store on a fresh database, dropped afterwards even when
/// `body` panics. Prints the testkit's skip line and returns when PostgreSQL is not
/// reachable.
pub(crate) async fn with_store<F, Fut>(body: F)
where
    F: FnOnce(Store, String) -> Fut,
    Fut: Future<Output = ()>,
{
    let Some(db) = ScratchDb::create_or_skip("catalog_search_pg").await else {
        return;
    };
    let store = Store::connect(&db.url).await.expect("connecting");
    store.migrate().await.expect("migrating");
    let pool = store.pool.clone();
    body(store, db.url.clone()).await;
    pool.close().await;
}
