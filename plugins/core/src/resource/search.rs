//! `resource_search` (spec/ckan-read-api.md §5.9).

use std::borrow::Cow;

use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::store::time::parse_iso;
use catalog_framework::typed::{Later, ParamType};
use chrono::NaiveDateTime;

use crate::lookup::{escape_like, ilike, text_of};
use crate::shapes::{LaterExt, Scalar};

/// The resource columns `resource_search` accepts (CKAN's `CORE_RESOURCE_COLUMNS`).
const RESOURCE_FIELDS: &[&str] = &[
    "url",
    "format",
    "description",
    "hash",
    "name",
    "resource_type",
    "mimetype",
    "mimetype_inner",
    "size",
    "created",
    "last_modified",
    "metadata_modified",
    "cache_url",
    "cache_last_updated",
    "url_type",
];

const RESOURCE_DATE_FIELDS: &[&str] = &[
    "created",
    "last_modified",
    "metadata_modified",
    "cache_last_updated",
];

/// The attributes of CKAN's Resource model `order_by` may name; anything else is ignored.
const RESOURCE_ORDERABLE: &[&str] = &[
    "id",
    "package_id",
    "url",
    "format",
    "description",
    "hash",
    "position",
    "name",
    "resource_type",
    "mimetype",
    "mimetype_inner",
    "size",
    "created",
    "last_modified",
    "metadata_modified",
    "cache_url",
    "cache_last_updated",
    "url_type",
    "extras",
    "state",
];

/// One `field:term` criterion of resource_search, the term already LIKE-escaped.
#[derive(Debug, Clone, PartialEq)]
enum Criterion {
    /// `hash ILIKE 'term%'`.
    Hash(String),
    /// `<field> ILIKE '%term%'` on a text column.
    Text(String, String),
    /// `size = term`; a term that is not an integer matches nothing.
    Size(Option<i64>),
    /// `<date column> = term`; an unparseable term matches nothing.
    Date(String, Option<NaiveDateTime>),
    /// A `catalog.extra_resource_fields` field, matched against the serialized extras.
    Extra(String, String),
}

fn resource_query_error(msg: impl Into<String>) -> CkanError {
    let mut b = validation();
    b.set("query", json!(msg.into()));
    b.build()
}

/// `resource_search`'s `query`: a `field:term` string or a list of them, as `(field, term)`
/// pairs; a repeated field keeps its last term (a Python dict). Anything else is `Must be
/// <field>:<value> pair(s)`; the message is the key's value, a string (not a list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourceQuery(pub(crate) Vec<(String, String)>);

impl ParamType for ResourceQuery {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        const PAIRS: &str = "Must be <field>:<value> pair(s)";
        let items: Vec<&Value> = match v {
            Value::Array(a) => a.iter().collect(),
            v @ Value::String(_) => vec![v],
            _ => return Err(PAIRS.into()),
        };
        let mut pairs: Vec<(String, String)> = Vec::new();
        for item in items {
            let Some((field, term)) = item.as_str().and_then(|s| s.split_once(':')) else {
                return Err(PAIRS.into());
            };
            match pairs.iter_mut().find(|(f, _)| f == field) {
                Some(slot) => slot.1 = term.to_string(),
                None => pairs.push((field.to_string(), term.to_string())),
            }
        }
        Ok(ResourceQuery(pairs))
    }
    fn schema() -> Value {
        json!({"oneOf": [
            {"type": "string", "pattern": ":"},
            {"type": "array", "items": {"type": "string", "pattern": ":"}},
        ]})
    }
    fn to_value(&self) -> Value {
        json!(self
            .0
            .iter()
            .map(|(f, t)| format!("{f}:{t}"))
            .collect::<Vec<_>>())
    }
    fn refusal(key: &str, message: Cow<'static, str>) -> CkanError {
        let mut b = validation();
        b.set(key, json!(message));
        b.build()
    }
}

/// `query` into criteria, with CKAN's messages: every field must be a resource column or one
/// of `catalog.extra_resource_fields` (`extra`).
fn parse_resource_query(
    query: &Later<ResourceQuery>,
    extra: &[String],
) -> CkanResult<Vec<Criterion>> {
    let pairs = query.require()?.0;
    let mut out = Vec::new();
    for (field, term) in pairs {
        let is_extra = extra.contains(&field);
        if !RESOURCE_FIELDS.contains(&field.as_str()) && !is_extra {
            return Err(resource_query_error(format!(
                "Field \"{field}\" not recognised in resource_search."
            )));
        }
        let term = escape_like(&term);
        out.push(if field == "hash" {
            Criterion::Hash(format!("{term}%"))
        } else if is_extra {
            Criterion::Extra(field, term)
        } else if field == "size" {
            Criterion::Size(term.trim().parse().ok())
        } else if RESOURCE_DATE_FIELDS.contains(&field.as_str()) {
            Criterion::Date(field, parse_iso(&term))
        } else {
            Criterion::Text(field, format!("%{term}%"))
        });
    }
    Ok(out)
}

