//! ckanext-dcat's validators (ckanext/dcat/validators.py): `dcat_date` and
//! `scheming_multiple_number`, with its messages.

use std::sync::LazyLock;

use catalog_framework::prelude::*;
use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use regex::Regex;

use super::{validator, Flow};
use crate::register_scheming_validator;

const TZ: &str = r"(Z|(\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00))?";

/// xsd:gYear, xsd:gYearMonth and xsd:date, timezone optional (the calendar is not checked:
/// `2020-02-30` passes, as in ckanext-dcat).
static XSD: LazyLock<Regex> = LazyLock::new(|| {
    let year = r"-?([1-9][0-9]{3,}|0[0-9]{3})";
    Regex::new(&format!(
        r"^(?:{year}|{year}-(0[1-9]|1[0-2])|{year}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])){TZ}$"
    ))
    .expect("a valid regex")
});

pub const DATE_MESSAGE: &str =
    "Date format incorrect. Supported formats are YYYY, YYYY-MM, YYYY-MM-DD and YYYY-MM-DDTHH:MM:SS";

/// Whether dateutil's parser reads `s` as a date: ISO dates and times (`T` or a space, seconds
/// and fractions optional, `Z` or an offset), `MM/DD/YYYY`, `DD.MM.YYYY`, and English month
/// names (`May 1, 2024`, `1 May 2024`) — with real calendar values (`2024-13-45` and
/// `25:00:00` fail).
pub fn dateutil_parses(s: &str) -> bool {
    let s = s.trim();
    if s.is_empty() {
        return false;
    }
    let bare = s.trim_end_matches('Z');
    let bare = match bare.rfind(['+', '-']) {
        Some(i) if i > 10 && bare[i..].len() == 6 && bare.as_bytes()[i + 3] == b':' => &bare[..i],
        _ => bare,
    };
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
        "%Y%m%dT%H%M%S",
        "%m/%d/%Y %H:%M:%S",
        "%m/%d/%Y %H:%M",
    ] {
        if NaiveDateTime::parse_from_str(bare, f).is_ok() {
            return true;
        }
    }
    for f in [
        "%Y-%m-%d",
        "%Y%m%d",
        "%m/%d/%Y",
        "%m/%d/%y",
        "%d.%m.%Y",
        "%Y/%m/%d",
        "%B %d, %Y",
        "%b %d, %Y",
        "%d %B %Y",
        "%d %b %Y",
        "%B %d %Y",
        "%b %d %Y",
    ] {
        if NaiveDate::parse_from_str(bare, f).is_ok() {
            return true;
        }
    }
    // A time alone is today at that time for dateutil.
    ["%H:%M:%S", "%H:%M"]
        .iter()
        .any(|f| NaiveTime::parse_from_str(bare, f).is_ok())
}

register_scheming_validator!("dcat_date", |_| Ok(validator(|slot| {
    if !slot.is_truthy() {
        slot.value = Some(Value::Null);
        return Flow::Next;
    }
    match slot.get() {
        Value::String(s) => {
            if !XSD.is_match(s) && !dateutil_parses(s) {
                slot.errors.push(DATE_MESSAGE.into());
            }
        }
        _ => slot
            .errors
            .push("Dates must be provided as strings or datetime objects".into()),
    }
    Flow::Next
})));

register_scheming_validator!("scheming_multiple_number", |b| {
    let required = b.required();
    Ok(validator(move |slot| {
        if !slot.errors.is_empty() {
            return Flow::Next;
        }
        if slot.is_truthy() {
            let v = slot.get().clone();
            let items = match v {
                Value::Array(items) => items,
                Value::String(s) if s.starts_with('[') => match serde_json::from_str(&s) {
                    Ok(Value::Array(items)) => items,
                    _ => {
                        slot.errors.push("Could not parse value".into());
                        return Flow::Stop;
                    }
                },
                other => match as_float(&other) {
                    Some(f) => vec![json!(f)],
                    None => {
                        slot.errors.push("expecting list of numbers".into());
                        return Flow::Stop;
                    }
                },
            };
            let mut out = Vec::new();
            for item in &items {
                if !catalog_framework::validators::python_truthy(Some(item)) {
                    continue;
                }
                match as_float(item) {
                    Some(f) => out.push(json!(f)),
                    None => {
                        let r = super::py_repr(item);
                        slot.errors
                            .push(format!("invalid type for repeating number: {r}"));
                    }
                }
            }
            if !slot.errors.is_empty() {
                return Flow::Stop;
            }
            slot.value = Some(Value::String(Value::Array(out).to_string()));
        }
        let empty = match &slot.value {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s == "[]",
            _ => false,
        };
        if empty && required {
            slot.errors.push("Missing value".into());
            return Flow::Stop;
        }
        Flow::Next
    }))
});

/// Python's `float()` of a value.
fn as_float(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dcat_dates_as_ckanext_dcat_reads_them() {
        for ok in [
            "2024",
            "2024-05",
            "2024-05-01",
            "2020-02-30",
            "2024-05-01Z",
            "-0044",
        ] {
            assert!(XSD.is_match(ok), "{ok}");
        }
        for ok in [
            "01/02/2024",
            "2024-05-01T10:20:30Z",
            "2024-05-01T10:20:30",
            "May 1, 2024",
        ] {
            assert!(XSD.is_match(ok) || dateutil_parses(ok), "{ok}");
        }
        for bad in ["2024-13-45", "garbage", "2024-05-05T25:00:00"] {
            assert!(!XSD.is_match(bad) && !dateutil_parses(bad), "{bad}");
        }
    }
}
