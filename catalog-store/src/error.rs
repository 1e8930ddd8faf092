//! One error type for every action, and one table from its kind to CKAN's `__type` and HTTP status.

use http::StatusCode;
use serde_json::{json, Map, Value};

/// The kinds of failure CKAN's Action API distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Validation,
    Authorization,
    NotFound,
    Integrity,
    SearchQuery,
    Search,
    SearchIndex,
    Internal,
    /// The call lost a race in the store (deadlock, serialization failure, a unique key taken
    /// by a concurrent commit) and was rolled back. `ActionContext::run_top` runs such a call
    /// again; it reaches a client only if the race persists.
    ///
    Conflict,
}

impl ErrorKind {
    /// The single table: kind → (`__type`, HTTP status).
    pub const fn ckan_type_and_status(self) -> (&'static str, StatusCode) {
        match self {
            ErrorKind::Validation => ("Validation Error", StatusCode::CONFLICT),
            ErrorKind::Authorization => ("Authorization Error", StatusCode::FORBIDDEN),
            ErrorKind::NotFound => ("Not Found Error", StatusCode::NOT_FOUND),
            ErrorKind::Integrity => ("Integrity Error", StatusCode::BAD_REQUEST),
            ErrorKind::SearchQuery => ("Search Query Error", StatusCode::BAD_REQUEST),
            ErrorKind::Search => ("Search Error", StatusCode::CONFLICT),
            ErrorKind::SearchIndex => ("Search Index Error", StatusCode::INTERNAL_SERVER_ERROR),
            ErrorKind::Internal => ("Internal Server Error", StatusCode::INTERNAL_SERVER_ERROR),
            ErrorKind::Conflict => ("Validation Error", StatusCode::CONFLICT),
        }
    }
}

/// An action failure. Build it with the constructor functions ([`validation`], [`not_found`] …).
#[derive(Debug, Clone)]
pub struct CkanError {
    pub kind: ErrorKind,
    /// For validation errors: the field → messages dict. For the others: `{"message": …}`.
    pub body: Map<String, Value>,
}

impl std::fmt::Display for CkanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.kind, Value::Object(self.body.clone()))
    }
}

impl std::error::Error for CkanError {}

pub type CkanResult<T> = Result<T, CkanError>;

fn with_message(kind: ErrorKind, message: String) -> CkanError {
    let mut body = Map::new();
    body.insert("message".into(), Value::String(message));
    CkanError { kind, body }
}

/// `Not Found Error` with the message `Not found` or `Not found: <msg>`.
pub fn not_found(msg: impl Into<String>) -> CkanError {
    let msg = msg.into();
    let message = if msg.is_empty() {
        "Not found".to_string()
    } else {
        format!("Not found: {msg}")
    };
    with_message(ErrorKind::NotFound, message)
}

/// `Authorization Error` with the message `Access denied` or `Access denied: <msg>`.
pub fn not_authorized(msg: impl Into<String>) -> CkanError {
    let msg = msg.into();
    let message = if msg.is_empty() {
        "Access denied".to_string()
    } else {
        format!("Access denied: {msg}")
    };
    with_message(ErrorKind::Authorization, message)
}

/// A `Validation Error` whose dict holds only `message`.
pub fn validation_message(msg: impl Into<String>) -> CkanError {
    with_message(ErrorKind::Validation, msg.into())
}

/// A `Validation Error` built field by field: `validation().field("name", "Missing value")`.
pub fn validation() -> ValidationBuilder {
    ValidationBuilder::default()
}

/// `{field: ["Missing value"]}`: what CKAN's `get_or_bust` raises.
pub fn missing(field: &str) -> CkanError {
    validation().field(field, "Missing value").build()
}

/// A `Search Query Error`: `Search Query is invalid: <repr of msg>`. CKAN's package_search
/// re-raises the search layer's error as `_('Search Query is invalid: %r') % se.args`, so the
/// text is quoted as Python quotes a string (checked against CKAN 2.12).
pub fn search_query_error(msg: impl Into<String>) -> CkanError {
    with_message(
        ErrorKind::SearchQuery,
        format!("Search Query is invalid: {}", python_repr(&msg.into())),
    )
}

/// A `Search Error`: `Search error: <repr of msg>`, as CKAN's `_('Search error: %r') % se.args`.
pub fn search_error(msg: impl Into<String>) -> CkanError {
    with_message(
        ErrorKind::Search,
        format!("Search error: {}", python_repr(&msg.into())),
    )
}

/// Python 3's `repr()` of a string: single quotes unless the text has a single quote and no
/// double quote; backslashes, the quote and control characters escaped.
pub fn python_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

pub fn integrity(msg: impl Into<String>, data: Value) -> CkanError {
    let mut e = with_message(ErrorKind::Integrity, msg.into());
    e.body.insert("data".into(), data);
    e
}

/// A 500 whose details are logged here and never sent to the client.
pub fn internal(detail: impl std::fmt::Display) -> CkanError {
    tracing::error!(error = %detail, "internal error");
    with_message(ErrorKind::Internal, "Internal Server Error".into())
}

