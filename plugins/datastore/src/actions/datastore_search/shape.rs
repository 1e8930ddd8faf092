//! The last step of a search: the answer in CKAN's shape, the records as objects, lists,
//! CSV or TSV, and the `_links` to the first and next pages.

use catalog_framework::prelude::*;

use super::params::DatastoreSearchParams;
use super::parse::Request;
use super::plan::Plan;
use super::run::Found;
use crate::actions::common::text;

/// The answer of a search of the resource `res`.
pub(super) fn shape(
    res: &Value,
    p: &DatastoreSearchParams,
    req: &Request<'_>,
    plan: &Plan,
    found: Found,
) -> Value {
    let (chosen, limit, offset) = (&req.chosen, req.limit, req.offset);
    let records = records(req, found.values);
    let mut out = serde_json::Map::new();
    out.insert("include_total".into(), json!(req.include_total));
    out.insert("resource_id".into(), res["id"].clone());
    out.insert(
        "fields".into(),
        Value::Array(
            chosen
                .iter()
                .map(|(n, f)| match f {
                    Some(f) => f.to_json(),
                    None => json!({"id": n, "type": "int"}),
                })
                .collect(),
        ),
    );
    out.insert("records_format".into(), json!(req.records_format));
    out.insert("records".into(), records);
    out.insert("limit".into(), json!(limit));
    if let Some(o) = offset {
        out.insert("offset".into(), json!(o));
    }
    for (k, v) in [
        ("filters", plan.filters.as_ref()),
        ("q", plan.q.as_ref()),
        ("sort", p.sort.raw()),
        ("distinct", p.distinct.raw()),
    ] {
        if let Some(v) = v.filter(|v| !v.is_null()) {
            out.insert(k.into(), v.clone());
        }
    }
    out.insert(
        "total_estimation_threshold".into(),
        p.total_estimation_threshold
            .raw()
            .cloned()
            .unwrap_or(Value::Null),
    );
    out.insert("_links".into(), links(res, p, limit, offset.unwrap_or(0)));
    if let Some(total) = found.total {
        out.insert("total".into(), json!(total));
        out.insert("total_was_estimated".into(), json!(false));
    }
    Value::Object(out)
}

/// The page's rows in the format asked for.
fn records(req: &Request<'_>, values: Vec<Vec<Value>>) -> Value {
    let chosen = &req.chosen;
    match req.records_format.as_str() {
        "objects" => Value::Array(
            values
                .into_iter()
                .map(|row| Value::Object(chosen.iter().map(|(n, _)| n.clone()).zip(row).collect()))
                .collect(),
        ),
        "lists" => json!(values),
        fmt => {
            let sep = if fmt == "csv" { ',' } else { '\t' };
            let mut out = String::new();
            for row in values {
                let line: Vec<String> = row.iter().map(|v| csv_field(v, sep)).collect();
                out.push_str(&line.join(&sep.to_string()));
                out.push('\n');
            }
            Value::String(out)
        }
    }
}

/// A CSV/TSV field as PostgreSQL's COPY writes it.
pub(crate) fn csv_field(v: &Value, sep: char) -> String {
    let s = match v {
        Value::Null => return String::new(),
        Value::Bool(b) => return if *b { "t".into() } else { "f".into() },
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.is_empty() || s.contains([sep, '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// CKAN's `_links`: this search's first and next pages as relative URLs (built from the
/// parameters, so a link works whether the search came as GET or as a JSON body).
fn links(res: &Value, p: &DatastoreSearchParams, limit: i64, offset: i64) -> Value {
    let mut pairs: Vec<(String, String)> = vec![("resource_id".into(), text(&res["id"]))];
    for (k, v) in [
        ("filters", p.filters.raw()),
        ("q", p.q.raw()),
        ("fields", p.fields.raw()),
        ("sort", p.sort.raw()),
        ("distinct", p.distinct.raw()),
        ("records_format", p.records_format.raw()),
    ] {
        if let Some(v) = v.filter(|v| !v.is_null()) {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Array(items) => items.iter().map(text).collect::<Vec<_>>().join(","),
                other => other.to_string(),
            };
            pairs.push((k.into(), s));
        }
    }
    if p.limit.is_present() {
        pairs.push(("limit".into(), limit.to_string()));
    }
    let url = |extra: Option<i64>| {
        let mut s = form_urlencoded::Serializer::new(String::new());
        for (k, v) in &pairs {
            s.append_pair(k, v);
        }
        if let Some(o) = extra {
            s.append_pair("offset", &o.to_string());
        }
        format!("/api/3/action/datastore_search?{}", s.finish())
    };
    let mut links = serde_json::Map::new();
    links.insert("start".into(), json!(url(None)));
    links.insert("next".into(), json!(url(Some(offset + limit))));
    if offset - limit > 0 {
        links.insert("prev".into(), json!(url(Some(offset - limit))));
    }
    Value::Object(links)
}
