//! Fetches the server makes on its own behalf (the DataStore loader, harvesters), with the
//! same rules everywhere (`catalog.fetch.*`, docs/SECURITY.md "Server-side fetches"):
//!
//! - only `http` and `https` addresses;
//! - the host is resolved here, every address it resolves to is checked, and the connection
//!   goes to exactly those addresses (a second lookup cannot swap in another one): a loopback,
//!   private, link-local (cloud metadata), shared, multicast or reserved address is refused
//!   unless the operator lists the host in `allowed_hosts`;
//! - redirects are followed by hand, at most `max_redirects`, each new address checked again;
//! - connect, read and total timeouts, a minimum average transfer rate, and a size cap
//!   counted on the bytes received.
//!
//! ```ignore
//! let got = fetch::to_file(&app.config.catalog.fetch, url, &path).await?;
//! let (got, body) = fetch::to_bytes(&config, url, &[("Accept", "text/turtle".into())]).await?;
//! ```

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::time::{Duration, Instant};

use catalog_store::config::FetchConfig;
use tokio::io::AsyncWriteExt;

/// Why a fetch did not give a body.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The address is not one the server may fetch (scheme, host, address rules).
    #[error("{0}")]
    Refused(String),
    /// The body is larger than `catalog.fetch.max_bytes`.
    #[error("The file is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// A timeout passed (connect, read or total).
    #[error("Fetching the file timed out: {0}")]
    Timeout(String),
    /// The server answered with an error status.
    #[error("The server answered {status} for {url}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The address that answered it.
        url: String,
    },
    /// Any other failure (connection refused, TLS, a local file).
    #[error("Fetching the file failed: {0}")]
    Failed(String),
}

/// What a fetch stored.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The address the body came from (after redirects).
    pub final_url: String,
    /// The response's `Content-Type`, if any.
    pub content_type: Option<String>,
    /// Bytes written.
    pub size: u64,
}

/// Whether an address is one a server-side fetch must never reach on its own: loopback,
/// private, link-local (cloud metadata at 169.254.169.254), carrier-grade NAT, benchmark,
/// documentation, multicast, reserved or unspecified; an IPv4 address inside IPv6 (mapped,
/// NAT64) is judged as the IPv4 address.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4_internal(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return v4_internal(v4);
            }
            let s = v6.segments();
            // 64:ff9b::/96 (NAT64) carries an IPv4 address in its last 32 bits.
            if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
                let v4 =
                    Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
                return v4_internal(v4);
            }
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated) fec0::/10
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || s[0..6] == [0, 0, 0, 0, 0, 0] // IPv4-compatible ::a.b.c.d
        }
    }
}

fn v4_internal(ip: Ipv4Addr) -> bool {
    let o = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || o[0] == 0 // "this network"
        || (o[0] == 100 && (o[1] & 0xc0) == 64) // shared, 100.64.0.0/10
        || (o[0] == 192 && o[1] == 0 && o[2] == 0) // IETF protocol assignments
        || (o[0] == 198 && (o[1] & 0xfe) == 18) // benchmarking, 198.18.0.0/15
        || o[0] >= 240 // reserved
}

/// An allow-list entry split into its host part and its port, if it names one: `host:port`,
/// `1.2.3.4:port` and `[v6]:port` do; a bare address (`::1`), a CIDR range or a host name do not.
fn entry_port(entry: &str) -> (&str, Option<u16>) {
    if entry.parse::<IpAddr>().is_ok() || entry.contains('/') {
        return (entry, None);
    }
    if let Some(rest) = entry.strip_prefix('[') {
        if let Some((host, port)) = rest.split_once("]:") {
            if let Ok(p) = port.parse::<u16>() {
                return (host, Some(p));
            }
        }
        return (rest.trim_end_matches(']'), None);
    }
    match entry.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => match port.parse::<u16>() {
            Ok(p) => (host, Some(p)),
            Err(_) => (entry, None),
        },
        _ => (entry, None),
    }
}

