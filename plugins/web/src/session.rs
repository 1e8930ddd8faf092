//! Who is visiting: a signed session cookie (`catalog_session`: a `web_session` row's id, the
//! user's id, a fingerprint of the password hash and an expiry, HMAC-SHA256 with the site's
//! secret; `HttpOnly`, `SameSite=Lax`, `Secure` on an https site),
//! CSRF tokens for every form (bound to a random `catalog_csrf` cookie: a POST whose token does
//! not match its cookie is refused with 403), and a limit on failed logins per account and per
//! address.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use catalog_framework::prelude::*;
use hmac::{Hmac, Mac};
use sha2::Sha256;

pub(crate) const SESSION_COOKIE: &str = "catalog_session";
pub(crate) const CSRF_COOKIE: &str = "catalog_csrf";
/// The form field of the CSRF token (CKAN's name).
pub(crate) const CSRF_FIELD: &str = "_csrf_token";

/// Failed logins allowed per account, and per address (many people may share one), in
/// [`WINDOW`].
const MAX_FAILURES: u32 = 10;
const MAX_ADDRESS_FAILURES: u32 = 50;
const WINDOW: Duration = Duration::from_secs(15 * 60);
/// Keys the failure table holds at most (the oldest windows are dropped first).
const MAX_KEYS: usize = 100_000;

/// The secret and the failure counts.
pub(crate) struct Sessions {
    secret: Vec<u8>,
    days: u64,
    secure: bool,
    failures: Mutex<HashMap<String, (u32, Instant)>>,
}

