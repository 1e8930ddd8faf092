//! Query translation: CKAN's `convert_legacy_parameters_to_solr`, which turns the v1/v2 search
//! parameters (`tags`, `order_by`, `limit`, field filters …) into Solr's, and the list of the
//! parameters Solr took.

use catalog_framework::prelude::*;

use super::params::{all_fields_option, field_values, int_option, repr};

/// The parameters Solr took in CKAN 2.8 (`VALID_SOLR_PARAMETERS`); v1/v2 translate every other
/// key into the query.
pub(super) const SOLR_PARAMS: &[&str] = &[
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

/// `convert_legacy_parameters_to_solr` (v1/v2): the options checked (`filter_by_openness` and
/// `filter_by_downloadable` refused, `all_fields` boolean, `offset`/`limit` integers), then
/// `all_fields` → `fl=*`, `offset` → `start`, `limit` → `rows`, `order_by=x` → `sort=x asc`,
/// `tags` → `tags:"…"` clauses, and any other non-Solr key `k=v` → a `k:v` clause of `q`
/// (escaped, quoted when it has a space; empty values ignored). `+` in `q` is a space.
pub(super) fn legacy_to_solr(legacy: &Params) -> Result<Params, String> {
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
}
