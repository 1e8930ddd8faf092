//! `/search/dataset` (and `/search/package`): a dataset search over `package_search`.

use axum::response::Response;
use catalog_framework::prelude::*;

use crate::common::{LegacyRequest, Version};

use super::answer::{bad_option, search_failure, shape_results};
use super::params::{int_option, text_param};
use super::solr::{legacy_to_solr, SOLR_PARAMS};

/// CKAN's cap on the rows of one dataset search (`PackageSearchQuery.run`).
const ROWS_MAX: i64 = 1000;

/// A dataset search: legacy parameters translated (v1/v2) or taken as Solr's (v3), only Solr's
/// parameters then allowed, `fq` replaced by the public-and-active filter, and the page run
/// through `package_search`.
pub(super) async fn dataset_search(req: &LegacyRequest, mut params: Params) -> Response {
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
