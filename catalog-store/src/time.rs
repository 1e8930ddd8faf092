//! Timestamps as CKAN writes them: naive UTC ISO 8601, microseconds omitted when zero.

use chrono::{NaiveDateTime, Utc};

pub fn format_iso(t: NaiveDateTime) -> String {
    if t.and_utc().timestamp_subsec_micros() == 0 {
        t.format("%Y-%m-%dT%H:%M:%S").to_string()
    } else {
        t.format("%Y-%m-%dT%H:%M:%S%.6f").to_string()
    }
}

/// Now, in CKAN's format.
pub fn now_iso() -> String {
    format_iso(Utc::now().naive_utc())
}

/// Parses the ISO forms CKAN accepts (`isodate`): date, date-time, with or without fraction / `Z`.
pub fn parse_iso(s: &str) -> Option<NaiveDateTime> {
    let s = s.trim().trim_end_matches('Z');
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, f) {
            return Some(t);
        }
    }
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_microseconds_are_omitted() {
        let t = parse_iso("2024-01-01T00:00:00").unwrap();
        assert_eq!(format_iso(t), "2024-01-01T00:00:00");
        let t = parse_iso("2024-01-01T00:00:00.5Z").unwrap();
        assert_eq!(format_iso(t), "2024-01-01T00:00:00.500000");
        assert!(parse_iso("yesterday").is_none());
    }
}
