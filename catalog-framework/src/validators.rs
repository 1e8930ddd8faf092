//! CKAN's validators of the core model (`ckan.logic.validators`): names, states, types, text
//! fields, tags, e-mail addresses, ids, resources, and the bounds of a dataset's lists. The
//! core actions validate users, groups, tags and resources with them; a dataset schema (the
//! `DatasetSchema` extension point, the default one in `catalog-plugin-schema`) builds a
//! dataset's validation from them.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{json, Map, Value};

use crate::config::LimitsConfig;
use crate::error::ValidationBuilder;
use crate::params::too_many_items;
use crate::registry::Params;
use crate::store::time::{format_iso, parse_iso};

static NAME_RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[a-z0-9_-]*$").unwrap());
static TAG_RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[\w \-.]*$").unwrap());
static EMAIL_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$").unwrap()
});

/// Top-level string fields of a dataset.
pub const STRING_FIELDS: &[&str] = &[
    "title",
    "author",
    "author_email",
    "maintainer",
    "maintainer_email",
    "license_id",
    "notes",
    "url",
    "version",
    "type",
];

pub use crate::store::model::SCHEMA_FIELDS;

/// Resource columns; any other resource key is a resource extra.
pub const RESOURCE_COLUMNS: &[&str] = &[
    "id",
    "package_id",
    "url",
    "description",
    "format",
    "hash",
    "name",
    "resource_type",
    "url_type",
    "mimetype",
    "mimetype_inner",
    "cache_url",
    "size",
    "created",
    "last_modified",
    "cache_last_updated",
    "metadata_modified",
    "position",
    "state",
];

/// An optional text parameter (CKAN's `unicode_safe`: numbers become their text), at most
/// `max` characters; `None` when absent or null.
pub fn optional_text(
    p: &Map<String, Value>,
    k: &str,
    errs: &mut ValidationBuilder,
    max: usize,
) -> Option<String> {
    match p.get(k) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => {
            if s.chars().count() > max {
                errs.push(k, format!("Must be a maximum of {max} characters long"));
            }
            Some(s.clone())
        }
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(_) => {
            errs.push(k, "Must be a string");
            None
        }
    }
}

