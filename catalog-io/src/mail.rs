//! The mailer `smtp`: a small SMTP client for the few messages the service sends
//! (`user_invite`).
//!
//! One message per connection: greeting, `EHLO`, optional `STARTTLS` (rustls, webpki roots)
//! and `AUTH PLAIN`, `MAIL FROM`, `RCPT TO`, `DATA`, `QUIT`, the whole conversation bounded by
//! `catalog.smtp.timeout_secs`. The settings are `catalog.smtp.*` (CKAN's `smtp.*`); the
//! errors read as CKAN's mailer's (`SMTP server could not be connected to: "<server>" …`).
//!
//! Written here rather than with `lettre`: the service sends one plain-text message per call,
//! and lettre's dependency tree (address parsers, its own TLS and pooling layers) is far larger
//! than the ~200 lines needed; rustls and tokio-rustls are already in the build.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use async_trait::async_trait;
use catalog_framework::mail::{Mail, MailError, Mailer};
use catalog_framework::register_mailer;
use catalog_framework::store::config::{Config, SmtpConfig};

/// The mailer over SMTP, registered as `smtp`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SmtpMailer;

#[async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, config: &Config, mail: &Mail) -> Result<(), MailError> {
        send(config, mail).await
    }
}
register_mailer!("smtp", SmtpMailer);

/// Sends `mail` through the configured SMTP server, within `catalog.smtp.timeout_secs`.
async fn send(config: &Config, mail: &Mail) -> Result<(), MailError> {
    let smtp = &config.catalog.smtp;
    let limit = Duration::from_secs(smtp.timeout_secs.max(1));
    match tokio::time::timeout(limit, conversation(config, smtp, mail)).await {
        Ok(result) => result,
        Err(_) => Err(MailError(format!(
            "SMTP server timed out: \"{}\" (no answer within {} s)",
            smtp.server,
            limit.as_secs()
        ))),
    }
}

/// `host` and port of `catalog.smtp.server` (`host`, `host:port`, `[v6]:port`); port 25 when
/// none is given, as Python's smtplib.
fn parse_server(server: &str) -> Option<(String, u16)> {
    let s = server.trim();
    let s = s.split_once("://").map_or(s, |(_, rest)| rest);
    if s.is_empty() {
        return None;
    }
    if let Some(rest) = s.strip_prefix('[') {
        let (host, tail) = rest.split_once(']')?;
        let port = match tail.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None => 25,
        };
        return Some((host.to_string(), port));
    }
    match s.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => Some((host.to_string(), port.parse().ok()?)),
        _ => Some((s.to_string(), 25)),
    }
}

/// Python's rendering of a socket error (`[Errno 111] Connection refused`), which CKAN's
/// message quotes.
fn os_error(e: &std::io::Error) -> String {
    let text = e.to_string();
    match e.raw_os_error() {
        Some(code) => {
            let suffix = format!(" (os error {code})");
            format!("[Errno {code}] {}", text.trim_end_matches(&suffix))
        }
        None => text,
    }
}

