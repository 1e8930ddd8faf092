//! The Search API (spec §10.3): `/api[/1|/2|/3]/search/<dataset|package|resource|revision>`
//! and `/api[/1|/2]/tag_counts`, as CKAN 2.8's `ApiController.search` answered them, over the
//! Action API's `package_search`, `resource_search` and `revision_list` (so authorization and
//! visibility are theirs; private datasets are never in these results).

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use catalog_framework::prelude::*;
use catalog_framework::web::{parse_json, path_after};

use crate::common::{bad_request, from_ckan, not_found_error, LegacyRequest, Version};

pub(crate) fn routes() -> Router<AppState> {
    let mut r = Router::new();
    for prefix in ["/api", "/api/1", "/api/2", "/api/3"] {
        r = r.route(
            &format!("{prefix}/search/{{register}}"),
            get(search).post(search),
        );
    }
    for prefix in ["/api", "/api/1", "/api/2"] {
        r = r.route(&format!("{prefix}/tag_counts"), get(tag_counts));
    }
    r
}

/// CKAN's cap on the rows of one dataset search (`PackageSearchQuery.run`).
const ROWS_MAX: i64 = 1000;
/// The cap on one resource search page (CKAN had none; ours bounds the answer).
const RESOURCE_LIMIT_MAX: i64 = 1000;

/// The parameters Solr took in CKAN 2.8 (`VALID_SOLR_PARAMETERS`); v1/v2 translate every other
/// key into the query.
const SOLR_PARAMS: &[&str] = &[
    "q",
    "fl",
    "fq",
    "rows",
    "sort",
    "start",
    "wt",
    "qf",
    "bf",
    "boost",
    "facet",
    "facet.mincount",
    "facet.limit",
    "facet.field",
    "extras",
    "fq_list",
    "tie",
    "defType",
    "mm",
];

