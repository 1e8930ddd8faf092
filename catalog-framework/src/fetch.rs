//! Fetches the server makes on its own behalf (the DataStore loader, harvesters), with the
//! same rules everywhere (`catalog.fetch.*`, docs/SECURITY.md "Server-side fetches"):
//!
//! - only `http` and `https` addresses;
//! - the host is resolved, every address it resolves to is checked, and the connection goes
//!   to exactly those addresses (a second lookup cannot swap in another one): a loopback,
//!   private, link-local (cloud metadata), shared, multicast or reserved address is refused
//!   unless the operator lists the host in `allowed_hosts`;
//! - redirects are followed by hand, at most `max_redirects`, each new address checked again;
//! - connect, read and total timeouts, a minimum average transfer rate, and a size cap
//!   counted on the bytes received.
//!
//! The rules are here ([`check_address`], [`resolve`]); the client that applies them is a
//! [`Fetcher`], registered under a name (`register_fetcher!`): the host uses the one named
//! `http` (catalog-io's, on `reqwest`), which a plugin replaces by registering `http` at a
//! higher priority.
//!
//! ```ignore
//! let got = app.fetcher.to_file(&app.config.catalog.fetch, url, &path).await?;
//! let (got, body) = app.fetcher.to_bytes(&config, url, &[("Accept", "text/turtle".into())]).await?;
//! ```

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::time::Duration;

use async_trait::async_trait;
use catalog_store::config::FetchConfig;

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

/// The client of server-side fetches: it applies this module's rules ([`check_address`] to
/// the address and every redirect, [`resolve`] before each connection) and `config`'s
/// timeouts, rate and size cap.
#[async_trait]
pub trait Fetcher: Send + Sync + 'static {
    /// Fetches `url` into the file at `dest` (created or truncated). On an error the file may
    /// hold part of the body; the caller removes it.
    async fn to_file(
        &self,
        config: &FetchConfig,
        url: &str,
        dest: &Path,
    ) -> Result<Fetched, FetchError>;

    /// Fetches `url` into memory (at most `config.max_bytes`, counted after any
    /// `Content-Encoding` is undone, so a compressed bomb stops at the cap), sending the extra
    /// request `headers` (`Accept`, `Authorization` …). What the harvesters read their
    /// sources with.
    async fn to_bytes(
        &self,
        config: &FetchConfig,
        url: &str,
        headers: &[(&str, String)],
    ) -> Result<(Fetched, Vec<u8>), FetchError>;
}

crate::extension_point!(
    /// A [`Fetcher`], submitted with [`register_fetcher!`](crate::register_fetcher). The host
    /// uses the one named `http`.
    pub FetcherRegistration, Box<dyn Fetcher>,
    collected("fetchers", "fetcher", listed = false)
);

/// Registers a [`Fetcher`]: `register_fetcher!("http", Mine, priority = 10)` replaces the
/// default one.
#[macro_export]
macro_rules! register_fetcher {
    ($name:expr, $value:expr) => {
        $crate::register_fetcher!($name, $value, priority = 0);
    };
    ($name:expr, $value:expr, priority = $p:expr) => {
        $crate::register_at!($crate::fetch::FetcherRegistration, $name, $value, $p);
    };
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
/// not internal (unless allowed). What a source's create-time check calls; every fetch checks again, after
/// resolving.
pub fn check_address(config: &FetchConfig, url: &str) -> Result<url::Url, FetchError> {
    let parsed = url::Url::parse(url.trim())
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

pub fn check_ip(config: &FetchConfig, host: &str, ip: IpAddr, port: u16) -> Result<(), FetchError> {
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

/// The checked addresses to connect to for `url`'s host: every address it resolves to
/// passes [`check_ip`], or none is given. A fetcher connects to exactly these.
pub async fn resolve(config: &FetchConfig, url: &url::Url) -> Result<Vec<SocketAddr>, FetchError> {
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
}