async fn conversation(config: &Config, smtp: &SmtpConfig, mail: &Mail) -> Result<(), MailError> {
    let (host, port) = parse_server(&smtp.server)
        .ok_or_else(|| MailError("SMTP server hostname is not configured".into()))?;
    let tcp = TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|e| {
            MailError(format!(
                "SMTP server could not be connected to: \"{}\" {}",
                smtp.server,
                os_error(&e)
            ))
        })?;
    let mut plain = Session::new(tcp);
    plain.expect(&[220]).await?;
    let ext = plain.ehlo().await?;
    if smtp.starttls {
        if !ext.iter().any(|l| l.eq_ignore_ascii_case("STARTTLS")) {
            return Err(MailError("SMTP server does not support STARTTLS".into()));
        }
        plain.command("STARTTLS", &[220]).await?;
        let tcp = plain.stream.into_inner();
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        let tls_config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| MailError(format!("SMTP TLS setup: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let name = rustls::pki_types::ServerName::try_from(host.clone())
            .map_err(|e| MailError(format!("SMTP TLS server name {host}: {e}")))?;
        let tls = tokio_rustls::TlsConnector::from(Arc::new(tls_config))
            .connect(name, tcp)
            .await
            .map_err(|e| MailError(format!("SMTP STARTTLS failed: {e}")))?;
        let mut secure = Session::new(tls);
        secure.ehlo().await?;
        deliver(&mut secure, config, smtp, mail).await
    } else {
        deliver(&mut plain, config, smtp, mail).await
    }
}

async fn deliver<S: AsyncRead + AsyncWrite + Unpin>(
    s: &mut Session<S>,
    config: &Config,
    smtp: &SmtpConfig,
    mail: &Mail,
) -> Result<(), MailError> {
    if let Some(user) = smtp.user.as_deref().filter(|u| !u.is_empty()) {
        let password = smtp.password.as_deref().unwrap_or_default();
        let token =
            base64::engine::general_purpose::STANDARD.encode(format!("\0{user}\0{password}"));
        s.command(&format!("AUTH PLAIN {token}"), &[235]).await?;
    }
    let from = mail_from(config);
    s.command(&format!("MAIL FROM:<{from}>"), &[250]).await?;
    s.command(&format!("RCPT TO:<{}>", mail.to_email), &[250, 251])
        .await?;
    s.command("DATA", &[354]).await?;
    let message = render(config, &from, mail);
    s.write_raw(&message).await?;
    s.command(".", &[250]).await?;
    // The message is accepted; a server that hangs up without answering QUIT changes nothing.
    let _ = s.command("QUIT", &[221]).await;
    Ok(())
}

/// The sender: `catalog.smtp.mail_from`, else `noreply@<host of site_url>`.
fn mail_from(config: &Config) -> String {
    if let Some(f) = config
        .catalog
        .smtp
        .mail_from
        .as_deref()
        .filter(|f| !f.is_empty())
    {
        return f.to_string();
    }
    let url = config.site_url();
    let host = url
        .split_once("://")
        .map_or(url, |(_, rest)| rest)
        .split(['/', ':'])
        .next()
        .filter(|h| !h.is_empty())
        .unwrap_or("localhost");
    format!("noreply@{host}")
}

/// A header value: as is when ASCII, else RFC 2047 base64 words.
fn header_text(s: &str) -> String {
    let clean: String = s.chars().filter(|c| *c != '\r' && *c != '\n').collect();
    if clean.is_ascii() {
        clean
    } else {
        format!(
            "=?utf-8?b?{}?=",
            base64::engine::general_purpose::STANDARD.encode(clean)
        )
    }
}

/// `"Name" <address>` (the name quoted, quotes and backslashes escaped).
fn address(name: &str, email: &str) -> String {
    if name.is_empty() {
        return format!("<{email}>");
    }
    let name = header_text(name);
    if name.starts_with("=?") {
        format!("{name} <{email}>")
    } else {
        format!(
            "\"{}\" <{email}>",
            name.replace('\\', "\\\\").replace('"', "\\\"")
        )
    }
}

/// The message as sent after `DATA`: headers, a blank line, the body in base64 (as CKAN's
/// mailer sends it), lines of 76 characters, CRLF line ends; no line starts with a dot.
fn render(config: &Config, from: &str, mail: &Mail) -> String {
    let mut out = String::new();
    let mut header = |k: &str, v: &str| {
        out.push_str(k);
        out.push_str(": ");
        out.push_str(v);
        out.push_str("\r\n");
    };
    header("From", &address(&config.catalog.site_title, from));
    header("To", &address(&mail.to_name, &mail.to_email));
    header("Subject", &header_text(&mail.subject));
    header("Date", &chrono::Utc::now().to_rfc2822());
    let domain = from.rsplit_once('@').map_or("localhost", |(_, d)| d);
    header(
        "Message-ID",
        &format!("<{}@{domain}>", uuid::Uuid::new_v4().simple()),
    );
    header("MIME-Version", "1.0");
    header("Content-Type", "text/plain; charset=\"utf-8\"");
    header("Content-Transfer-Encoding", "base64");
    if let Some(r) = config
        .catalog
        .smtp
        .reply_to
        .as_deref()
        .filter(|r| !r.is_empty())
    {
        header("Reply-To", &header_text(r));
    }
    if !config.catalog.hide_version {
        header("X-Mailer", concat!("catalog ", env!("CARGO_PKG_VERSION")));
    }
    out.push_str("\r\n");
    let body = mail.body.replace("\r\n", "\n").replace('\n', "\r\n");
    let encoded = base64::engine::general_purpose::STANDARD.encode(body);
    for chunk in encoded.as_bytes().chunks(76) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push_str("\r\n");
    }
    out
}

