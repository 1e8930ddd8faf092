//! The outbound fetcher `http` (`reqwest`): every fetch the server makes on its own behalf
//! (the DataStore loader, harvesters) under the framework's address rules
//! ([`catalog_framework::fetch`]: the host is resolved and every address checked, the
//! connection pinned to exactly those addresses, each redirect checked again), with connect,
//! read and total timeouts, a minimum average rate and a size cap counted on the decoded
//! bytes (`catalog.fetch.*`, docs/SECURITY.md "Server-side fetches").

use std::path::Path;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use catalog_framework::fetch::{check_address, resolve, FetchError, Fetched, Fetcher};
use catalog_framework::register_fetcher;
use catalog_framework::store::config::FetchConfig;
use tokio::io::AsyncWriteExt;

/// The fetcher over `reqwest` (rustls), registered as `http`.
#[derive(Debug, Clone, Copy, Default)]
pub struct HttpFetcher;

#[async_trait]
impl Fetcher for HttpFetcher {
    async fn to_file(
        &self,
        config: &FetchConfig,
        url: &str,
        dest: &Path,
    ) -> Result<Fetched, FetchError> {
        let mut body = open(config, url, &[]).await?;
        let mut file = tokio::fs::File::create(dest)
            .await
            .map_err(|e| FetchError::Failed(e.to_string()))?;
        while let Some(chunk) = body.chunk().await? {
            file.write_all(&chunk)
                .await
                .map_err(|e| FetchError::Failed(e.to_string()))?;
        }
        file.flush()
            .await
            .map_err(|e| FetchError::Failed(e.to_string()))?;
        Ok(body.fetched)
    }

    async fn to_bytes(
        &self,
        config: &FetchConfig,
        url: &str,
        headers: &[(&str, String)],
    ) -> Result<(Fetched, Vec<u8>), FetchError> {
        let mut body = open(config, url, headers).await?;
        let mut out = Vec::new();
        while let Some(chunk) = body.chunk().await? {
            out.extend_from_slice(&chunk);
        }
        Ok((body.fetched, out))
    }
}
register_fetcher!("http", HttpFetcher);

/// A response whose headers passed the checks, read chunk by chunk within the size cap.
struct Body {
    resp: reqwest::Response,
    fetched: Fetched,
    limit: u64,
    /// When the body's reading began, and the slowest average rate kept after the grace.
    started: Instant,
    min_rate: u64,
    grace: Duration,
}

impl Body {
    /// The next decoded chunk (gzip, deflate, brotli undone): the cap counts what a parser
    /// would hold, not what crossed the wire.
    async fn chunk(&mut self) -> Result<Option<bytes::Bytes>, FetchError> {
        let Some(chunk) = self.resp.chunk().await.map_err(|e| classify(&e))? else {
            return Ok(None);
        };
        self.fetched.size += chunk.len() as u64;
        if self.fetched.size > self.limit {
            return Err(FetchError::TooLarge { limit: self.limit });
        }
        let elapsed = self.started.elapsed();
        if self.min_rate > 0 && elapsed > self.grace {
            let rate = self.fetched.size as f64 / elapsed.as_secs_f64();
            if rate < self.min_rate as f64 {
                return Err(FetchError::Timeout(format!(
                    "slower than {} bytes per second ({rate:.0} after {}s)",
                    self.min_rate,
                    elapsed.as_secs()
                )));
            }
        }
        Ok(Some(chunk))
    }
}

/// The one fetch loop: addresses checked and pinned, redirects followed by hand, until a
/// successful response whose announced length is within the cap.
async fn open(
    config: &FetchConfig,
    url: &str,
    headers: &[(&str, String)],
) -> Result<Body, FetchError> {
    let started = Instant::now();
    let total = Duration::from_secs(config.total_timeout_secs.max(1));
    let mut current = check_address(config, url)?;
    for _hop in 0..=config.max_redirects {
        let left = total
            .checked_sub(started.elapsed())
            .ok_or_else(|| FetchError::Timeout(format!("after {}s", total.as_secs())))?;
        let addrs = resolve(config, &current).await?;
        let host = current.host_str().unwrap_or_default().to_string();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(config.connect_timeout_secs.max(1)))
            .read_timeout(Duration::from_secs(config.read_timeout_secs.max(1)))
            .timeout(left)
            .no_proxy()
            .user_agent(concat!("catalog/", env!("CARGO_PKG_VERSION")))
            .resolve_to_addrs(host.trim_start_matches('[').trim_end_matches(']'), &addrs)
            .build()
            .map_err(|e| FetchError::Failed(e.to_string()))?;
        let mut request = client.get(current.clone());
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let resp = request.send().await.map_err(|e| classify(&e))?;
        let status = resp.status();
        if status.is_redirection() {
            let location = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .ok_or_else(|| {
                    FetchError::Failed(format!("a redirect without a Location from {current}"))
                })?;
            let next = current.join(location).map_err(|_| {
                FetchError::Refused(format!("a redirect to an invalid address: {location}"))
            })?;
            current = check_address(config, next.as_str())?;
            continue;
        }
        if !status.is_success() {
            return Err(FetchError::Status {
                status: status.as_u16(),
                url: current.to_string(),
            });
        }
        if resp.content_length().is_some_and(|n| n > config.max_bytes) {
            return Err(FetchError::TooLarge {
                limit: config.max_bytes,
            });
        }
        let content_type = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        return Ok(Body {
            resp,
            fetched: Fetched {
                final_url: current.to_string(),
                content_type,
                size: 0,
            },
            limit: config.max_bytes,
            started: Instant::now(),
            min_rate: config.min_bytes_per_sec,
            grace: Duration::from_secs(config.min_rate_after_secs),
        });
    }
    Err(FetchError::Failed(format!(
        "more than {} redirects",
        config.max_redirects
    )))
}

fn classify(e: &reqwest::Error) -> FetchError {
    if e.is_timeout() {
        FetchError::Timeout(e.to_string())
    } else {
        FetchError::Failed(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog_framework::fetch::Fetcher;

    #[tokio::test]
    async fn a_host_resolving_to_loopback_is_refused_at_fetch_time() {
        let c = FetchConfig::default();
        let dir = tempfile::tempdir().unwrap();
        let err = HttpFetcher
            .to_file(&c, "http://localhost:9/x.csv", &dir.path().join("f"))
            .await
            .unwrap_err();
        assert!(matches!(err, FetchError::Refused(_)), "{err}");
    }

    #[tokio::test]
    async fn a_peer_that_trickles_is_dropped_at_the_minimum_rate() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = [0u8; 1024];
                    let _ = sock.read(&mut buf).await;
                    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\n\r\n";
                    if sock.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    // A byte every 100 ms: never silent for the read timeout, 10 bytes/s.
                    for _ in 0..200 {
                        if sock.write_all(b"x").await.is_err() {
                            return;
                        }
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                });
            }
        });
        let c = FetchConfig {
            allowed_hosts: vec!["127.0.0.1".into()],
            min_bytes_per_sec: 100,
            min_rate_after_secs: 1,
            ..FetchConfig::default()
        };
        let started = Instant::now();
        let err = HttpFetcher
            .to_bytes(&c, &format!("http://127.0.0.1:{port}/slow.csv"), &[])
            .await
            .unwrap_err();
        assert!(matches!(err, FetchError::Timeout(_)), "{err}");
        assert!(err.to_string().contains("bytes per second"), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }
}
