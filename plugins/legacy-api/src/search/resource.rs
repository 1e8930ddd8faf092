//! `/search/resource`: a resource search over `resource_search`.

use axum::response::Response;
use catalog_framework::prelude::*;

use crate::common::LegacyRequest;

use super::answer::{bad_option, search_failure};
use super::params::{all_fields_option, field_values, int_option, text_param};

/// The cap on one resource search page (CKAN had none; ours bounds the answer).
const RESOURCE_LIMIT_MAX: i64 = 1000;

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

/// A resource search: `offset`, `limit` (20), `order_by`, `all_fields` are options, `q` is
/// ignored, every other parameter is a field filter whose value splits on whitespace into
/// `field:term` pairs for `resource_search` (which keeps the last term of a field).
pub(super) async fn resource_search(req: &LegacyRequest, params: Params) -> Response {
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
