//! CPU-heavy work off the async worker threads.
//!
//! A request that builds a large document (an RDF graph, a big serialization) must not hold
//! one of the runtime's few worker threads: every other request on that thread would wait.
//! [`run`] moves the work to tokio's blocking pool, and at most one such job per CPU runs at
//! once (the others wait asynchronously), so a burst of heavy requests cannot starve the
//! server or spawn hundreds of threads.

use std::sync::LazyLock;

use tokio::sync::Semaphore;

use crate::error::{internal, CkanResult};

static SLOTS: LazyLock<Semaphore> = LazyLock::new(|| {
    Semaphore::new(
        std::thread::available_parallelism()
            .map(usize::from)
            .unwrap_or(2),
    )
});

/// Runs `f` on the blocking pool when a slot is free. A panic in `f` becomes an internal
/// error (logged, answered 500), never a crash.
pub async fn run<T, F>(f: F) -> CkanResult<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let _permit = SLOTS
        .acquire()
        .await
        .map_err(|e| internal(format!("blocking slots: {e}")))?;
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| internal(format!("blocking task: {e}")))
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn runs_work_and_turns_a_panic_into_an_internal_error() {
        assert_eq!(super::run(|| 2 + 2).await.unwrap(), 4);
        let e = super::run(|| -> u8 { panic!("boom") }).await.unwrap_err();
        assert_eq!(e.status().as_u16(), 500);
    }
}