impl Sessions {
    /// `catalog.web.secret` when set (every node of a site must share it), else a secret kept
    /// in `<data dir>/web-secret`, made on first start.
    pub(crate) fn load(config: &Config, data_dir: &std::path::Path) -> anyhow::Result<Sessions> {
        let web = config.catalog.other.get("web");
        let configured = web
            .and_then(|w| w.get("secret"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(|s| s.as_bytes().to_vec());
        let secret = match configured {
            Some(s) => s,
            None => file_secret(&data_dir.join("web-secret"))?,
        };
        let days = web
            .and_then(|w| w.get("session_days"))
            .and_then(Value::as_u64)
            .unwrap_or(14)
            .clamp(1, 365);
        Ok(Sessions {
            secret,
            days,
            secure: config.catalog.site_url.starts_with("https://"),
            failures: Mutex::new(HashMap::new()),
        })
    }

    /// Sessions with a random secret of this process (when the data directory cannot keep one).
    pub(crate) fn ephemeral(config: &Config) -> Sessions {
        Sessions {
            secret: hex::encode(rand::random::<[u8; 32]>()).into_bytes(),
            days: 14,
            secure: config.catalog.site_url.starts_with("https://"),
            failures: Mutex::new(HashMap::new()),
        }
    }

    fn sign(&self, text: &str) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.secret).expect("any key length");
        mac.update(text.as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    fn verify(&self, text: &str, signature: &str) -> bool {
        let Ok(sig) = hex::decode(signature) else {
            return false;
        };
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.secret).expect("any key length");
        mac.update(text.as_bytes());
        mac.verify_slice(&sig).is_ok()
    }

    /// A new session of `user_id` (whose password hash is `password_hash`): stored in
    /// `web_session`, and the `Set-Cookie` value that names it.
    pub(crate) async fn start(
        &self,
        app: &AppState,
        user_id: &str,
        password_hash: Option<&str>,
    ) -> CkanResult<String> {
        let expires = now() + self.days * 86_400;
        let sid = hex::encode(rand::random::<[u8; 16]>());
        let row = (sid.clone(), user_id.to_string());
        ActionContext::new(app.clone(), None)
            .run_write("web_session_start", move |ctx| {
                Box::pin(async move {
                    let conn = ctx.db().await?;
                    // Expired sessions go as new ones come.
                    sqlx::query("DELETE FROM web_session WHERE expires < $1")
                        .bind(now() as i64)
                        .execute(&mut *conn)
                        .await?;
                    sqlx::query(
                        "INSERT INTO web_session (id, user_id, expires) VALUES ($1, $2, $3)",
                    )
                    .bind(&row.0)
                    .bind(&row.1)
                    .bind(expires as i64)
                    .execute(&mut *conn)
                    .await?;
                    Ok(Value::Null)
                })
            })
            .await?;
        Ok(self.signed_cookie(&sid, expires, user_id, password_hash))
    }

    /// The `Set-Cookie` value naming session `sid` of `user_id` until `expires`.
    fn signed_cookie(
        &self,
        sid: &str,
        expires: u64,
        user_id: &str,
        password_hash: Option<&str>,
    ) -> String {
        let payload = format!(
            "v2.{sid}.{}.{expires}.{user_id}",
            fingerprint(password_hash)
        );
        let value = format!("{payload}.{}", self.sign(&payload));
        self.cookie(SESSION_COOKIE, &value, self.days * 86_400)
    }

    /// Ends the session the request's cookie names (logout).
    pub(crate) async fn end(&self, app: &AppState, headers: &HeaderMap) -> CkanResult<()> {
        let Some(session) = self.session_user(headers) else {
            return Ok(());
        };
        ActionContext::new(app.clone(), None)
            .run_write("web_session_end", move |ctx| {
                Box::pin(async move {
                    sqlx::query("DELETE FROM web_session WHERE id = $1")
                        .bind(&session.id)
                        .execute(ctx.db().await?)
                        .await?;
                    Ok(Value::Null)
                })
            })
            .await?;
        Ok(())
    }

    /// The `Set-Cookie` value that ends the session.
    pub(crate) fn clear_session(&self) -> String {
        self.cookie(SESSION_COOKIE, "", 0)
    }

    fn cookie(&self, name: &str, value: &str, max_age: u64) -> String {
        format!(
            "{name}={value}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Lax{}",
            if self.secure { "; Secure" } else { "" }
        )
    }

    /// The session a validly signed, unexpired cookie names (whether it still exists is the
    /// store's to say: [`Session::live`]).
    pub(crate) fn session_user(&self, headers: &HeaderMap) -> Option<Session> {
        let value = cookie(headers, SESSION_COOKIE)?;
        let (payload, signature) = value.rsplit_once('.')?;
        if !self.verify(payload, signature) {
            return None;
        }
        let mut parts = payload.splitn(5, '.');
        let (Some("v2"), Some(id), Some(fp), Some(expires), Some(user_id)) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return None;
        };
        let expires: u64 = expires.parse().ok()?;
        (expires > now()).then(|| Session {
            id: id.to_string(),
            user_id: user_id.to_string(),
            fingerprint: fp.to_string(),
        })
    }

    /// The CSRF token for this visitor's `catalog_csrf` cookie, and the `Set-Cookie` to send
    /// when the visitor has none yet.
    pub(crate) fn csrf(&self, headers: &HeaderMap) -> (String, Option<String>) {
        match cookie(headers, CSRF_COOKIE).filter(|c| c.len() == 32) {
            Some(c) => (self.sign(&format!("csrf.{c}")), None),
            None => {
                let c = hex::encode(rand::random::<[u8; 16]>());
                let token = self.sign(&format!("csrf.{c}"));
                (token, Some(self.cookie(CSRF_COOKIE, &c, 30 * 86_400)))
            }
        }
    }

    /// Whether a form's token matches the visitor's CSRF cookie.
    pub(crate) fn csrf_ok(&self, headers: &HeaderMap, token: Option<&str>) -> bool {
        match (cookie(headers, CSRF_COOKIE), token) {
            (Some(c), Some(t)) if c.len() == 32 => self.verify(&format!("csrf.{c}"), t),
            _ => false,
        }
    }

