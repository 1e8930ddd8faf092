//! Redactions that make response bodies stable across runs and backends: ids, hashes,
//! timestamps, tokens, the per-run suffix and the server address are replaced by
//! placeholders, and object keys are sorted.

use serde_json::{Map, Value};

/// Replaces volatile parts of response bodies with placeholders.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    literals: Vec<(String, String)>,
}

impl Redactor {
    pub fn new() -> Redactor {
        Redactor::default()
    }

    /// Also replace every occurrence of `from` (e.g. the run suffix) with `to`.
    pub fn literal(mut self, from: impl Into<String>, to: impl Into<String>) -> Redactor {
        let from = from.into();
        if !from.is_empty() {
            self.literals.push((from, to.into()));
        }
        self
    }

    /// The redacted copy of `v`, with object keys in sorted order.
    pub fn redact(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.redact_str(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.redact(x)).collect()),
            Value::Object(m) => {
                let mut entries: Vec<(String, Value)> = m
                    .iter()
                    .map(|(k, x)| (self.redact_str(k), self.redact(x)))
                    .collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                Value::Object(entries.into_iter().collect::<Map<_, _>>())
            }
            other => other.clone(),
        }
    }

    pub fn redact_str(&self, s: &str) -> String {
        if s.starts_with("ctk_") {
            return "[token]".to_string();
        }
        let s = replace_spans(s, 36, "[uuid]", is_uuid);
        let s = replace_datetimes(&s);
        let s = replace_hex32(&s);
        self.literals
            .iter()
            .fold(s, |acc, (from, to)| acc.replace(from.as_str(), to))
    }
}

/// A UUID in canonical hyphenated form (any case).
pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// An ISO-8601 timestamp: `YYYY-MM-DDTHH:MM:SS` with optional fraction and zone; a space
/// separator is accepted too (CKAN's `package_collaborator_list.modified`).
pub fn is_datetime(s: &str) -> bool {
    datetime_len(s.as_bytes()) == Some(s.len())
}

/// The length of the timestamp at the start of `b`, if there is one.
fn datetime_len(b: &[u8]) -> Option<usize> {
    const SHAPE: &[u8] = b"dddd-dd-dd?dd:dd:dd";
    if b.len() < SHAPE.len() {
        return None;
    }
    for (c, want) in b.iter().zip(SHAPE) {
        let ok = match want {
            b'd' => c.is_ascii_digit(),
            b'?' => *c == b'T' || *c == b' ',
            w => c == w,
        };
        if !ok {
            return None;
        }
    }
    let mut n = SHAPE.len();
    if b.get(n) == Some(&b'.') && b.get(n + 1).is_some_and(u8::is_ascii_digit) {
        n += 1;
        while b.get(n).is_some_and(u8::is_ascii_digit) {
            n += 1;
        }
    }
    match b.get(n) {
        Some(b'Z') => n += 1,
        Some(b'+' | b'-')
            if b.len() >= n + 6
                && b[n + 1..n + 3].iter().all(u8::is_ascii_digit)
                && b[n + 3] == b':'
                && b[n + 4..n + 6].iter().all(u8::is_ascii_digit) =>
        {
            n += 6
        }
        _ => {}
    }
    Some(n)
}

fn replace_datetimes(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        let at_boundary = i == 0 || !b[i - 1].is_ascii_digit();
        match datetime_len(&b[i..]).filter(|_| at_boundary) {
            Some(n) => {
                out.push_str(&s[copied..i]);
                out.push_str("[datetime]");
                i += n;
                copied = i;
            }
            None => i += 1,
        }
    }
    out.push_str(&s[copied..]);
    out
}

/// Replaces every `width`-byte window accepted by `is_match` (left to right, no overlap).
fn replace_spans(
    s: &str,
    width: usize,
    placeholder: &str,
    is_match: impl Fn(&str) -> bool,
) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut copied = 0;
    while i + width <= b.len() {
        if s.is_char_boundary(i) && s.is_char_boundary(i + width) && is_match(&s[i..i + width]) {
            out.push_str(&s[copied..i]);
            out.push_str(placeholder);
            i += width;
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&s[copied..]);
    out
}

/// Replaces runs of exactly 32 hex digits (token ids, MD5 email hashes) with `[hex32]`.
fn replace_hex32(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        if b[i].is_ascii_hexdigit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_hexdigit() {
                i += 1;
            }
            if i - start == 32 {
                out.push_str(&s[copied..start]);
                out.push_str("[hex32]");
                copied = i;
            }
        } else {
            i += 1;
        }
    }
    out.push_str(&s[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn redacts_ids_times_tokens_and_literals() {
        let r = Redactor::new()
            .literal("rq7x2k9a", "[run]")
            .literal("http://127.0.0.1:4321", "[base_url]");
        let v = json!({
            "z": "ds-rq7x2k9a",
            "help": "http://127.0.0.1:4321/api/3/action/help_show?name=x",
            "id": "7D1F3C8E-2a1b-4c5d-9e8f-0a1b2c3d4e5f",
            "msg": "Access denied: User  not authorized to read package 7d1f3c8e-2a1b-4c5d-9e8f-0a1b2c3d4e5f",
            "created": "2024-01-01T10:11:12.123456",
            "modified": "2024-01-02 03:04:05",
            "token": "ctk_0123456789abcdef0123456789abcdef_00",
            "email_hash": "d41d8cd98f00b204e9800998ecf8427e",
            "short_hex": "abc123",
            "n": 5
        });
        assert_eq!(
            r.redact(&v),
            json!({
                "created": "[datetime]",
                "email_hash": "[hex32]",
                "help": "[base_url]/api/3/action/help_show?name=x",
                "id": "[uuid]",
                "modified": "[datetime]",
                "msg": "Access denied: User  not authorized to read package [uuid]",
                "n": 5,
                "short_hex": "abc123",
                "token": "[token]",
                "z": "ds-[run]"
            })
        );
        let redacted = r.redact(&v);
        let keys: Vec<&String> = redacted.as_object().unwrap().keys().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
    }

    #[test]
    fn datetime_shapes() {
        assert!(is_datetime("2024-01-01T00:00:00"));
        assert!(is_datetime("2024-01-01T00:00:00.5+02:00"));
        assert!(is_datetime("2024-01-01T00:00:00Z"));
        assert!(!is_datetime("2024-01-01"));
        assert!(!is_datetime("2024-01-01T00:00:00 trailing"));
    }
}
