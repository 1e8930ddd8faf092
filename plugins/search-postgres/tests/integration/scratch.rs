//! Scratch databases.

use std::future::Future;
use std::time::Duration;

use catalog_framework::store::Store;
use rand::Rng;
use sqlx::postgres::PgConnection;
use sqlx::{Connection, Executor};

const ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// Runs `body` with a migrated store on a fresh database, dropped afterwards even when
/// `body` panics. Prints the skip line and returns when PostgreSQL is not reachable.
pub async fn with_store<F, Fut>(body: F)
where
    F: FnOnce(Store, String) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let connect = PgConnection::connect(ADMIN_URL);
    let mut admin = match tokio::time::timeout(Duration::from_secs(5), connect).await {
        Ok(Ok(c)) => c,
        Ok(Err(_)) | Err(_) => {
            println!("skipped: PostgreSQL not reachable");
            return;
        }
    };
    let suffix: String = rand::thread_rng()
        .sample_iter(&rand::distributions::Alphanumeric)
        .take(12)
        .map(|c| char::from(c).to_ascii_lowercase())
        .collect();
    let name = format!("catalog_search_pg_{suffix}");
    admin
        .execute(format!("CREATE DATABASE {name}").as_str())
        .await
        .expect("creating the scratch database");
    let url = format!("postgres://postgres@127.0.0.1:5432/{name}");
    let store = Store::connect(&url).await.expect("connecting");
    store.migrate().await.expect("migrating");
    let pool = store.pool.clone();
    let outcome = tokio::spawn(body(store, url)).await;
    pool.close().await;
    admin
        .execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str())
        .await
        .expect("dropping the scratch database");
    let _ = admin.close().await;
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}
