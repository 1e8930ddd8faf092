//! The HTTP server: hyper's HTTP/1 connections, with the limits a public server needs.
//!
//! - **Header-read timeout**: a request head must arrive within
//!   `catalog.server.header_read_timeout_secs` of the connection (or of the previous response)
//!   being ready for it; slowloris clients are cut off.
//! - **Keep-alive idle timeout**: a connection with no request in flight is closed after
//!   `catalog.server.keep_alive_timeout_secs`.
//! - **Connection limit**: at most `catalog.server.max_connections` connections, and never
//!   more than the process's descriptor limit allows. At the limit, the connection idle for
//!   longest is closed to make room; when every connection is busy, the new one is refused.
//! - **Descriptor exhaustion** is logged once per episode, not once per failed `accept`, and
//!   frees the longest-idle connection.
//! - **JSON everywhere**: the error answers hyper writes by itself for requests it cannot
//!   parse (400, 414 URI too long, 431 headers too large) are rewritten into CKAN's bare JSON
//!   string, and every response of the application carries a `Content-Type`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, HeaderValue, Request};
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;
use tower::ServiceExt;

use catalog_framework::app::ServerConfig;

/// Descriptors kept free for the database pool, index files and uploads.
const RESERVED_DESCRIPTORS: usize = 128;

/// How long a connection asked to close may take to finish the response it is writing.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// The limits of one server, resolved from [`ServerConfig`] and the descriptor limit.
#[derive(Debug, Clone)]
pub struct ServerLimits {
    pub max_connections: usize,
    pub header_read_timeout: Duration,
    pub keep_alive_timeout: Duration,
}

impl ServerLimits {
    pub fn from_config(c: &ServerConfig) -> ServerLimits {
        let configured = c.max_connections.max(1);
        let max_connections = match descriptor_limit() {
            Some(fds) => configured.min(fds.saturating_sub(RESERVED_DESCRIPTORS).max(16)),
            None => configured,
        };
        ServerLimits {
            max_connections,
            header_read_timeout: Duration::from_secs(c.header_read_timeout_secs.max(1)),
            keep_alive_timeout: Duration::from_secs(c.keep_alive_timeout_secs.max(1)),
        }
    }
}

/// The soft limit on open descriptors (`Max open files` of `/proc/self/limits`), if known.
fn descriptor_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// What the server and one connection's task share about that connection.
struct ConnState {
    /// Requests handed to the application whose responses are not yet fully written.
    in_flight: AtomicUsize,
    /// When the connection last became idle (no request in flight).
    idle_since: Mutex<Instant>,
    /// Set once the connection was asked to close.
    closing: AtomicBool,
    close: tokio::sync::Notify,
}

impl ConnState {
    fn new() -> ConnState {
        ConnState {
            in_flight: AtomicUsize::new(0),
            idle_since: Mutex::new(Instant::now()),
            closing: AtomicBool::new(false),
            close: tokio::sync::Notify::new(),
        }
    }

    fn begin(&self) {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
    }

    fn end(&self) {
        *self.idle_since.lock().expect("poisoned") = Instant::now();
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
    }

    fn idle(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) == 0
    }

    /// When the connection may be closed as idle, if it stays idle.
    fn idle_deadline(&self, keep_alive: Duration) -> Instant {
        let since = *self.idle_since.lock().expect("poisoned");
        if self.idle() {
            since + keep_alive
        } else {
            Instant::now() + keep_alive
        }
    }

    fn ask_to_close(&self) {
        self.closing.store(true, Ordering::Release);
        self.close.notify_one();
    }
}

/// The open connections.
#[derive(Default)]
struct Connections {
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<ConnState>>>,
}

impl Connections {
    fn len(&self) -> usize {
        self.open.lock().expect("poisoned").len()
    }

    fn add(&self) -> (u64, Arc<ConnState>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(ConnState::new());
        self.open
            .lock()
            .expect("poisoned")
            .insert(id, state.clone());
        (id, state)
    }

    fn remove(&self, id: u64) {
        self.open.lock().expect("poisoned").remove(&id);
    }

    /// Asks the connection idle for longest to close; false when every connection is busy.
    fn evict_oldest_idle(&self) -> bool {
        let open = self.open.lock().expect("poisoned");
        let oldest = open
            .values()
            .filter(|c| c.idle() && !c.closing.load(Ordering::Acquire))
            .min_by_key(|c| *c.idle_since.lock().expect("poisoned"));
        match oldest {
            Some(c) => {
                c.ask_to_close();
                true
            }
            None => false,
        }
    }
}

/// Logs a condition once when it starts, and once when it ends.
struct Episode {
    active: bool,
}

impl Episode {
    fn start(&mut self, log: impl FnOnce()) {
        if !self.active {
            self.active = true;
            log();
        }
    }

