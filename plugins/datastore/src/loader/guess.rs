//! The types the loader gives a file's columns, as XLoader's type guessing does: numeric when
//! every value is a number both stores read alike, else timestamp when every value is an ISO
//! date or date-time, else text.

/// The type a column gets from its values, as XLoader's type guessing gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Guess {
    Numeric,
    Timestamp,
    Text,
}

impl Guess {
    pub(crate) fn type_name(self) -> &'static str {
        match self {
            Guess::Numeric => "numeric",
            Guess::Timestamp => "timestamp",
            Guess::Text => "text",
        }
    }
}

/// The types a column's values allow so far.
#[derive(Debug, Clone, Copy)]
pub(super) struct ColumnState {
    numeric: bool,
    timestamp: bool,
    seen: bool,
}

impl Default for ColumnState {
    fn default() -> Self {
        ColumnState {
            numeric: true,
            timestamp: true,
            seen: false,
        }
    }
}

impl ColumnState {
    pub(super) fn see(&mut self, v: &str) {
        if v.is_empty() {
            return;
        }
        self.seen = true;
        if self.numeric && !is_number(v) {
            self.numeric = false;
        }
        if self.timestamp && !is_timestamp(v) {
            self.timestamp = false;
        }
    }

    pub(super) fn guess(&self) -> Guess {
        if !self.seen {
            Guess::Text
        } else if self.numeric {
            Guess::Numeric
        } else if self.timestamp {
            Guess::Timestamp
        } else {
            Guess::Text
        }
    }
}

/// A decimal number both stores read the same way: optional sign, digits with at most one
/// point, an optional exponent; no thousands separators, no `NaN`/`inf`, no leading zeros
/// that would be lost (`007` stays text).
fn is_number(v: &str) -> bool {
    let b = v.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_len = i - int_start;
    if int_len > 1 && b[int_start] == b'0' {
        return false;
    }
    let mut frac_len = 0;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let s = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac_len = i - s;
    }
    if int_len + frac_len == 0 || int_len > 30 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let s = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == s || i - s > 3 {
            return false;
        }
    }
    i == b.len()
}

/// An ISO 8601 date or date-time both stores read the same way: `YYYY-MM-DD`, optionally
/// followed by `T` or a space and `HH:MM[:SS[.fraction]]`, no zone.
fn is_timestamp(v: &str) -> bool {
    let fmt_date = chrono::NaiveDate::parse_from_str(v, "%Y-%m-%d").is_ok();
    if fmt_date {
        return v.len() == 10;
    }
    if v.len() < 16 || v.len() > 29 {
        return false;
    }
    let norm = v.replacen(' ', "T", 1);
    [
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M:%S%.f",
    ]
    .iter()
    .any(|f| chrono::NaiveDateTime::parse_from_str(&norm, f).is_ok())
        && norm.as_bytes()[4] == b'-'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_timestamps_are_recognised_strictly() {
        for n in [
            "0",
            "-1",
            "+2.5",
            "3.",
            ".5",
            "1e10",
            "12345678901234567890",
            "0.07",
        ] {
            assert!(is_number(n), "{n}");
        }
        for n in [
            "", "-", "007", "1,000", "NaN", "inf", "1e", "1.2.3", "0x10", "1e1000",
        ] {
            assert!(!is_number(n), "{n}");
        }
        for t in [
            "2024-02-29",
            "2024-01-02T03:04",
            "2024-01-02 03:04:05",
            "2024-01-02T03:04:05.123",
        ] {
            assert!(is_timestamp(t), "{t}");
        }
        for t in [
            "2023-02-29",
            "02/01/2024",
            "2024-1-2",
            "2024-01-02T25:00",
            "2024-01-02Z",
        ] {
            assert!(!is_timestamp(t), "{t}");
        }
    }
}
