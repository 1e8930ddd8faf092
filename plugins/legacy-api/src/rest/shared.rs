//! What the registers share: the answer type, a failed action and the empty answer as legacy
//! responses, action parameters from a JSON literal, and extras between the Action API's list
//! and the REST form's object.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use catalog_framework::prelude::*;

use crate::common::from_ckan;

/// An answer or the legacy error response that replaces it.
pub(crate) type Answer = Result<Response, Response>;

/// A failed action as the legacy response.
pub(crate) fn fail(e: CkanError) -> Response {
    from_ckan(&e)
}

/// The empty 200 CKAN 2.7 gave for deletes (no body).
pub(crate) fn empty_ok() -> Response {
    (
        StatusCode::OK,
        [(
            axum::http::header::CONTENT_TYPE,
            "application/json;charset=utf-8",
        )],
        "",
    )
        .into_response()
}

/// The Action API's extras list (`[{"key", "value"}]`) of a dict as the REST form's object.
pub(crate) fn extras_object(dict: &Map<String, Value>) -> Map<String, Value> {
    dict.get("extras")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            Some((
                e.get("key")?.as_str()?.to_string(),
                e.get("value").cloned().unwrap_or(Value::Null),
            ))
        })
        .collect()
}

/// REST extras merged over the current ones (a `null` value deletes the key), as the Action
/// API's list; values are passed through `value` (datasets store strings).
pub(crate) fn merged_extras(
    current: Option<&Map<String, Value>>,
    given: Map<String, Value>,
    value: impl Fn(Value) -> Value,
) -> Value {
    let mut merged = current.cloned().unwrap_or_default();
    for (k, v) in given {
        if v.is_null() {
            merged.remove(&k);
        } else {
            merged.insert(k, v);
        }
    }
    Value::Array(
        merged
            .into_iter()
            .map(|(k, v)| json!({"key": k, "value": value(v)}))
            .collect(),
    )
}

/// A JSON object literal as action parameters.
pub(crate) fn params(v: Value) -> Params {
    match v {
        Value::Object(m) => m,
        _ => Params::new(),
    }
}
