//! `/tag_counts`: the free tags of the public datasets with their counts.

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use catalog_framework::prelude::*;

use crate::common::{from_ckan, LegacyRequest};

/// `/tag_counts`: `[[name, count], …]` for the free tags of the active public datasets, by
/// name (one facet of `package_search`).
pub(super) async fn tag_counts(State(app): State<AppState>, req: Request) -> Response {
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