    /// Counts a login attempt for `account` from `req`'s address, if it may be tried now:
    /// `false` (nothing counted) once the account or the address used up its failures in
    /// [`WINDOW`]. The attempt counts as a failure until [`Sessions::succeeded`] refunds it,
    /// so parallel attempts cannot all pass the check before any of them is counted.
    pub(crate) fn attempt(&self, account: &str, req: &Parts) -> bool {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let keys = keys(account, req);
        let allowed = keys.iter().all(|k| match failures.get(k) {
            Some((n, since)) if since.elapsed() < WINDOW => {
                *n < if k.starts_with("address:") {
                    MAX_ADDRESS_FAILURES
                } else {
                    MAX_FAILURES
                }
            }
            _ => true,
        });
        if !allowed {
            return false;
        }
        if failures.len() >= MAX_KEYS {
            failures.retain(|_, (_, since)| since.elapsed() < WINDOW);
            if failures.len() >= MAX_KEYS {
                failures.clear();
            }
        }
        for k in keys {
            let entry = failures.entry(k).or_insert((0, Instant::now()));
            if entry.1.elapsed() >= WINDOW {
                *entry = (0, Instant::now());
            }
            entry.0 += 1;
        }
        true
    }

    /// A successful login: the account's failures are forgotten and the address gets its
    /// attempt back.
    pub(crate) fn succeeded(&self, account: &str, req: &Parts) {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        for k in keys(account, req) {
            if k.starts_with("address:") {
                if let Some(entry) = failures.get_mut(&k) {
                    entry.0 = entry.0.saturating_sub(1);
                }
            } else {
                failures.remove(&k);
            }
        }
    }
}

/// A session a cookie names.
pub(crate) struct Session {
    pub(crate) id: String,
    pub(crate) user_id: String,
    /// [`fingerprint`] of the password hash the user had at login.
    fingerprint: String,
}

impl Session {
    /// Whether the session still holds for `user`: still stored (not logged out, the user not
    /// blocked or deleted since), and the user's password unchanged since the login.
    pub(crate) async fn live(
        &self,
        ctx: &mut ActionContext,
        user: &catalog_framework::store::UserRow,
    ) -> bool {
        if user.id != self.user_id || fingerprint(user.password_hash.as_deref()) != self.fingerprint
        {
            return false;
        }
        let Ok(conn) = ctx.read_db().await else {
            return false;
        };
        sqlx::query("SELECT 1 FROM web_session WHERE id = $1 AND user_id = $2 AND expires > $3")
            .bind(&self.id)
            .bind(&self.user_id)
            .bind(now() as i64)
            .fetch_optional(conn)
            .await
            .ok()
            .flatten()
            .is_some()
    }
}

/// 16 hex digits of a keyed digest of the password hash: a cookie made before the password
/// changed no longer matches (every session of the user ends with a new password).
fn fingerprint(password_hash: Option<&str>) -> String {
    use sha2::Digest;
    let digest = Sha256::digest(format!("catalog-session.{}", password_hash.unwrap_or("")));
    hex::encode(&digest[..8])
}

/// Ends every session of a user who is deleted, purged or no longer active, in the same
/// transaction as the change (so unblocking the user later does not bring them back).
pub(crate) struct EndSessions;

#[async_trait::async_trait]
impl catalog_framework::events::EventSubscriber for EndSessions {
    async fn on_event(
        &self,
        ctx: &mut ActionContext,
        event: &catalog_framework::events::DomainEvent,
    ) -> CkanResult<()> {
        use catalog_framework::events::{Change, Entity};
        if event.entity != Entity::User {
            return Ok(());
        }
        let inactive = event
            .after
            .as_ref()
            .and_then(|a| a.get("state"))
            .and_then(Value::as_str)
            .is_some_and(|s| s != "active");
        if matches!(event.change, Change::Deleted | Change::Purged) || inactive {
            sqlx::query("DELETE FROM web_session WHERE user_id = $1")
                .bind(&event.id)
                .execute(ctx.db().await?)
                .await?;
        }
        Ok(())
    }
}