fn int_of(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Python's `json.dumps(value, ensure_ascii=False)`: `", "` and `": "` separators.
fn py_json(v: &Value) -> String {
    match v {
        Value::Array(a) => format!("[{}]", a.iter().map(py_json).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), py_json(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// The resource's extras column as CKAN stores it: the JSON of every non-column key, or NULL
/// when there is none.
fn extras_blob(r: &Map<String, Value>) -> Option<String> {
    let extras: Map<String, Value> = r
        .iter()
        .filter(|(k, _)| !catalog_framework::validators::RESOURCE_COLUMNS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!extras.is_empty()).then(|| py_json(&Value::Object(extras)))
}

fn matches_resource(r: &Map<String, Value>, criteria: &[Criterion]) -> bool {
    criteria.iter().all(|c| match c {
        Criterion::Hash(pat) => text_of(r.get("hash")).is_some_and(|h| ilike(&h, pat)),
        Criterion::Text(field, pat) => text_of(r.get(field)).is_some_and(|t| ilike(&t, pat)),
        Criterion::Size(n) => n.is_some() && int_of(r.get("size")) == *n,
        Criterion::Date(field, t) => {
            t.is_some() && text_of(r.get(field)).and_then(|s| parse_iso(&s)) == *t
        }
        Criterion::Extra(field, term) => extras_blob(r).is_some_and(|blob| {
            ilike(&blob, &format!("%\"{field}\": \"%{term}%\",%"))
                || ilike(&blob, &format!("%\"{field}\": \"%{term}%\"}}"))
        }),
    })
}

/// An `order_by` key; NULLs sort last, as PostgreSQL sorts ascending.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum SortValue {
    Int(i64),
    Text(String),
    Null,
}

fn sort_value(r: &Map<String, Value>, field: &str) -> SortValue {
    let v = match field {
        "extras" => extras_blob(r).map(SortValue::Text),
        "size" | "position" => int_of(r.get(field)).map(SortValue::Int),
        _ => text_of(r.get(field)).map(SortValue::Text),
    };
    v.unwrap_or(SortValue::Null)
}

/// A stored resource as CKAN's `resource_dictize` gives it: every column (nulls kept) and the
/// extras, with the URL made absolute (uploads, scheme-less URLs); the format is not touched.
fn raw_resource(site_url: &str, dataset_type: &str, r: &Map<String, Value>) -> Value {
    let mut out = r.clone();
    let shown = crate::dictize::resource_out(site_url, dataset_type, &Value::Object(r.clone()));
    if let (Some(url), true) = (shown.get("url"), r.get("url").is_some_and(|u| !u.is_null())) {
        out.insert("url".into(), url.clone());
    }
    Value::Object(crate::dictize::sorted(out))
}

action_params! {
    /// Search the resources of public datasets.
    ///
    /// :param query: `field:term` or a list of them (all must match); `hash` is a prefix match, text fields a case-insensitive substring match, `size` and dates exact
    /// :param order_by: a resource field
    /// :param offset: optional
    /// :param limit: optional
    /// :rtype: dictionary with count and results
    pub struct ResourceSearchParams {
        /// `field:term`, or a list of them that must all match (required; checked after the
        /// access check)
        query: Later<ResourceQuery>,
        /// a resource field to order the results by (others are ignored)
        order_by: Later<Scalar>,
        /// how many matches to skip
        offset: Option<Natural>,
        /// how many matches to return
        limit: Option<Natural>,
    }
}

pub(crate) async fn resource_search(
    ctx: &mut ActionContext,
    p: ResourceSearchParams,
) -> CkanResult<Value> {
    let offset = p.offset.map_or(0, |n| n.0 as usize);
    let limit = p.limit.map(|n| n.0 as usize);
    ctx.check_access("resource_search", &p.to_params()).await?;
    let extra = ctx.config().catalog.extra_resource_fields.clone();
    let criteria = parse_resource_query(&p.query, &extra)?;
    let order_by = p
        .order_by
        .value()
        .map(|f| f.0)
        .filter(|f| RESOURCE_ORDERABLE.contains(&f.as_str()));

    // Active resources of active, public datasets (of any type), in a stable order.
    let mut rows = q::public_package_documents(ctx.db().await?).await?;
    // Sorted here, not by the database: collations differ between SQLite and PostgreSQL.
    rows.sort_by_cached_key(|r| (r.metadata_created.clone(), r.id.clone()));
    let mut found: Vec<(String, Map<String, Value>)> = Vec::new();
    for row in &rows {
        let doc: Value = serde_json::from_str(&row.data)?;
        for r in doc["resources"].as_array().into_iter().flatten() {
            let Some(r) = r.as_object() else { continue };
            let active = r.get("state").and_then(Value::as_str).unwrap_or("active") == "active";
            if active && matches_resource(r, &criteria) {
                found.push((row.dataset_type.clone(), r.clone()));
            }
        }
    }
    if let Some(field) = &order_by {
        found.sort_by_cached_key(|(_, r)| sort_value(r, field));
    }
    let count = found.len();
    let mut page: Vec<(String, Map<String, Value>)> = found
        .into_iter()
        .skip(offset)
        .take(limit.unwrap_or(usize::MAX))
        .collect();
    // resource_list_dictize sorts what the query returned by position.
    page.sort_by_key(|(_, r)| int_of(r.get("position")).unwrap_or(i64::MAX));
    let site_url = ctx.config().site_url().to_string();
    let results: Vec<Value> = page
        .iter()
        .map(|(ty, r)| raw_resource(&site_url, ty, r))
        .collect();
    Ok(json!({"count": count, "results": results}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn parse(q: Option<Value>, extra: &[String]) -> CkanResult<Vec<Criterion>> {
        parse_resource_query(&Later::new("query", q), extra)
    }

    #[test]
    fn resource_query_parsing() {
        let err = |q: Value| Value::Object(parse(Some(q), &[]).unwrap_err().body);
        assert_eq!(parse(None, &[]).unwrap_err().body["query"], "Missing value");
        assert_eq!(
            parse(Some(Value::Null), &[]).unwrap_err().body["query"],
            "Missing value"
        );
        assert_eq!(
            err(json!(5)),
            json!({"query": "Must be <field>:<value> pair(s)"})
        );
        assert_eq!(
            err(json!(["name:a", 1])),
            json!({"query": "Must be <field>:<value> pair(s)"})
        );
        // Every item is checked for its shape before any field is.
        assert_eq!(
            err(json!(["id:x", "name"])),
            json!({"query": "Must be <field>:<value> pair(s)"})
        );
        assert_eq!(
            err(json!("name")),
            json!({"query": "Must be <field>:<value> pair(s)"})
        );
        assert_eq!(
            err(json!("")),
            json!({"query": "Must be <field>:<value> pair(s)"})
        );
        assert_eq!(
            err(json!(["name:a", "id:x"])),
            json!({"query": "Field \"id\" not recognised in resource_search."})
        );
        // The last term of a repeated field wins; `:` in the term is kept.
        let c = parse(Some(json!(["url:a", "url:http://x"])), &[]).unwrap();
        assert_eq!(c, vec![Criterion::Text("url".into(), "%http://x%".into())]);
        let extra = vec!["theme".to_string()];
        let c = parse(Some(json!("theme:wa_ter")), &extra).unwrap();
        assert_eq!(c, vec![Criterion::Extra("theme".into(), "wa\\_ter".into())]);
        assert!(parse(Some(json!([])), &[]).unwrap().is_empty());
    }

    #[test]
    fn resource_matching() {
        let r = res(json!({
            "name": "Daily Counts", "hash": "ABCdef", "size": 1024, "format": "CSV",
            "created": "2024-01-02T03:04:05.123456", "description": null,
            "theme": "water", "other": "land",
        }));
        let m = |q: Value| {
            let extra = vec!["theme".to_string(), "other".to_string()];
            matches_resource(&r, &parse(Some(q), &extra).unwrap())
        };
        assert!(m(json!("name:COUNTS")));
        assert!(m(json!("name:")));
        assert!(!m(json!("description:")));
        assert!(m(json!("hash:abc")));
        assert!(!m(json!("hash:def")));
        assert!(m(json!("size:1024")));
        assert!(!m(json!("size:102")));
        assert!(m(json!("created:2024-01-02T03:04:05.123456")));
        assert!(!m(json!("created:2024-01-02")));
        assert!(m(json!(["format:cs", "name:daily"])));
        assert!(!m(json!(["format:cs", "name:weekly"])));
        // The extras blob is `{"theme": "water", "other": "land"}` (stored key order).
        assert!(m(json!("theme:ATE")));
        assert!(!m(json!("other:ate")));
        // CKAN's known false positive: the pattern runs on past the field's own value.
        assert!(m(json!("theme:lan")));
        assert!(!m(json!("name:Daily_")));
    }

    #[test]
    fn extras_blob_is_python_json() {
        let r = res(json!({"name": "x", "b": "two", "a": [1, {"k": true}]}));
        assert_eq!(
            extras_blob(&r).unwrap(),
            r#"{"b": "two", "a": [1, {"k": true}]}"#
        );
        assert_eq!(extras_blob(&res(json!({"name": "x"}))), None);
    }
}