/// One SMTP connection: commands out, replies (`NNN-…` continuation lines) in.
struct Session<S> {
    stream: BufReader<S>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Session<S> {
    fn new(stream: S) -> Self {
        Session {
            stream: BufReader::new(stream),
        }
    }

    /// Reads one reply: its code and its text lines.
    async fn reply(&mut self) -> Result<(u16, Vec<String>), MailError> {
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            let n =
                self.stream.read_line(&mut line).await.map_err(|e| {
                    MailError(format!("SMTP server disconnected: {}", os_error(&e)))
                })?;
            if n == 0 {
                return Err(MailError(
                    "SMTPServerDisconnected('Connection unexpectedly closed')".into(),
                ));
            }
            let line = line.trim_end_matches(['\r', '\n']);
            let code = line
                .get(..3)
                .and_then(|c| c.parse::<u16>().ok())
                .ok_or_else(|| MailError(format!("SMTP server answered {line:?}")))?;
            lines.push(line.get(4..).unwrap_or_default().to_string());
            if line.as_bytes().get(3) != Some(&b'-') {
                return Ok((code, lines));
            }
            if lines.len() > 100 {
                return Err(MailError("SMTP server reply too long".into()));
            }
        }
    }

    async fn expect(&mut self, codes: &[u16]) -> Result<Vec<String>, MailError> {
        let (code, lines) = self.reply().await?;
        if codes.contains(&code) {
            Ok(lines)
        } else {
            Err(MailError(format!(
                "SMTP error ({code}, {:?})",
                lines.join(" ")
            )))
        }
    }

    async fn write_raw(&mut self, text: &str) -> Result<(), MailError> {
        let s = self.stream.get_mut();
        s.write_all(text.as_bytes())
            .await
            .map_err(|e| MailError(format!("SMTP server disconnected: {}", os_error(&e))))?;
        s.flush()
            .await
            .map_err(|e| MailError(format!("SMTP server disconnected: {}", os_error(&e))))
    }

    async fn command(&mut self, line: &str, codes: &[u16]) -> Result<Vec<String>, MailError> {
        self.write_raw(&format!("{line}\r\n")).await?;
        self.expect(codes).await
    }

    /// `EHLO`, returning the extensions the server lists (`STARTTLS`, `AUTH PLAIN LOGIN` …).
    async fn ehlo(&mut self) -> Result<Vec<String>, MailError> {
        let lines = self.command("EHLO catalog.localdomain", &[250]).await?;
        Ok(lines.into_iter().skip(1).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_spellings() {
        assert_eq!(parse_server("localhost"), Some(("localhost".into(), 25)));
        assert_eq!(
            parse_server("smtp.example.org:587"),
            Some(("smtp.example.org".into(), 587))
        );
        assert_eq!(parse_server("[::1]:2525"), Some(("::1".into(), 2525)));
        assert_eq!(parse_server("smtp://mx:26"), Some(("mx".into(), 26)));
        assert_eq!(parse_server(""), None);
    }

    #[test]
    fn refused_reads_as_python_does() {
        let e = std::io::Error::from_raw_os_error(111);
        assert!(os_error(&e).starts_with("[Errno 111] "), "{}", os_error(&e));
        assert!(!os_error(&e).contains("os error"));
    }

    #[test]
    fn message_body_is_base64_with_crlf_lines() {
        let config = Config::default();
        let m = Mail {
            to_name: "Zoë".into(),
            to_email: "z@example.org".into(),
            subject: "Invite for Catalog".into(),
            body: "line one\n.line two\n".into(),
        };
        let text = render(&config, "noreply@127.0.0.1", &m);
        assert!(text.contains("To: =?utf-8?b?"));
        assert!(text.contains("From: \"Catalog\" <noreply@127.0.0.1>\r\n"));
        let body = text.split("\r\n\r\n").nth(1).unwrap().replace("\r\n", "");
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(body)
            .unwrap();
        assert_eq!(decoded, b"line one\r\n.line two\r\n");
        assert_eq!(mail_from(&config), "noreply@127.0.0.1");
    }
}