fn keys(account: &str, req: &Parts) -> Vec<String> {
    let mut keys = vec![format!("account:{}", account.to_lowercase())];
    if let Some(ConnectInfo(addr)) = req.extensions.get::<ConnectInfo<SocketAddr>>() {
        keys.push(format!("address:{}", addr.ip()));
    }
    keys
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A cookie's value from the `Cookie` headers.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

/// The secret in `path`, made (64 hex characters, owner-only) when missing.
fn file_secret(path: &std::path::Path) -> anyhow::Result<Vec<u8>> {
    if let Ok(s) = std::fs::read_to_string(path) {
        let s = s.trim();
        if s.len() >= 32 {
            return Ok(s.as_bytes().to_vec());
        }
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let secret = hex::encode(rand::random::<[u8; 32]>());
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    std::io::Write::write_all(&mut options.open(path)?, secret.as_bytes())?;
    Ok(secret.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn sessions() -> Sessions {
        Sessions {
            secret: b"0123456789abcdef0123456789abcdef".to_vec(),
            days: 1,
            secure: false,
            failures: Mutex::new(HashMap::new()),
        }
    }

    fn with_cookie(set_cookie: &str) -> HeaderMap {
        let pair = set_cookie.split(';').next().unwrap();
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("a=b; {pair}")).unwrap(),
        );
        h
    }

    #[test]
    fn a_session_cookie_is_read_back_and_a_forged_one_is_not() {
        let s = sessions();
        let set = s.signed_cookie("sid-1", now() + 60, "user-1", Some("$argon2$x"));
        assert!(set.contains("HttpOnly") && set.contains("SameSite=Lax"));
        let read = s.session_user(&with_cookie(&set)).unwrap();
        assert_eq!(
            (read.id.as_str(), read.user_id.as_str()),
            ("sid-1", "user-1")
        );
        assert_eq!(read.fingerprint, fingerprint(Some("$argon2$x")));
        assert_ne!(read.fingerprint, fingerprint(Some("$argon2$y")));
        let forged = set.replace("user-1", "user-2");
        assert!(s.session_user(&with_cookie(&forged)).is_none());
        let other = Sessions {
            secret: b"another secret, 32 bytes long!!!".to_vec(),
            ..sessions()
        };
        assert!(other.session_user(&with_cookie(&set)).is_none());
        assert!(s.session_user(&with_cookie(&s.clear_session())).is_none());
        let expired = s.signed_cookie("sid-1", now() - 1, "user-1", None);
        assert!(s.session_user(&with_cookie(&expired)).is_none());
    }

    #[test]
    fn csrf_tokens_match_their_cookie_only() {
        let s = sessions();
        let (token, set) = s.csrf(&HeaderMap::new());
        let headers = with_cookie(&set.unwrap());
        assert!(s.csrf_ok(&headers, Some(&token)));
        assert!(!s.csrf_ok(&headers, Some("00")));
        assert!(!s.csrf_ok(&headers, None));
        assert!(!s.csrf_ok(&HeaderMap::new(), Some(&token)));
        let (again, none) = s.csrf(&headers);
        assert_eq!(again, token);
        assert!(none.is_none());
    }

    #[test]
    fn failed_logins_are_limited_per_account() {
        let s = sessions();
        let (parts, _) = axum::http::Request::new(()).into_parts();
        for _ in 0..MAX_FAILURES {
            assert!(s.attempt("Alice", &parts));
        }
        assert!(!s.attempt("alice", &parts));
        assert!(s.attempt("bob", &parts));
        s.succeeded("alice", &parts);
        assert!(s.attempt("alice", &parts));
    }

    #[test]
    fn parallel_attempts_are_counted_before_any_is_checked() {
        let s = std::sync::Arc::new(sessions());
        let addr: SocketAddr = "192.0.2.1:1".parse().unwrap();
        let passed = std::sync::atomic::AtomicU32::new(0);
        std::thread::scope(|scope| {
            for _ in 0..40 {
                scope.spawn(|| {
                    let mut req = axum::http::Request::new(());
                    req.extensions_mut().insert(ConnectInfo(addr));
                    let (parts, _) = req.into_parts();
                    if s.attempt("carol", &parts) {
                        passed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                });
            }
        });
        assert_eq!(passed.into_inner(), MAX_FAILURES);
    }
}