/// A required `name` parameter: `Missing value` when absent, null or empty, else CKAN's name
/// rules; returns the name given (empty when it is not a string).
pub fn required_name(p: &Map<String, Value>, errs: &mut ValidationBuilder) -> String {
    match p.get("name") {
        None | Some(Value::Null) => errs.push("name", "Missing value"),
        Some(Value::String(s)) if s.is_empty() => errs.push("name", "Missing value"),
        Some(v) => check_name(v, errs, "name"),
    }
    p.get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// CKAN's name rules for datasets, groups, organizations and users.
pub fn check_name(v: &Value, errs: &mut ValidationBuilder, field: &str) {
    let Some(name) = v.as_str() else {
        errs.push(field, "Names must be strings");
        return;
    };
    if matches!(name, "new" | "edit" | "search") {
        errs.push(field, "That name cannot be used");
    }
    if name.chars().count() < 2 {
        errs.push(field, "Must be at least 2 characters long");
    }
    if name.chars().count() > 100 {
        errs.push(field, "Name must be a maximum of 100 characters long");
    }
    if !NAME_RE.is_match(name) {
        errs.push(
            field,
            "Must be purely lowercase alphanumeric (ascii) characters and these symbols: -_",
        );
    }
}

/// The states a dataset may be in.
pub const DATASET_STATES: &[&str] = &["active", "draft", "deleted"];
/// The states a user may be in.
pub const USER_STATES: &[&str] = &["active", "pending", "deleted"];

static TYPE_RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[A-Za-z0-9_.-]{1,100}$").unwrap());

/// A `state` given by a caller allowed to set it: one of `allowed`. CKAN stores any string
/// here; we refuse what no state machine knows (see docs/API-COMPAT.md).
pub fn check_state(v: Option<&Value>, allowed: &[&str], errs: &mut ValidationBuilder) {
    match v {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if allowed.contains(&s.as_str()) => {}
        Some(_) => errs.push("state", format!("Must be one of: {}", allowed.join(", "))),
    }
}

/// A dataset, group or organization `type`: 1 to 100 ASCII letters, digits and `_-.`
/// (CKAN stores any string; see docs/API-COMPAT.md).
pub fn check_type(v: Option<&Value>, errs: &mut ValidationBuilder) {
    match v {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s.is_empty() || TYPE_RE.is_match(s) => {}
        Some(_) => errs.push(
            "type",
            "Must be 1 to 100 ASCII letters, digits and these symbols: -_.",
        ),
    }
}

/// The bounds of `catalog.limits.*` on a dataset's lists: tags (as a list or in
/// `tag_string`), resources, extras and groups.
pub fn check_dataset_limits(data: &Params, limits: &LimitsConfig, errs: &mut ValidationBuilder) {
    let len = |k: &str| data.get(k).and_then(Value::as_array).map_or(0, Vec::len);
    let tag_string = data
        .get("tag_string")
        .and_then(Value::as_str)
        .map_or(0, |t| t.split(',').filter(|x| !x.trim().is_empty()).count());
    for (field, n, max) in [
        (
            "tags",
            len("tags") + tag_string,
            limits.max_tags_per_dataset,
        ),
        (
            "resources",
            len("resources"),
            limits.max_resources_per_dataset,
        ),
        ("extras", len("extras"), limits.max_extras_per_dataset),
        ("groups", len("groups"), limits.max_groups_per_dataset),
    ] {
        if n > max {
            errs.push(field, too_many_items(max));
        }
    }
}

pub fn is_valid_email(s: &str) -> bool {
    let s = s.trim();
    if s.starts_with('.') || s.ends_with('.') || s.contains("..") {
        return false;
    }
    EMAIL_RE.is_match(s)
}

/// Tag name rules; returns the messages CKAN gives, flattened.
pub fn tag_errors(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let n = name.chars().count();
    if n < 2 {
        out.push(format!("Tag \"{name}\" length is less than minimum 2"));
    }
    if n > 100 {
        out.push(format!("Tag \"{name}\" length is more than maximum 100"));
    }
    if !TAG_RE.is_match(name) {
        out.push(format!(
            "Tag \"{name}\" can only contain alphanumeric characters, spaces (\" \"), hyphens (\"-\"), underscores (\"_\") or dots (\".\")"
        ));
    }
    out
}

/// A value as CKAN's `unicode_safe` would store it, or None for objects/lists (we refuse those).
pub fn as_text(v: &Value) -> Option<Value> {
    match v {
        Value::Null => Some(Value::Null),
        Value::String(s) => Some(Value::String(s.clone())),
        Value::Number(n) => Some(Value::String(n.to_string())),
        Value::Bool(b) => Some(Value::String(if *b { "True" } else { "False" }.into())),
        _ => None,
    }
}

/// Adds CKAN's length message when a text is longer than `max` characters.
pub fn check_max(errs: &mut ValidationBuilder, field: &str, v: &Value, max: usize) {
    if let Some(s) = v.as_str() {
        if s.chars().count() > max {
            errs.push(field, format!("Must be a maximum of {max} characters long"));
        }
    }
}

/// A resource dict checked and normalised as the default schema's resources are: the result,
/// or the error dict of its fields.
pub fn validate_resource(r: &Value, max: usize) -> Result<Params, Map<String, Value>> {
    let Some(obj) = r.as_object() else {
        let mut e = Map::new();
        e.insert("message".into(), json!(["Resource must be an object"]));
        return Err(e);
    };
    let mut errs = ValidationBuilder::default();
    let mut out = Params::new();
    for (k, v) in obj {
        match k.as_str() {
            "state" | "position" | "package_id" | "metadata_modified" | "extras" => {}
            "size" => match v {
                Value::Null => {
                    out.insert(k.clone(), Value::Null);
                }
                Value::String(s) if s.is_empty() => {
                    out.insert(k.clone(), Value::Null);
                }
                _ => match v
                    .as_i64()
                    .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                {
                    Some(n) => {
                        out.insert(k.clone(), json!(n));
                    }
                    None => errs.push(k, "Invalid integer"),
                },
            },
            "created" | "last_modified" | "cache_last_updated" => match v {
                Value::Null => {
                    out.insert(k.clone(), Value::Null);
                }
                Value::String(s) if s.is_empty() => {
                    out.insert(k.clone(), Value::Null);
                }
                Value::String(s) => match parse_iso(s) {
                    Some(t) => {
                        out.insert(k.clone(), json!(format_iso(t)));
                    }
                    None => errs.push(k, "Date format incorrect"),
                },
                _ => errs.push(k, "Date format incorrect"),
            },
            _ if RESOURCE_COLUMNS.contains(&k.as_str()) => match as_text(v) {
                Some(t) => {
                    check_max(&mut errs, k, &t, max);
                    if matches!(k.as_str(), "mimetype" | "mimetype_inner") {
                        if let Some(m) = t.as_str().filter(|m| !m.is_empty()) {
                            if !is_mimetype_value(m) {
                                errs.push(k, MIMETYPE_MESSAGE);
                            }
                        }
                    }
                    let t = if k == "url" {
                        t.as_str().map(|s| json!(s.trim())).unwrap_or(json!(""))
                    } else {
                        t
                    };
                    out.insert(k.clone(), t);
                }
                None => errs.push(k, "Must be a string"),
            },
            // Any other key is a resource extra and keeps its JSON type.
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    if errs.is_empty() {
        Ok(out)
    } else {
        Err(errs.build().body)
    }
}

/// The message for a `mimetype` that is neither a media type nor an IRI (CKAN stores any text;
/// see docs/API-COMPAT.md).
pub const MIMETYPE_MESSAGE: &str = "Must be a media type such as text/csv";

/// The IANA register's IRIs for media types, as DCAT-AP's `dcat:mediaType` names them.
const IANA_MEDIA_TYPES: [&str; 2] = [
    "http://www.iana.org/assignments/media-types/",
    "https://www.iana.org/assignments/media-types/",
];

/// Whether `s` may be stored as a resource's `mimetype`: a media type ([`is_mimetype`]) or, as
/// DCAT-AP gives `dcat:mediaType`, an `http(s)` IRI such as
/// `https://www.iana.org/assignments/media-types/text/csv` — printable ASCII without spaces, at
/// most 1,000 bytes. Control characters, CR and LF are refused either way.
pub fn is_mimetype_value(s: &str) -> bool {
    let iri = (s.starts_with("http://") || s.starts_with("https://"))
        && s.len() <= 1000
        && s.bytes().all(|b| b.is_ascii_graphic());
    iri || is_mimetype(s)
}

/// The media type a stored `mimetype` names, fit for a `Content-Type` header: the value itself
/// when it is a media type, the register's name for an IANA IRI
/// (`…/media-types/text/csv` → `text/csv`), otherwise none.
pub fn media_type_of(s: &str) -> Option<&str> {
    let name = iana_media_type_name(s);
    is_mimetype(name).then_some(name)
}

/// The media type an IANA register IRI (http or https) names; any other text as it is.
pub fn iana_media_type_name(iri: &str) -> &str {
    IANA_MEDIA_TYPES
        .iter()
        .find_map(|p| iri.strip_prefix(p))
        .unwrap_or(iri)
}

/// Python's truth of a JSON value (`not value` in CKAN's validators): null, `false`, `0`,
/// `""`, `[]` and `{}` are false; an absent value too.
pub fn python_truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

/// Whether `s` is a media type as an HTTP header carries it: `type/subtype` of RFC 9110 token
/// characters, optionally followed by `;` parameters of printable ASCII (no control character,
/// CR or LF anywhere), at most 255 bytes.
pub fn is_mimetype(s: &str) -> bool {
    fn token(t: &str) -> bool {
        !t.is_empty()
            && t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    }
    if s.len() > 255
        || !s
            .bytes()
            .all(|b| b == b' ' || b == b'\t' || b.is_ascii_graphic())
    {
        return false;
    }
    let (essence, params) = s.split_once(';').unwrap_or((s, ""));
    let Some((ty, sub)) = essence.split_once('/') else {
        return false;
    };
    token(ty)
        && token(sub)
        && params.split(';').all(|p| {
            let p = p.trim();
            p.is_empty() || p.split_once('=').is_some_and(|(k, _)| token(k.trim()))
        })
}

/// An extra's `id` as CKAN's extras schema checks it (`ignore_missing, empty_if_not_sysadmin,
/// uuid_validator`): only a sysadmin may give one, and it must be a UUID. The message, if any.
pub fn extra_id_error(extra: &Value, is_sysadmin: bool) -> Option<&'static str> {
    let id = extra.get("id")?;
    if id.is_null() {
        return None;
    }
    if !is_sysadmin {
        // CKAN's `empty`: a value Python holds false (`""`, `0`, `[]` …) passes.
        return python_truthy(Some(id)).then_some("The input field id was not expected.");
    }
    match id.as_str() {
        Some(s) if uuid_parse(s).is_some() => None,
        _ => Some("Invalid id provided"),
    }
}

/// Lenient UUID parsing as CKAN's `uuid_validator` (hyphens optional, braces, `urn:uuid:`).
pub fn uuid_parse(s: &str) -> Option<String> {
    let t = s
        .trim()
        .trim_start_matches("urn:uuid:")
        .trim_start_matches('{')
        .trim_end_matches('}')
        .replace('-', "");
    if t.len() == 32 && t.chars().all(|c| c.is_ascii_hexdigit()) {
        let t = t.to_ascii_lowercase();
        Some(format!(
            "{}-{}-{}-{}-{}",
            &t[0..8],
            &t[8..12],
            &t[12..16],
            &t[16..20],
            &t[20..32]
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_are_tokens_without_control_characters() {
        for ok in [
            "text/csv",
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            "text/plain; charset=utf-8",
            "application/ld+json",
        ] {
            assert!(is_mimetype(ok), "{ok}");
        }
        for bad in [
            "text/html\r\nSet-Cookie: a=b",
            "text/csv\u{b}",
            "text/csv\u{7f}",
            "csv",
            "/csv",
            "text/",
            "text /csv",
            "text/c\u{e9}",
            "text/csv; =x",
        ] {
            assert!(!is_mimetype(bad), "{bad:?}");
        }
    }

    #[test]
    fn a_resource_with_a_bad_mimetype_is_refused() {
        let e =
            validate_resource(&json!({"url": "x", "mimetype": "text/csv\r\n"}), 1000).unwrap_err();
        assert_eq!(e["mimetype"], json!([MIMETYPE_MESSAGE]));
        assert!(validate_resource(&json!({"url": "x", "mimetype": ""}), 1000).is_ok());
        assert!(validate_resource(&json!({"url": "x", "mimetype_inner": "a b"}), 1000).is_err());
        // DCAT-AP's media type IRIs are kept; an IRI with a space or a line break is not.
        let iana = "https://www.iana.org/assignments/media-types/text/csv";
        assert!(validate_resource(&json!({"url": "x", "mimetype": iana}), 1000).is_ok());
        for bad in [
            "https://x.org/a b",
            "https://x.org/a\r\nX: y",
            "ftp://x.org/a",
        ] {
            assert!(
                validate_resource(&json!({"url": "x", "mimetype": bad}), 1000).is_err(),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn the_served_media_type_of_an_iana_iri_is_its_name() {
        let iana = "http://www.iana.org/assignments/media-types/application/json";
        assert_eq!(media_type_of(iana), Some("application/json"));
        assert_eq!(media_type_of("text/csv"), Some("text/csv"));
        assert_eq!(media_type_of("https://example.org/types/csv"), None);
        assert_eq!(
            media_type_of("https://www.iana.org/assignments/media-types/"),
            None
        );
    }
}
