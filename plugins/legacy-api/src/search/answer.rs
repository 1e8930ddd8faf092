//! Shaping answers: failures as CKAN's search controller answered them (`Bad search option`),
//! and datasets as its Solr documents showed them, cut to the requested field list.

use axum::response::Response;
use catalog_framework::prelude::*;

use crate::common::{bad_request, from_ckan};

/// A search failure as CKAN's controller answered it: 400 `Bad search option: …`.
pub(super) fn bad_option(msg: &str) -> Response {
    bad_request(&format!("Bad search option: {msg}"))
}

/// An action's failure inside a search: what CKAN raised as a `SearchError` (validation of the
/// query included, as `resource_search` does with `search_query` in its context) is 400
/// `Bad search option`; authorization and the rest keep their legacy forms.
pub(super) fn search_failure(e: &CkanError) -> Response {
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
pub(super) fn shape_results(datasets: Vec<Value>, fl: &str) -> Vec<Value> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
