//! The database handle of one action call: a plain pooled connection for a read call, a
//! transaction for a write call (SQLite: `BEGIN IMMEDIATE` behind the single-writer lock;
//! PostgreSQL: with a bounded lock wait).

use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, Transaction};

use crate::store::{Backend, Store};

/// How long a PostgreSQL write transaction waits for one lock before giving up: 5 s (SQLite's
/// writers queue on the store's write lock instead, and wait `busy_timeout` at most).
const LOCK_TIMEOUT_STATEMENT: &str = "SET LOCAL lock_timeout = 5000";

/// The database handle of one action call: acquired on first use; a transaction for writes.
#[derive(Default)]
pub(crate) enum Db {
    #[default]
    None,
    Conn(PoolConnection<Any>),
    Tx(Transaction<'static, Any>),
}

impl Db {
    pub(crate) async fn get(
        &mut self,
        store: &Store,
        write: bool,
    ) -> sqlx::Result<&mut AnyConnection> {
        if matches!(self, Db::None) {
            *self = if write {
                // SQLite: `BEGIN IMMEDIATE` takes the write lock at once, so a writer in
                // another process makes this one wait (busy_timeout) instead of failing at its
                // first write. Begun in a task of its own (`Store::begin_write`): a call
                // dropped meanwhile must not leave a pooled connection inside a transaction.
                let mut tx = store.begin_write().await?;
                if store.backend == Backend::Postgres {
                    // A row lock is waited for this long at most; then the call fails with a
                    // conflict and runs again (ActionContext::run_top), so no writer queues
                    // without bound behind a lock held by another.
                    sqlx::query(LOCK_TIMEOUT_STATEMENT)
                        .execute(&mut *tx)
                        .await?;
                }
                Db::Tx(tx)
            } else {
                Db::Conn(store.pool.acquire().await?)
            };
        }
        Ok(match self {
            Db::Conn(c) => &mut **c,
            Db::Tx(t) => &mut **t,
            Db::None => unreachable!("acquired above"),
        })
    }

    pub(crate) async fn commit(self) -> sqlx::Result<()> {
        if let Db::Tx(t) = self {
            t.commit().await?;
        }
        Ok(())
    }
}