impl From<sqlx::Error> for CkanError {
    fn from(e: sqlx::Error) -> Self {
        if let sqlx::Error::Database(db) = &e {
            // A backstop: strings are checked at decoding, but a value the store cannot hold
            // (PostgreSQL: a NUL, an invalid byte sequence) is the caller's fault, not ours.
            let code = db.code();
            if matches!(code.as_deref(), Some("22021" | "22P05")) {
                return validation_message(NUL_MESSAGE);
            }
            if let Some(what) = conflict(code.as_deref()) {
                tracing::debug!(error = %db, "store conflict");
                return with_message(ErrorKind::Conflict, what.into());
            }
        }
        internal(format!("database: {e}"))
    }
}

impl From<serde_json::Error> for CkanError {
    fn from(e: serde_json::Error) -> Self {
        internal(format!("json: {e}"))
    }
}

/// What a string holding a NUL character gets: no store can keep one in a text column
/// (PostgreSQL refuses it), so it is refused at decoding, for every action.
pub const NUL_MESSAGE: &str = "Must not contain NUL characters";

/// The message of a [`ErrorKind::Conflict`] from a unique key: settled by one more run when it
/// was a race, a real duplicate otherwise.
pub const DUPLICATE_KEY: &str = "Duplicate key";

/// Database errors that mean "lost a race", and which kind: PostgreSQL's unique violation
/// ([`DUPLICATE_KEY`]), serialization failure, deadlock and a lock not granted within the
/// transaction's `lock_timeout`; SQLite's unique and primary-key constraints, and busy (another
/// process holds the write lock).
fn conflict(code: Option<&str>) -> Option<&'static str> {
    match code? {
        "23505" | "2067" | "1555" => Some(DUPLICATE_KEY),
        "40001" | "40P01" | "55P03" | "5" | "261" | "517" => Some("Conflict"),
        _ => None,
    }
}

#[derive(Default, Debug)]
pub struct ValidationBuilder {
    errors: Map<String, Value>,
}

impl ValidationBuilder {
    /// Adds a message to a field's list.
    pub fn field(mut self, field: &str, msg: impl Into<String>) -> Self {
        self.push(field, msg);
        self
    }

    pub fn push(&mut self, field: &str, msg: impl Into<String>) {
        let entry = self
            .errors
            .entry(field.to_string())
            .or_insert_with(|| json!([]));
        if let Value::Array(a) = entry {
            a.push(Value::String(msg.into()));
        }
    }

    /// Sets a field's error to an arbitrary value (nested resource errors, plain strings).
    pub fn set(&mut self, field: &str, value: Value) {
        self.errors.insert(field.to_string(), value);
    }

    /// Adds another error's fields (`{key: [messages]}`, as a parameter's refusal gives them)
    /// to the errors being collected, as if each message had been pushed; a field that is
    /// not a list of messages is set as it is.
    pub fn merge(&mut self, e: CkanError) {
        for (key, v) in e.body {
            match v {
                Value::Array(messages) => {
                    for m in messages {
                        match m {
                            Value::String(s) => self.push(&key, s),
                            other => self.push(&key, other.to_string()),
                        }
                    }
                }
                other => self.set(&key, other),
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    pub fn build(self) -> CkanError {
        CkanError {
            kind: ErrorKind::Validation,
            body: self.errors,
        }
    }

    /// `Ok(())` when no field failed, else the error.
    pub fn finish(self) -> CkanResult<()> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(self.build())
        }
    }
}

impl CkanError {
    /// The `error` object of the envelope: the body plus `__type`.
    pub fn to_error_object(&self) -> Value {
        let (ty, _) = self.kind.ckan_type_and_status();
        let mut obj = self.body.clone();
        obj.insert("__type".into(), Value::String(ty.into()));
        Value::Object(obj)
    }

    pub fn status(&self) -> StatusCode {
        self.kind.ckan_type_and_status().1
    }

    pub fn message(&self) -> Option<&str> {
        self.body.get("message").and_then(Value::as_str)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn python_repr_quotes_as_python_does() {
        // repr() in Python 3.
        assert_eq!(
            python_repr("Invalid \"sort\" parameter"),
            "'Invalid \"sort\" parameter'"
        );
        assert_eq!(
            python_repr("Invalid search parameters: ['foo']"),
            "\"Invalid search parameters: ['foo']\""
        );
        assert_eq!(python_repr("it's \"both\""), "'it\\'s \"both\"'");
        assert_eq!(python_repr("a\\b\nc\u{0}"), "'a\\\\b\\nc\\x00'");
        assert_eq!(python_repr("Été"), "'Été'");
        let e = search_query_error("Invalid \"sort\" parameter");
        assert_eq!(
            e.body["message"],
            "Search Query is invalid: 'Invalid \"sort\" parameter'"
        );
    }

    use super::*;

    #[test]
    fn every_kind_maps_to_ckans_type_and_status() {
        let e = validation().field("name", "Missing value").build();
        assert_eq!(e.status(), StatusCode::CONFLICT);
        assert_eq!(
            e.to_error_object(),
            json!({"name": ["Missing value"], "__type": "Validation Error"})
        );
        assert_eq!(not_found("").message(), Some("Not found"));
        assert_eq!(not_authorized("x").message(), Some("Access denied: x"));
        assert_eq!(not_authorized("x").status(), StatusCode::FORBIDDEN);
        assert_eq!(
            internal("secret detail").message(),
            Some("Internal Server Error")
        );
    }
}