/// `search.DEFAULT_OPTIONS`' keys: options of a resource search, never field filters.
const RESOURCE_OPTIONS: &[&str] = &[
    "limit",
    "offset",
    "order_by",
    "return_objects",
    "ref_entity_with_attr",
    "all_fields",
    "search_tags",
    "callback",
];

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
fn search_params(req: &LegacyRequest) -> Result<Params, String> {
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

/// A search failure as CKAN's controller answered it: 400 `Bad search option: …`.
fn bad_option(msg: &str) -> Response {
    bad_request(&format!("Bad search option: {msg}"))
}

/// An action's failure inside a search: what CKAN raised as a `SearchError` (validation of the
/// query included, as `resource_search` does with `search_query` in its context) is 400
/// `Bad search option`; authorization and the rest keep their legacy forms.
fn search_failure(e: &CkanError) -> Response {
    match e.kind {
        ErrorKind::Validation | ErrorKind::Conflict => {
            let msg = e
                .body
                .iter()
                .filter(|(k, _)| *k != "__type")
                .map(|(k, v)| {
                    let text = match v {
                        Value::Array(a) => a
                            .iter()
                            .map(|m| m.as_str().map(str::to_string).unwrap_or(m.to_string()))
                            .collect::<Vec<_>>()
                            .join(", "),
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    if k == "query" || k == "message" {
                        text
                    } else {
                        format!("{k}: {text}")
                    }
                })
                .collect::<Vec<_>>()
                .join("; ");
            bad_option(&msg)
        }
        _ => from_ckan(e),
    }
}

/// Python's `repr` of a parameter value, for CKAN's messages (`'abc'`, `1`).
fn repr(v: &Value) -> String {
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
fn int_option(p: &Params, key: &str) -> Result<Option<i64>, String> {
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
fn all_fields_option(p: &Params) -> Result<bool, String> {
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

/// CKAN's `escape_legacy_argument`: a backslash before each of `\+-&|!(){}[]^"~*?:`.
fn escape_legacy(v: &str) -> String {
    let mut out = String::with_capacity(v.len() + 8);
    for c in v.chars() {
        if "\\+-&|!(){}[]^\"~*?:".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The string values of a field parameter: a string, a number, or a list of them (a repeated
/// query parameter). Anything else is refused with the option's name.
fn field_values(key: &str, v: &Value) -> Result<Vec<String>, String> {
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

/// `convert_legacy_parameters_to_solr` (v1/v2): the options checked (`filter_by_openness` and
/// `filter_by_downloadable` refused, `all_fields` boolean, `offset`/`limit` integers), then
/// `all_fields` → `fl=*`, `offset` → `start`, `limit` → `rows`, `order_by=x` → `sort=x asc`,
/// `tags` → `tags:"…"` clauses, and any other non-Solr key `k=v` → a `k:v` clause of `q`
/// (escaped, quoted when it has a space; empty values ignored). `+` in `q` is a space.
fn legacy_to_solr(legacy: &Params) -> Result<Params, String> {
    for key in ["filter_by_downloadable", "filter_by_openness"] {
        if legacy.contains_key(key) {
            return Err(format!("Search option '{key}' is not supported"));
        }
    }
    let all_fields = all_fields_option(legacy)?;
    int_option(legacy, "offset")?;
    int_option(legacy, "limit")?;

    let mut solr = Params::new();
    let mut q_list: Vec<String> = Vec::new();
    match legacy.get("q") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => {
            if !s.is_empty() {
                q_list.push(s.replace('+', " "));
            }
        }
        Some(Value::Number(n)) => q_list.push(n.to_string()),
        Some(Value::Array(a)) => {
            for v in a {
                if let Some(s) = v.as_str().filter(|s| !s.is_empty()) {
                    q_list.push(s.replace('+', " "));
                }
            }
        }
        Some(other) => {
            return Err(format!(
                "Value for search option 'q' must be a string but received {}",
                repr(other)
            ))
        }
    }
    // Solr's own parameters are copied first; the translated ones then override them.
    for (key, value) in legacy {
        if SOLR_PARAMS.contains(&key.as_str()) && key != "q" {
            solr.insert(key.clone(), value.clone());
        }
    }
    let mut keys: Vec<&String> = legacy
        .keys()
        .filter(|k| !SOLR_PARAMS.contains(&k.as_str()))
        .collect();
    keys.sort();
    for key in keys {
        let value = &legacy[key.as_str()];
        let last = || match value {
            Value::Array(a) => a.last().cloned().unwrap_or(Value::Null),
            v => v.clone(),
        };
        match key.as_str() {
            "all_fields" => {
                if all_fields {
                    solr.insert("fl".into(), json!("*"));
                }
            }
            "offset" => {
                solr.insert("start".into(), last());
            }
            "limit" => {
                solr.insert("rows".into(), last());
            }
            "order_by" => {
                if let Some(field) = field_values(key, value)?.last() {
                    solr.insert(
                        "sort".into(),
                        json!(format!("{} asc", field.replace('+', " "))),
                    );
                }
            }
            "tags" => {
                for tag in field_values(key, value)? {
                    q_list.push(format!("tags:\"{}\"", escape_legacy(&tag)));
                }
            }
            _ => {
                for v in field_values(key, value)? {
                    let v = v.replace('+', " ");
                    if v.trim().is_empty() {
                        continue;
                    }
                    let mut v = escape_legacy(&v);
                    if v.contains(' ') {
                        v = format!("\"{v}\"");
                    }
                    q_list.push(format!("{key}:{v}"));
                }
            }
        }
    }
    solr.insert("q".into(), json!(q_list.join(" ")));
    Ok(solr)
}

/// A dataset as CKAN's Solr document showed it where shapes differ: `tags` and `groups` as
/// names, `organization` as its name, `extras` folded into an object.
fn solr_shaped(mut d: Value) -> Value {
    let Some(m) = d.as_object_mut() else {
        return d;
    };
    let names = |v: Option<&Value>, free_only: bool| -> Value {
        Value::Array(
            v.and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|t| !free_only || t.get("vocabulary_id").is_none_or(Value::is_null))
                .filter_map(|t| t.get("name").cloned())
                .collect(),
        )
    };
    let tags = names(m.get("tags"), true);
    m.insert("tags".into(), tags);
    let groups = names(m.get("groups"), false);
    m.insert("groups".into(), groups);
    let org = m
        .get("organization")
        .and_then(|o| o.get("name"))
        .cloned()
        .unwrap_or(Value::Null);
    m.insert("organization".into(), org);
    let mut extras = Map::new();
    for e in m
        .get("extras")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(k) = e.get("key").and_then(Value::as_str) {
            extras.insert(
                k.to_string(),
                e.get("value").cloned().unwrap_or(Value::Null),
            );
        }
    }
    m.insert("extras".into(), Value::Object(extras));
    d
}

/// The answer's results for a field list: `fl=id` / `fl=name` → a list of strings; `*` → the
/// whole (Solr-shaped) dataset; other fields → objects of those fields (`extras_<k>` folded
/// into `extras`, as CKAN folded them).
fn shape_results(datasets: Vec<Value>, fl: &str) -> Vec<Value> {
    let fields: Vec<&str> = fl.split([',', ' ']).filter(|f| !f.is_empty()).collect();
    if fl == "id" || fl == "name" {
        return datasets
            .iter()
            .map(|d| d.get(fl).cloned().unwrap_or(Value::Null))
            .collect();
    }
    datasets
        .into_iter()
        .map(solr_shaped)
        .map(|d| {
            if fields.contains(&"*") {
                return d;
            }
            let mut out = Map::new();
            let mut extras = Map::new();
            for f in &fields {
                if let Some(k) = f.strip_prefix("extras_") {
                    if let Some(v) = d["extras"].get(k) {
                        extras.insert(k.to_string(), v.clone());
                    }
                } else if let Some(v) = d.get(*f) {
                    out.insert(f.to_string(), v.clone());
                }
            }
            if !extras.is_empty() {
                out.insert("extras".into(), Value::Object(extras));
            }
            Value::Object(out)
        })
        .collect()
}

/// The text of a string parameter passed to Solr (the last of a repeated one).
fn text_param(p: &Params, key: &str) -> Option<String> {
    match p.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Array(a) => a.iter().rev().find_map(|v| v.as_str().map(str::to_string)),
        _ => None,
    }
}

/// A dataset search: legacy parameters translated (v1/v2) or taken as Solr's (v3), only Solr's
/// parameters then allowed, `fq` replaced by the public-and-active filter, and the page run
/// through `package_search`.
async fn dataset_search(req: &LegacyRequest, mut params: Params) -> Response {
    // The JSONP callback is no search term (CKAN 2.8 turned it into a `callback:<fn>` clause
    // of v1/v2 queries, finding nothing).
    params.remove("callback");
    let mut p = if req.version == Version::V3 {
        params
    } else {
        match legacy_to_solr(&params) {
            Ok(p) => p,
            Err(msg) => return bad_option(&msg),
        }
    };
    p.remove("fq");
    let mut invalid: Vec<&String> = p
        .keys()
        .filter(|k| !SOLR_PARAMS.contains(&k.as_str()))
        .collect();
    if !invalid.is_empty() {
        invalid.sort();
        let list: Vec<String> = invalid.iter().map(|k| format!("'{k}'")).collect();
        return bad_option(&format!("Invalid search parameters: [{}]", list.join(", ")));
    }
    let fl = match text_param(&p, "fl").filter(|f| !f.trim().is_empty()) {
        Some(fl) => fl.trim().to_string(),
        None if req.version == Version::V2 => "id".to_string(),
        None => "name".to_string(),
    };
    let (rows, start) = match (int_option(&p, "rows"), int_option(&p, "start")) {
        (Ok(r), Ok(s)) => (r.unwrap_or(10).min(ROWS_MAX), s.unwrap_or(0)),
        (Err(m), _) | (_, Err(m)) => return bad_option(&m),
    };
    let mut fq = vec![json!("+capacity:public"), json!("+state:active")];
    match p.get("fq_list") {
        None | Some(Value::Null) => {}
        Some(Value::Array(a)) => {
            for v in a {
                match v.as_str() {
                    Some(s) => fq.push(json!(s)),
                    None => return bad_option("fq_list must be a list of strings"),
                }
            }
        }
        Some(Value::String(s)) => fq.push(json!(s)),
        Some(_) => return bad_option("fq_list must be a list of strings"),
    }
    let mut action = Params::new();
    action.insert("q".into(), json!(text_param(&p, "q").unwrap_or_default()));
    action.insert("fq".into(), Value::Array(fq));
    action.insert("rows".into(), json!(rows));
    action.insert("start".into(), json!(start));
    action.insert("facet".into(), json!("false"));
    for key in ["sort", "qf"] {
        if let Some(v) = text_param(&p, key).filter(|v| !v.trim().is_empty()) {
            action.insert(key.into(), json!(v));
        }
    }
    let found = match req.run("package_search", action).await {
        Ok(v) => v,
        Err(e) => return search_failure(&e),
    };
    let datasets = found["results"].as_array().cloned().unwrap_or_default();
    req.ok(&json!({
        "count": found["count"],
        "results": shape_results(datasets, &fl),
    }))
}

/// A resource search: `offset`, `limit` (20), `order_by`, `all_fields` are options, `q` is
/// ignored, every other parameter is a field filter whose value splits on whitespace into
/// `field:term` pairs for `resource_search` (which keeps the last term of a field).
async fn resource_search(req: &LegacyRequest, params: Params) -> Response {
    let all_fields = match all_fields_option(&params) {
        Ok(b) => b,
        Err(m) => return bad_option(&m),
    };
    let (offset, limit) = match (int_option(&params, "offset"), int_option(&params, "limit")) {
        (Ok(o), Ok(l)) => (o.unwrap_or(0), l.unwrap_or(20).min(RESOURCE_LIMIT_MAX)),
        (Err(m), _) | (_, Err(m)) => return bad_option(&m),
    };
    let mut query: Vec<Value> = Vec::new();
    for (field, value) in &params {
        let field = field.trim();
        if field == "q" || RESOURCE_OPTIONS.contains(&field) {
            continue;
        }
        let values = match field_values(field, value) {
            Ok(v) => v,
            Err(m) => return bad_option(&m),
        };
        for v in values {
            for term in v.split_whitespace() {
                query.push(json!(format!("{field}:{term}")));
            }
        }
    }
    let mut action = Params::new();
    action.insert("query".into(), Value::Array(query));
    action.insert("offset".into(), json!(offset));
    action.insert("limit".into(), json!(limit));
    if let Some(order_by) = text_param(&params, "order_by") {
        action.insert("order_by".into(), json!(order_by));
    }
    let found = match req.run("resource_search", action).await {
        Ok(v) => v,
        Err(e) => return search_failure(&e),
    };
    let resources = found["results"].as_array().cloned().unwrap_or_default();
    let results: Vec<Value> = if all_fields {
        resources
    } else {
        resources
            .iter()
            .map(|r| r.get("id").cloned().unwrap_or(Value::Null))
            .collect()
    };
    req.ok(&json!({"count": found["count"], "results": results}))
}

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
async fn revision_search(req: &LegacyRequest) -> Response {
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

async fn search(State(app): State<AppState>, req: Request) -> Response {
    let register = path_after(req.uri(), "/search/");
    let req = match LegacyRequest::read(app, req).await {
        Ok(r) => r,
        Err(resp) => return resp,
    };
    match register.as_str() {
        "revision" => revision_search(&req).await,
        "dataset" | "package" | "resource" => {
            let params = match search_params(&req) {
                Ok(p) => p,
                Err(msg) => return bad_request(&format!("Could not read parameters: {msg}")),
            };
            if register == "resource" {
                resource_search(&req, params).await
            } else {
                dataset_search(&req, params).await
            }
        }
        other => not_found_error(&format!("Unknown register: {other}")),
    }
}

/// `/tag_counts`: `[[name, count], …]` for the free tags of the active public datasets, by
/// name (one facet of `package_search`).
async fn tag_counts(State(app): State<AppState>, req: Request) -> Response {
    let req = match LegacyRequest::read(app, req).await {
        Ok(r) => r,
        Err(resp) => return resp,
    };
    let mut p = Params::new();
    p.insert("rows".into(), json!(0));
    p.insert("facet.field".into(), json!(["tags"]));
    p.insert("facet.limit".into(), json!(-1));
    p.insert("facet.mincount".into(), json!(1));
    let found = match req.run("package_search", p).await {
        Ok(v) => v,
        Err(e) => return from_ckan(&e),
    };
    let mut counts: Vec<(String, Value)> = found["facets"]["tags"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    counts.sort_by(|a, b| a.0.cmp(&b.0));
    let pairs: Vec<Value> = counts.into_iter().map(|(k, v)| json!([k, v])).collect();
    req.reply(StatusCode::OK, &Value::Array(pairs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(v: Value) -> Params {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn legacy_parameters_become_solr_ones() {
        let p = legacy_to_solr(&params(json!({
            "q": "war+peace", "tags": ["russian", "Flexible \u{30a1}"], "title": "a b",
            "groups": "roger", "notes": "", "all_fields": "1", "offset": "5", "limit": 2,
            "order_by": "name", "fl": "x"
        })))
        .unwrap();
        assert_eq!(
            p["q"],
            "war peace groups:roger tags:\"russian\" tags:\"Flexible \u{30a1}\" title:\"a b\""
        );
        assert_eq!(p["fl"], "*");
        assert_eq!(p["start"], "5");
        assert_eq!(p["rows"], 2);
        assert_eq!(p["sort"], "name asc");
        // Special characters are escaped.
        let p = legacy_to_solr(&params(json!({"author": "a:b(c)"}))).unwrap();
        assert_eq!(p["q"], "author:a\\:b\\(c\\)");
        // all_fields=0 keeps names.
        let p = legacy_to_solr(&params(json!({"all_fields": "0"}))).unwrap();
        assert!(p.get("fl").is_none());
    }

    #[test]
    fn legacy_option_errors() {
        let err = |v: Value| legacy_to_solr(&params(v)).unwrap_err();
        assert_eq!(
            err(json!({"filter_by_openness": "1"})),
            "Search option 'filter_by_openness' is not supported"
        );
        assert_eq!(
            err(json!({"filter_by_downloadable": "1"})),
            "Search option 'filter_by_downloadable' is not supported"
        );
        assert!(err(json!({"all_fields": "should_be_boolean"})).contains("True or False"));
        assert!(err(json!({"limit": "x"})).contains("'limit' must be an integer"));
        assert!(err(json!({"offset": "-1"})).contains("non-negative"));
        assert!(err(json!({"title": {"a": 1}})).contains("'title'"));
    }

    #[test]
    fn shapes_of_results() {
        let d = json!({
            "id": "i", "name": "n", "tags": [{"name": "t", "vocabulary_id": null},
            {"name": "v", "vocabulary_id": "x"}], "groups": [{"name": "g"}],
            "organization": {"name": "o"}, "extras": [{"key": "k", "value": "v"}]
        });
        assert_eq!(shape_results(vec![d.clone()], "name"), vec![json!("n")]);
        assert_eq!(shape_results(vec![d.clone()], "id"), vec![json!("i")]);
        let full = &shape_results(vec![d.clone()], "*")[0];
        assert_eq!(full["tags"], json!(["t"]));
        assert_eq!(full["groups"], json!(["g"]));
        assert_eq!(full["organization"], "o");
        assert_eq!(full["extras"], json!({"k": "v"}));
        assert_eq!(
            shape_results(vec![d], "name,extras_k,nope")[0],
            json!({"name": "n", "extras": {"k": "v"}})
        );
    }

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
