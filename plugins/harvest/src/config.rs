//! The source config keys every harvester takes (ckanext-harvest's base harvester):
//! `default_tags`, `default_groups`, `default_extras`, `override_extras`, `clean_tags`, plus
//! ours, `force_all` and `delete_missing`. Each harvester checks these with
//! [`validate_common`] and adds its own.

use catalog_framework::prelude::*;

use crate::harvester::Source;

/// Checks the common keys, with ckanext-harvest's messages.
pub fn validate_common(c: &Map<String, Value>) -> Result<(), String> {
    if let Some(tags) = c.get("default_tags") {
        let Value::Array(items) = tags else {
            return Err("default_tags must be a list".into());
        };
        if !items
            .iter()
            .all(|t| t.is_string() || t.get("name").is_some_and(Value::is_string))
        {
            return Err("default_tags must be a list of dictionaries".into());
        }
    }
    if let Some(groups) = c.get("default_groups") {
        let Value::Array(items) = groups else {
            return Err("default_groups must be a *list* of group names/ids".into());
        };
        if !items.iter().all(Value::is_string) {
            return Err("default_groups must be a list of group names/ids (i.e. strings)".into());
        }
    }
    if c.get("default_extras").is_some_and(|e| !e.is_object()) {
        return Err("default_extras must be a dictionary".into());
    }
    for key in ["override_extras", "clean_tags", "force_all"] {
        if c.get(key).is_some_and(|v| !v.is_boolean()) {
            return Err(format!("{key} must be boolean"));
        }
    }
    match c.get("delete_missing") {
        None | Some(Value::Bool(_)) => {}
        Some(Value::String(s)) if s == "mark" => {}
        Some(_) => return Err("delete_missing must be true, false or \"mark\"".into()),
    }
    Ok(())
}

/// Applies the common keys to a dataset dict about to be written.
pub(crate) fn apply_common(
    d: &mut Map<String, Value>,
    source: &Source,
    job_id: &str,
    object_id: &str,
) {
    let c = &source.config;
    let clean = c.get("clean_tags").and_then(Value::as_bool) == Some(true);
    let mut tags: Vec<Value> = d
        .get("tags")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(Value::Array(defaults)) = c.get("default_tags") {
        for t in defaults {
            let name = t
                .as_str()
                .or_else(|| t.get("name").and_then(Value::as_str))
                .unwrap_or_default();
            if !tags
                .iter()
                .any(|x| x.get("name").and_then(Value::as_str) == Some(name))
            {
                tags.push(json!({"name": name}));
            }
        }
    }
    if clean {
        let mut seen = std::collections::HashSet::new();
        tags = tags
            .into_iter()
            .filter_map(|t| {
                let n = catalog_framework::munge::munge_tag(t.get("name")?.as_str()?);
                (!n.is_empty() && seen.insert(n.clone())).then(|| json!({"name": n}))
            })
            .collect();
    }
    if d.contains_key("tags") || !tags.is_empty() {
        d.insert("tags".into(), Value::Array(tags));
    }
    if let Some(Value::Array(defaults)) = c.get("default_groups") {
        let mut groups: Vec<Value> = d
            .get("groups")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for g in defaults.iter().filter_map(Value::as_str) {
            if !groups.iter().any(|x| {
                x.get("name").and_then(Value::as_str) == Some(g)
                    || x.get("id").and_then(Value::as_str) == Some(g)
            }) {
                groups.push(json!({"name": g}));
            }
        }
        d.insert("groups".into(), Value::Array(groups));
    }
    if let Some(Value::Object(defaults)) = c.get("default_extras") {
        let over = c.get("override_extras").and_then(Value::as_bool) == Some(true);
        let mut extras: Vec<Value> = d
            .get("extras")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (k, v) in defaults {
            let value = match v {
                Value::String(s) => s
                    .replace(
                        "{dataset_id}",
                        d.get("id").and_then(Value::as_str).unwrap_or(""),
                    )
                    .replace("{harvest_source_id}", &source.id)
                    .replace("{harvest_source_url}", source.url.trim_end_matches('/'))
                    .replace("{harvest_source_title}", &source.title)
                    .replace("{harvest_job_id}", job_id)
                    .replace("{harvest_object_id}", object_id),
                other => other.to_string(),
            };
            let at = extras
                .iter()
                .position(|e| e.get("key").and_then(Value::as_str) == Some(k));
            match at {
                Some(i) if over => extras[i] = json!({"key": k, "value": value}),
                Some(_) => {}
                None => extras.push(json!({"key": k, "value": value})),
            }
        }
        d.insert("extras".into(), Value::Array(extras));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(config: Value) -> Source {
        Source {
            id: "src".into(),
            url: "https://remote.example.org/".into(),
            title: "Remote".into(),
            owner_org: None,
            config: config.as_object().cloned().unwrap_or_default(),
            api_key: None,
        }
    }

    #[test]
    fn common_keys_are_checked_with_ckans_messages() {
        let check = |v: Value| validate_common(v.as_object().unwrap());
        assert!(check(json!({})).is_ok());
        assert_eq!(
            check(json!({"default_tags": "x"})),
            Err("default_tags must be a list".into())
        );
        assert_eq!(
            check(json!({"default_tags": [1]})),
            Err("default_tags must be a list of dictionaries".into())
        );
        assert_eq!(
            check(json!({"default_groups": "g"})),
            Err("default_groups must be a *list* of group names/ids".into())
        );
        assert_eq!(
            check(json!({"default_extras": []})),
            Err("default_extras must be a dictionary".into())
        );
        assert_eq!(
            check(json!({"force_all": "yes"})),
            Err("force_all must be boolean".into())
        );
        assert!(check(json!({"delete_missing": "mark"})).is_ok());
        assert!(check(json!({"delete_missing": "sometimes"})).is_err());
    }

    #[test]
    fn defaults_are_added_and_extras_formatted() {
        let s = source(json!({
            "default_tags": [{"name": "geo"}, "open data!"],
            "clean_tags": true,
            "default_groups": ["maps"],
            "default_extras": {"origin": "{harvest_source_url}/dataset/{dataset_id}", "kept": "new"},
        }));
        let mut d: Map<String, Value> = json!({"id": "d1", "tags": [{"name": "Geo"}],
            "extras": [{"key": "kept", "value": "old"}]})
        .as_object()
        .unwrap()
        .clone();
        apply_common(&mut d, &s, "job", "obj");
        let tags: Vec<&str> = d["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(tags, vec!["geo", "open-data"]);
        assert_eq!(d["groups"], json!([{"name": "maps"}]));
        assert_eq!(
            d["extras"],
            json!([{"key": "kept", "value": "old"},
                   {"key": "origin", "value": "https://remote.example.org/dataset/d1"}])
        );
    }
}