/// Whether `allowed` (a host name, an address, or a CIDR range, each optionally with a
/// `:port`) admits this host or address on this port.
fn allowed_by(entry: &str, host: &str, ip: Option<IpAddr>, port: u16) -> bool {
    let (entry, entry_port) = entry_port(entry.trim());
    if entry_port.is_some_and(|p| p != port) {
        return false;
    }
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if entry.eq_ignore_ascii_case(host) {
        return true;
    }
    let Some(ip) = ip else { return false };
    if let Some((net, bits)) = entry.split_once('/') {
        let (Ok(net), Ok(bits)) = (net.parse::<IpAddr>(), bits.parse::<u32>()) else {
            return false;
        };
        return match (net, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) if bits <= 32 => {
                let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
                u32::from(n) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(n), IpAddr::V6(a)) if bits <= 128 => {
                let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
                u128::from(n) & mask == u128::from(a) & mask
            }
            _ => false,
        };
    }
    entry.parse::<IpAddr>().is_ok_and(|e| e == ip)
}

/// `localhost`, `*.localhost` (a trailing dot allowed): names that always resolve to loopback.
fn is_loopback_name(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost")
}

/// The host of an address, checked as far as can be done without a lookup: the scheme is
/// `http` or `https`, there is a host, no user info, and a literal address (or `localhost`) is
/// not internal (unless allowed). What a source's create-time check calls; [`to_file`] checks again, after
/// resolving.
pub fn check_address(config: &FetchConfig, url: &str) -> Result<reqwest::Url, FetchError> {
    let parsed = reqwest::Url::parse(url.trim())
        .map_err(|_| FetchError::Refused(format!("Not a valid address: {url}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(FetchError::Refused(format!(
            "Only http and https addresses are fetched, not {}:",
            parsed.scheme()
        )));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(FetchError::Refused(
            "Addresses with a user name or password are not fetched".into(),
        ));
    }
    let host = parsed
        .host_str()
        .ok_or_else(|| FetchError::Refused(format!("The address has no host: {url}")))?
        .to_string();
    let port = parsed.port_or_known_default().unwrap_or(80);
    let literal = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
        .ok();
    if let Some(ip) = literal {
        check_ip(config, &host, ip, port)?;
    } else if is_loopback_name(&host) {
        // `localhost` and `*.localhost` always mean this machine (RFC 6761): refused as its
        // loopback address would be, before any lookup.
        check_ip(config, &host, IpAddr::from([127, 0, 0, 1]), port)?;
    }
    Ok(parsed)
}

fn check_ip(config: &FetchConfig, host: &str, ip: IpAddr, port: u16) -> Result<(), FetchError> {
    if is_internal(ip)
        && !config
            .allowed_hosts
            .iter()
            .any(|a| allowed_by(a, host, Some(ip), port))
    {
        return Err(FetchError::Refused(format!(
            "The address {host} ({ip}) is internal and is not fetched (catalog.fetch.allowed_hosts)"
        )));
    }
    Ok(())
}

/// The checked addresses to connect to for `url`'s host.
async fn resolve(config: &FetchConfig, url: &reqwest::Url) -> Result<Vec<SocketAddr>, FetchError> {
    let host = url.host_str().unwrap_or_default().to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::time::timeout(
            Duration::from_secs(config.connect_timeout_secs.max(1)),
            tokio::net::lookup_host((bare, port)),
        )
        .await
        .map_err(|_| FetchError::Timeout(format!("looking up {host}")))?
        .map_err(|e| FetchError::Failed(format!("looking up {host}: {e}")))?
        .collect(),
    };
    if addrs.is_empty() {
        return Err(FetchError::Failed(format!("{host} has no address")));
    }
    for a in &addrs {
        check_ip(config, &host, a.ip(), port)?;
    }
    Ok(addrs)
}

