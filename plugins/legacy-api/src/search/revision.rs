//! `/search/revision`: the revisions after a given one or a given time, over `revision_list`,
//! with CKAN's reading of a time (`date_str_to_datetime`).

use axum::response::Response;
use catalog_framework::prelude::*;

use crate::common::{bad_request, from_ckan, not_found_error, LegacyRequest};

use super::params::{pairs_to_params, request_pairs};

/// CKAN's `date_str_to_datetime`: the string split on runs of non-digits (at most six parts:
/// year, month, day, hour, minute, then `SS` or `SS.ffffff`), every part an integer in range.
/// The result is the ISO form; the error is Python's `ValueError` text.
fn ckan_datetime(s: &str) -> Result<String, String> {
    let mut parts: Vec<&str> = Vec::new();
    let mut rest = s;
    while parts.len() < 5 {
        match rest.find(|c: char| !c.is_ascii_digit()) {
            Some(i) => {
                parts.push(&rest[..i]);
                let after = rest[i..].trim_start_matches(|c: char| !c.is_ascii_digit());
                rest = after;
            }
            None => break,
        }
    }
    parts.push(rest);
    let int = |t: &str| -> Result<i64, String> {
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("invalid literal for int() with base 10: '{t}'"));
        }
        Ok(t.parse::<i64>().unwrap_or(i64::MAX))
    };
    let mut nums: Vec<i64> = Vec::new();
    let mut micro = 0i64;
    for (i, part) in parts.iter().enumerate() {
        if i == 5 {
            let (sec, frac) = match part.split_once('.') {
                Some((s, f)) => (s, Some(f)),
                None => (*part, None),
            };
            let ok = sec.len() == 2
                && sec.bytes().all(|b| b.is_ascii_digit())
                && frac.is_none_or(|f| f.len() == 6 && f.bytes().all(|b| b.is_ascii_digit()));
            if !ok {
                return Err(format!("Unable to parse {part} as seconds.microseconds"));
            }
            nums.push(int(sec)?);
            micro = frac.map(int).transpose()?.unwrap_or(0);
        } else {
            nums.push(int(part)?);
        }
    }
    if nums.len() < 3 {
        return Err("a time needs at least a year, a month and a day".to_string());
    }
    let (y, mo, d) = (nums[0], nums[1], nums[2]);
    let (h, mi, sec) = (
        nums.get(3).copied().unwrap_or(0),
        nums.get(4).copied().unwrap_or(0),
        nums.get(5).copied().unwrap_or(0),
    );
    if !(1..=9999).contains(&y) {
        return Err(format!("year {y} is out of range"));
    }
    if !(1..=12).contains(&mo) {
        return Err("month must be in 1..12".to_string());
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match mo {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=days).contains(&d) {
        return Err("day is out of range for month".to_string());
    }
    if !(0..=23).contains(&h) {
        return Err("hour must be in 0..23".to_string());
    }
    if !(0..=59).contains(&mi) {
        return Err("minute must be in 0..59".to_string());
    }
    if !(0..=59).contains(&sec) {
        return Err("second must be in 0..59".to_string());
    }
    Ok(format!(
        "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{sec:02}.{micro:06}"
    ))
}

/// A revision search: `since_id` or `since_time` (plain parameters, as CKAN read them) → the
/// ids of the later revisions (activities the caller may see), oldest first, at most 50.
pub(super) async fn revision_search(req: &LegacyRequest) -> Response {
    let params = pairs_to_params(&request_pairs(req));
    let last = |k: &str| match params.get(k) {
        Some(Value::Array(a)) => a.last().and_then(Value::as_str).map(str::to_string),
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    let mut action = Params::new();
    action.insert("sort".into(), json!("time_asc"));
    let since_id = last("since_id");
    if let Some(id) = &since_id {
        if id.is_empty() {
            return bad_request("No revision specified");
        }
        action.insert("since_id".into(), json!(id));
    } else if let Some(t) = last("since_time") {
        match ckan_datetime(&t) {
            Ok(iso) => action.insert("since_time".into(), json!(iso)),
            Err(e) => return bad_request(&format!("ValueError: {e}")),
        };
    } else {
        return bad_request("Missing search term ('since_id=UUID' or  'since_time=TIMESTAMP')");
    }
    match req.run("revision_list", action).await {
        Ok(ids) => req.ok(&ids),
        Err(e) if since_id.is_some() && e.kind == ErrorKind::NotFound => not_found_error(&format!(
            "There is no revision with id: {}",
            since_id.unwrap_or_default()
        )),
        Err(e) => from_ckan(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ckan_datetimes() {
        assert_eq!(
            ckan_datetime("2010-01-02").unwrap(),
            "2010-01-02T00:00:00.000000"
        );
        assert_eq!(
            ckan_datetime("2010-01-02 03:04:05.123456").unwrap(),
            "2010-01-02T03:04:05.123456"
        );
        assert_eq!(
            ckan_datetime("2010-01-02T03:04:05Z").unwrap_err(),
            "Unable to parse 05Z as seconds.microseconds"
        );
        assert_eq!(
            ckan_datetime("abc").unwrap_err(),
            "invalid literal for int() with base 10: ''"
        );
        assert_eq!(
            ckan_datetime("2010-13-01").unwrap_err(),
            "month must be in 1..12"
        );
        assert_eq!(
            ckan_datetime("2011-02-29").unwrap_err(),
            "day is out of range for month"
        );
        assert!(ckan_datetime("2010").is_err());
        assert!(ckan_datetime(&"9".repeat(400)).is_err());
        assert!(ckan_datetime("").is_err());
    }
}
