//! CPU-heavy work off the async worker threads.
//!
//! A request that builds a large document (an RDF graph, a big serialization, a diff, a
//! Markdown rendering) must not hold one of the runtime's few worker threads: every other
//! request on that thread would wait. [`Lane::run`] moves the work to tokio's blocking pool,
//! and at most one job per CPU runs at once in each lane (the others wait asynchronously), so
//! a burst of heavy requests cannot spawn hundreds of threads.
//!
//! Each kind of heavy work has a lane of its own: a burst of one kind (editors' diffs, say)
//! fills its own slots and waits there, while another kind (anonymous RDF documents) still
//! finds its slots free and shares the CPUs with it instead of queueing behind it.

use std::sync::LazyLock;

use tokio::sync::Semaphore;

use crate::error::{internal, CkanResult};

fn one_slot_per_cpu() -> Semaphore {
    Semaphore::new(
        std::thread::available_parallelism()
            .map(usize::from)
            .unwrap_or(2),
    )
}

/// A kind of heavy work and its slots: declare one as a `static` per kind.
///
/// ```ignore
/// static DIFFS: Lane = Lane::new("activity_diff");
/// let text = DIFFS.run(move || diff(&a, &b)).await?;
/// ```
pub struct Lane {
    name: &'static str,
    slots: LazyLock<Semaphore>,
}

impl Lane {
    pub const fn new(name: &'static str) -> Lane {
        Lane {
            name,
            slots: LazyLock::new(one_slot_per_cpu),
        }
    }

    /// Runs `f` on the blocking pool when a slot of this lane is free. A panic in `f` becomes
    /// an internal error (logged, answered 500), never a crash.
    pub async fn run<T, F>(&self, f: F) -> CkanResult<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let _permit = self
            .slots
            .acquire()
            .await
            .map_err(|e| internal(format!("{} slots: {e}", self.name)))?;
        tokio::task::spawn_blocking(f)
            .await
            .map_err(|e| internal(format!("{} task: {e}", self.name)))
    }
}

/// The lane of heavy work that declares none of its own.
static GENERAL: Lane = Lane::new("blocking");

/// Runs `f` in the general lane (see [`Lane::run`]).
pub async fn run<T, F>(f: F) -> CkanResult<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    GENERAL.run(f).await
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn runs_work_and_turns_a_panic_into_an_internal_error() {
        assert_eq!(super::run(|| 2 + 2).await.unwrap(), 4);
        let e = super::run(|| -> u8 { panic!("boom") }).await.unwrap_err();
        assert_eq!(e.status().as_u16(), 500);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_full_lane_does_not_hold_up_another() {
        static BUSY: Lane = Lane::new("busy");
        static OTHER: Lane = Lane::new("other");
        let release = Arc::new(AtomicBool::new(false));
        let slots = std::thread::available_parallelism().map_or(2, usize::from);
        let mut held = Vec::new();
        for _ in 0..slots + 2 {
            let release = release.clone();
            held.push(tokio::spawn(BUSY.run(move || {
                while !release.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(5));
                }
            })));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        let other = tokio::time::timeout(Duration::from_secs(2), OTHER.run(|| 7)).await;
        release.store(true, Ordering::Relaxed);
        assert_eq!(other.expect("the other lane was held up").unwrap(), 7);
        for h in held {
            h.await.unwrap().unwrap();
        }
    }
}