    fn end(&mut self, log: impl FnOnce()) {
        if self.active {
            self.active = false;
            log();
        }
    }
}

fn is_descriptor_exhaustion(e: &io::Error) -> bool {
    // EMFILE (per process) and ENFILE (system-wide).
    matches!(e.raw_os_error(), Some(23 | 24))
}

/// Serves `router` on `listener` until the process ends.
pub async fn serve(listener: TcpListener, router: Router, limits: ServerLimits) -> io::Result<()> {
    let conns = Arc::new(Connections::default());
    let mut exhausted = Episode { active: false };
    let mut full = Episode { active: false };
    tracing::info!(
        max_connections = limits.max_connections,
        header_read_timeout = ?limits.header_read_timeout,
        keep_alive_timeout = ?limits.keep_alive_timeout,
        "server limits"
    );
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok((stream, peer)) => {
                exhausted.end(|| tracing::info!("file descriptors available again"));
                (stream, peer)
            }
            Err(e) if is_descriptor_exhaustion(&e) => {
                exhausted.start(|| {
                    tracing::error!(error = %e, "out of file descriptors: closing idle connections; new connections wait")
                });
                conns.evict_oldest_idle();
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
            Err(e) => {
                tracing::debug!(error = %e, "accept failed");
                continue;
            }
        };
        if conns.len() >= limits.max_connections && !conns.evict_oldest_idle() {
            full.start(|| {
                tracing::warn!(
                    max_connections = limits.max_connections,
                    "connection limit reached with every connection busy: refusing new connections"
                )
            });
            drop(stream);
            continue;
        }
        full.end(|| tracing::info!("accepting connections again"));
        let (id, state) = conns.add();
        let conns = conns.clone();
        let router = router.clone();
        let limits = limits.clone();
        tokio::spawn(async move {
            serve_connection(stream, peer, router, state, &limits).await;
            conns.remove(id);
        });
    }
}

async fn serve_connection(
    stream: TcpStream,
    peer: std::net::SocketAddr,
    router: Router,
    state: Arc<ConnState>,
    limits: &ServerLimits,
) {
    let _ = stream.set_nodelay(true);
    let io = TokioIo::new(HttpIo {
        inner: stream,
        state: state.clone(),
        replacement: None,
    });
    let service_state = state.clone();
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let state = service_state.clone();
        state.begin();
        let guard = InFlight(state);
        let router = router.clone();
        async move {
            // Whether the request's body was read to its end by the time the answer is ready:
            // an empty one is.
            let body_read = Arc::new(AtomicBool::new(http_body::Body::is_end_stream(req.body())));
            let tracked = body_read.clone();
            // The peer's address, for handlers that limit by it (failed logins).
            let mut req = req.map(|b| {
                Body::new(ReadToEnd {
                    inner: b,
                    read: tracked,
                })
            });
            req.extensions_mut()
                .insert(axum::extract::ConnectInfo(peer));
            let mut resp = router
                .oneshot(req)
                .await
                .unwrap_or_else(|never: Infallible| match never {});
            if !body_read.load(Ordering::Acquire) {
                // Answered before the request's body was read (an unknown action, a refused
                // method): hyper closes the connection after this answer rather than read the
                // rest, and says so only now, so that a client does not send its next request
                // on a connection being closed (it would fail while writing it).
                resp.headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            if !resp.headers().contains_key(header::CONTENT_TYPE) {
                // The invariant the error-head detection of `HttpIo` relies on.
                resp.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/plain; charset=utf-8"),
                );
            }
            Ok::<_, Infallible>(resp.map(|b| {
                Body::new(Guarded {
                    inner: b,
                    _guard: guard,
                })
            }))
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    let mut grace_until: Option<Instant> = None;
    loop {
        let wake = grace_until.unwrap_or_else(|| state.idle_deadline(limits.keep_alive_timeout));
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                return;
            }
            _ = state.close.notified(), if grace_until.is_none() => {
                conn.as_mut().graceful_shutdown();
                grace_until = Some(Instant::now() + CLOSE_GRACE);
            }
            _ = tokio::time::sleep_until(wake) => {
                if grace_until.is_some() {
                    return;
                }
                if state.idle() && state.idle_deadline(limits.keep_alive_timeout) <= Instant::now() {
                    conn.as_mut().graceful_shutdown();
                    grace_until = Some(Instant::now() + CLOSE_GRACE);
                }
            }
        }
    }
}

