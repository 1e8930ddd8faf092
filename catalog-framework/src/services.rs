//! Long-running work a plugin does beside the HTTP server (`register_service!`), such as the
//! harvest scheduler: the host's `serve` starts every enabled plugin's services after the
//! listener is bound and stops them when the server stops. Commands (`catalog jobs worker`,
//! `catalog search-index rebuild` …) do not run them.
//!
//! A service is for what must happen on a clock, not for work a request hands off: that is a
//! background job (`ActionContext::enqueue_job`), which survives a crash. Several nodes each
//! run their services, so what a service does must be safe to do twice at once (a conditional
//! update, a unique key).

use async_trait::async_trait;
use tokio::sync::watch;

use crate::context::AppState;

/// A service: runs until `stop` turns `true`, then returns promptly.
///
/// ```ignore
/// struct Tick;
/// #[async_trait]
/// impl Service for Tick {
///     async fn run(&self, app: AppState, mut stop: watch::Receiver<bool>) {
///         loop {
///             tokio::select! {
///                 _ = tokio::time::sleep(Duration::from_secs(60)) => { /* … */ }
///                 _ = stop.changed() => return,
///             }
///         }
///     }
/// }
/// register_service!("tick", Tick);
/// ```
#[async_trait]
pub trait Service: Send + Sync + 'static {
    /// Runs the service until `stop` turns `true`.
    async fn run(&self, app: AppState, stop: watch::Receiver<bool>);
}

crate::extension_point!(
    /// A [`Service`], submitted with [`register_service!`](crate::register_service).
    pub ServiceRegistration, Box<dyn Service>,
    collected("services", "service")
);

/// Registers a [`Service`] the server runs: `register_service!("harvest_scheduler", Scheduler);`
#[macro_export]
macro_rules! register_service {
    ($name:expr, $value:expr) => {
        $crate::register_at!($crate::services::ServiceRegistration, $name, $value, 0);
    };
}
