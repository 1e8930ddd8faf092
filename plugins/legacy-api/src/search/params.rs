//! Reading a search's parameters: the request's pairs, CKAN's `_get_search_params` (JSON in
//! `qjson`, in a parameter name or in the body), and the typed options (`int`, `asbool`,
//! strings) with CKAN's messages for values of the wrong kind.

use axum::http::Method;
use catalog_framework::prelude::*;
use catalog_framework::web::parse_json;

use crate::common::LegacyRequest;

/// The request's ordinary parameters as (key, value) pairs in order: the query string, then a
/// form-encoded body (what webob's `request.params` held).
pub(crate) fn request_pairs(req: &LegacyRequest) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = form_urlencoded::parse(req.raw_query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    if req.method != Method::GET
        && req
            .content_type
            .starts_with("application/x-www-form-urlencoded")
    {
        pairs.extend(
            form_urlencoded::parse(&req.body).map(|(k, v)| (k.into_owned(), v.into_owned())),
        );
    }
    pairs
}

/// Pairs as a parameter object: a repeated key becomes a list of its values.
pub(crate) fn pairs_to_params(pairs: &[(String, String)]) -> Params {
    let mut m = Params::new();
    for (k, v) in pairs {
        let v = Value::String(v.clone());
        match m.get_mut(k) {
            Some(Value::Array(a)) => a.push(v),
            Some(existing) => {
                let first = existing.take();
                *existing = Value::Array(vec![first, v]);
            }
            None => {
                m.insert(k.clone(), v);
            }
        }
    }
    m
}

/// CKAN's `_get_search_params`, in its order: `qjson` (a JSON object; `\\u` written for `\u`);
/// else a single parameter whose name is JSON (`{…}=1` or `{…}=`, a form-posted JSON text);
/// else a raw JSON body (which CKAN ignored; read here since clients send it); else the
/// ordinary parameters. The message is CKAN's "Could not read parameters" reason.
pub(super) fn search_params(req: &LegacyRequest) -> Result<Params, String> {
    const NOT_A_DICT: &str = "Request params must be in form of a json encoded dictionary.";
    let pairs = request_pairs(req);
    let as_object = |v: Value| match v {
        Value::Object(m) => Ok(m),
        _ => Err(NOT_A_DICT.to_string()),
    };
    if let Some((_, qjson)) = pairs.iter().rev().find(|(k, _)| k == "qjson") {
        let text = qjson.replace("\\\\u", "\\u");
        let v = parse_json(text.as_bytes()).map_err(|e| format!("Malformed qjson value: {e}"))?;
        return as_object(v);
    }
    if let [(key, value)] = pairs.as_slice() {
        if key.starts_with('{') && value.chars().count() < 2 {
            let v = parse_json(key.as_bytes())?;
            return as_object(v);
        }
    }
    let form = req
        .content_type
        .starts_with("application/x-www-form-urlencoded");
    if req.method != Method::GET && !form && !req.body.iter().all(u8::is_ascii_whitespace) {
        let v = parse_json(&req.body)?;
        let mut params = pairs_to_params(&pairs);
        params.extend(as_object(v)?);
        return Ok(params);
    }
    Ok(pairs_to_params(&pairs))
}

/// Python's `repr` of a parameter value, for CKAN's messages (`'abc'`, `1`).
pub(super) fn repr(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{s}'"),
        other => other.to_string(),
    }
}

/// paste's `asbool`: the usual words, numbers by their truth; anything else is an error.
fn as_bool(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Null => Some(false),
        Value::Number(n) => Some(n.as_f64().is_some_and(|f| f != 0.0)),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "y" | "t" | "1" => Some(true),
            "false" | "no" | "off" | "n" | "f" | "0" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// Python's `int(value)` for an option: integers, integral floats (truncated), digit strings.
fn as_int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite() && f.abs() < 1e15)
                .map(|f| f.trunc() as i64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        Value::Bool(b) => Some(*b as i64),
        _ => None,
    }
}

/// A non-negative integer option (`offset`, `limit`, `rows`, `start`), with CKAN's message when
/// it is not an integer. A repeated query parameter counts by its last value.
pub(super) fn int_option(p: &Params, key: &str) -> Result<Option<i64>, String> {
    let v = match p.get(key) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(a)) => match a.last() {
            Some(v) => v,
            None => return Ok(None),
        },
        Some(v) => v,
    };
    match as_int(v) {
        Some(n) if n >= 0 => Ok(Some(n)),
        Some(_) => Err(format!(
            "Value for search option '{key}' must be a non-negative integer but received {}",
            repr(v)
        )),
        None => Err(format!(
            "Value for search option '{key}' must be an integer but received {}",
            repr(v)
        )),
    }
}

/// `all_fields` as a boolean (CKAN validated it with `asbool`; a repeated one by its last value).
pub(super) fn all_fields_option(p: &Params) -> Result<bool, String> {
    let v = match p.get("all_fields") {
        None => return Ok(false),
        Some(Value::Array(a)) => a.last().cloned().unwrap_or(Value::Null),
        Some(v) => v.clone(),
    };
    as_bool(&v).ok_or_else(|| {
        format!(
            "Value for search option 'all_fields' must be True or False (1 or 0) but received {}",
            repr(&v)
        )
    })
}

/// The string values of a field parameter: a string, a number, or a list of them (a repeated
/// query parameter). Anything else is refused with the option's name.
pub(super) fn field_values(key: &str, v: &Value) -> Result<Vec<String>, String> {
    let one = |v: &Value| match v {
        Value::String(s) => Ok(Some(s.clone())),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::Null => Ok(None),
        other => Err(format!(
            "Value for search option '{key}' must be a string but received {}",
            repr(other)
        )),
    };
    match v {
        Value::Array(a) => a
            .iter()
            .filter_map(|v| one(v).transpose())
            .collect::<Result<Vec<_>, _>>(),
        v => Ok(one(v)?.into_iter().collect()),
    }
}

/// The text of a string parameter passed to Solr (the last of a repeated one).
pub(super) fn text_param(p: &Params, key: &str) -> Option<String> {
    match p.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Array(a) => a.iter().rev().find_map(|v| v.as_str().map(str::to_string)),
        _ => None,
    }
}