/// Marks a request in flight until its response body is dropped (written or abandoned).
struct InFlight(Arc<ConnState>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// A response body that keeps its request counted as in flight while it is being written.
struct Guarded {
    inner: Body,
    _guard: InFlight,
}

impl http_body::Body for Guarded {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// A request body that records when it has been read to its end.
struct ReadToEnd {
    inner: Incoming,
    read: Arc<AtomicBool>,
}

impl http_body::Body for ReadToEnd {
    type Data = bytes::Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let frame = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(frame, Poll::Ready(None)) || http_body::Body::is_end_stream(&self.inner) {
            self.read.store(true, Ordering::Release);
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        http_body::Body::is_end_stream(&self.inner)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::Body::size_hint(&self.inner)
    }
}

/// The connection's socket, seen by hyper. It rewrites the bare error heads hyper sends by
/// itself for requests it cannot parse into CKAN's JSON answer.
struct HttpIo {
    inner: TcpStream,
    state: Arc<ConnState>,
    /// Our answer in place of hyper's, and how much of it is written.
    replacement: Option<(Vec<u8>, usize)>,
}

/// hyper's own answer to an unparseable request: a complete head, nothing after it, and (unlike
/// every response of the application) no `Content-Type`.
fn hyper_error_status(buf: &[u8]) -> Option<u16> {
    let head = std::str::from_utf8(buf).ok()?;
    if !head.ends_with("\r\n\r\n") || head.matches("\r\n\r\n").count() != 1 {
        return None;
    }
    let status: u16 = head
        .strip_prefix("HTTP/1.1 ")
        .or_else(|| head.strip_prefix("HTTP/1.0 "))?
        .get(..3)?
        .parse()
        .ok()?;
    let lower = head.to_ascii_lowercase();
    if !matches!(status, 400 | 414 | 431) || lower.contains("\r\ncontent-type:") {
        return None;
    }
    Some(status)
}

fn json_error_response(status: u16) -> Vec<u8> {
    let (reason, message) = match status {
        414 => ("URI Too Long", "Bad request: the URL is too long"),
        431 => (
            "Request Header Fields Too Large",
            "Bad request: the request headers are too large",
        ),
        _ => ("Bad Request", "Bad request: malformed HTTP request"),
    };
    let body = serde_json::to_string(message).unwrap_or_default();
    format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json;charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

impl HttpIo {
    /// Writes what is left of the replacement; ready when all of it is written.
    fn poll_replacement(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, done)) = &mut self.replacement {
            if *done >= bytes.len() {
                break;
            }
            match Pin::new(&mut self.inner).poll_write(cx, &bytes[*done..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => *done += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for HttpIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for HttpIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.replacement.is_none() && this.state.idle() {
            if let Some(status) = hyper_error_status(buf) {
                this.replacement = Some((json_error_response(status), 0));
            }
        }
        if this.replacement.is_some() {
            // hyper closes the connection after its error head: what it writes is ours to drop.
            return match this.poll_replacement(cx) {
                Poll::Ready(Ok(())) => Poll::Ready(Ok(buf.len())),
                Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                Poll::Pending => Poll::Pending,
            };
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        match this.poll_replacement(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut this.inner).poll_flush(cx),
            other => other,
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        match this.poll_replacement(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut this.inner).poll_shutdown(cx),
            other => other,
        }
    }

    // One flat buffer per write: hyper then hands its error head over whole.
    fn is_write_vectored(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hypers_own_error_heads_are_rewritten() {
        let hyper_head = b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        assert_eq!(hyper_error_status(hyper_head), Some(414));
        assert_eq!(
            hyper_error_status(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n"),
            Some(400)
        );
        // The application's answers always carry a Content-Type, bodies or not.
        assert_eq!(
            hyper_error_status(
                b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n"
            ),
            None
        );
        assert_eq!(
            hyper_error_status(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n\"x\""),
            None
        );
        assert_eq!(
            hyper_error_status(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"),
            None
        );
        let answer = String::from_utf8(json_error_response(414)).unwrap();
        assert!(answer.starts_with("HTTP/1.1 414 URI Too Long\r\n"));
        assert!(answer.ends_with("\r\n\r\n\"Bad request: the URL is too long\""));
    }

    #[test]
    fn eviction_picks_the_longest_idle_connection() {
        let conns = Connections::default();
        let (_, busy) = conns.add();
        busy.begin();
        assert!(
            !conns.evict_oldest_idle(),
            "a busy connection is never evicted"
        );
        let (_, old) = conns.add();
        let (_, new) = conns.add();
        *old.idle_since.lock().unwrap() = Instant::now() - Duration::from_secs(10);
        assert!(conns.evict_oldest_idle());
        assert!(old.closing.load(Ordering::Acquire));
        assert!(!new.closing.load(Ordering::Acquire));
        assert!(conns.evict_oldest_idle());
        assert!(new.closing.load(Ordering::Acquire));
        assert!(!conns.evict_oldest_idle());
    }
}