/// Fetches `url` into the file at `dest` (created or truncated), following the rules of this
/// module. On an error the file may hold part of the body; the caller removes it.
pub async fn to_file(config: &FetchConfig, url: &str, dest: &Path) -> Result<Fetched, FetchError> {
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

/// Fetches `url` into memory (at most `config.max_bytes`, counted after any `Content-Encoding`
/// is undone, so a compressed bomb stops at the cap), sending the extra request `headers`
/// (`Accept`, `Authorization` …). What the harvesters read their sources with.
pub async fn to_bytes(
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

    #[test]
    fn internal_addresses_are_recognised() {
        for a in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "::1",
            "::",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "::7f00:1",
        ] {
            assert!(is_internal(a.parse().unwrap()), "{a} is internal");
        }
        for a in ["93.184.215.14", "8.8.8.8", "2606:4700::1111", "1.1.1.1"] {
            assert!(!is_internal(a.parse().unwrap()), "{a} is public");
        }
    }

    #[test]
    fn addresses_are_checked_before_any_lookup() {
        let c = FetchConfig::default();
        for bad in [
            "file:///etc/passwd",
            "ftp://example.org/x.csv",
            "gopher://example.org/",
            "http://127.0.0.1/x.csv",
            "http://[::1]:8080/",
            "http://169.254.169.254/latest/meta-data/",
            "http://user:pw@example.org/",
            "http://localhost:8080/",
            "http://api.LOCALHOST./",
            "not an address",
        ] {
            assert!(
                matches!(check_address(&c, bad), Err(FetchError::Refused(_))),
                "{bad} refused"
            );
        }
        assert!(check_address(&c, "https://example.org/data.csv").is_ok());
        let allowing = FetchConfig {
            allowed_hosts: vec!["127.0.0.0/8".into(), "files.internal".into()],
            ..FetchConfig::default()
        };
        assert!(check_address(&allowing, "http://127.0.0.1:9000/x.csv").is_ok());
        assert!(check_address(&allowing, "http://localhost:9000/x.csv").is_ok());
        let by_name = FetchConfig {
            allowed_hosts: vec!["localhost:8080".into()],
            ..FetchConfig::default()
        };
        assert!(check_address(&by_name, "http://localhost:8080/").is_ok());
        assert!(check_address(&by_name, "http://localhost:8081/").is_err());
        assert!(allowed_by("files.internal", "FILES.internal", None, 80));
        assert!(allowed_by(
            "10.0.0.0/8",
            "h",
            Some("10.9.9.9".parse().unwrap()),
            80
        ));
        assert!(!allowed_by(
            "10.0.0.0/8",
            "h",
            Some("11.0.0.1".parse().unwrap()),
            80
        ));
        assert!(allowed_by(
            "fd00::/8",
            "h",
            Some("fd12::1".parse().unwrap()),
            80
        ));
        let lo = Some("127.0.0.1".parse().unwrap());
        assert!(allowed_by("127.0.0.1:8080", "127.0.0.1", lo, 8080));
        assert!(!allowed_by("127.0.0.1:8080", "127.0.0.1", lo, 8081));
        assert!(allowed_by("localhost:8080", "localhost", lo, 8080));
        assert!(!allowed_by("localhost:8080", "localhost", lo, 9));
        let v6 = Some("::1".parse().unwrap());
        assert!(allowed_by("[::1]:8080", "[::1]", v6, 8080));
        assert!(!allowed_by("[::1]:8080", "[::1]", v6, 8081));
        assert!(allowed_by("::1", "[::1]", v6, 1));
        let port_allowing = FetchConfig {
            allowed_hosts: vec!["127.0.0.1:9000".into()],
            ..FetchConfig::default()
        };
        assert!(check_address(&port_allowing, "http://127.0.0.1:9000/x").is_ok());
        assert!(check_address(&port_allowing, "http://127.0.0.1:9001/x").is_err());
    }

    #[tokio::test]
    async fn a_host_resolving_to_loopback_is_refused_at_fetch_time() {
        let c = FetchConfig::default();
        let dir = tempfile::tempdir().unwrap();
        let err = to_file(&c, "http://localhost:9/x.csv", &dir.path().join("f"))
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
        let err = to_bytes(&c, &format!("http://127.0.0.1:{port}/slow.csv"), &[])
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
