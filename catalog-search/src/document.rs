//! The index document of a dataset, built from its `package_show` dict as CKAN's
//! `ckan/lib/search/index.py` builds the Solr document (spec §5.6).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use catalog_store::model::{COMPUTED_KEYS, SCHEMA_FIELDS};

use super::fields::{copied_to_text, is_declared, kind, FieldKind};
use super::query::parse_instant;

/// One dataset as the search backends receive it.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexDocument {
    pub id: String,
    /// `metadata_modified` as stored; `search-index check` compares it.
    pub metadata_modified: String,
    /// The `package_show` dict, returned as is in search results.
    pub data: String,
    /// `(field, value)` pairs of the string and text fields; a field may repeat.
    pub fields: Vec<(String, String)>,
    /// `(field, instant)` pairs of the date fields.
    pub dates: Vec<(String, DateTime<Utc>)>,
}

/// Top-level keys indexed by their own rules below, not by the catch-all.
const HANDLED: &[&str] = &[
    "tags",
    "groups",
    "organization",
    "resources",
    "extras",
    "relationships_as_object",
    "relationships_as_subject",
    "type",
    "private",
    "metadata_created",
    "metadata_modified",
];

/// Whether a top-level key is CKAN's own (a schema field or one `package_show` computes):
/// never a schema file's field, so never mirrored into `extras_<name>`.
fn is_core_key(key: &str) -> bool {
    SCHEMA_FIELDS.contains(&key) || COMPUTED_KEYS.contains(&key)
}

impl IndexDocument {
    /// Builds the document. `labels` are the dataset's permission labels.
    pub fn from_package(
        dict: &Value,
        labels: &[String],
        site_id: &str,
        extra_resource_fields: &[String],
    ) -> IndexDocument {
        Self::from_package_with_vocabularies(
            dict,
            labels,
            site_id,
            extra_resource_fields,
            &HashMap::new(),
        )
    }

    /// Builds the document; `vocabularies` names each vocabulary id, since a vocabulary tag is
    /// indexed in `vocab_<vocabulary name>` (an id without a name is used as it is).
    pub fn from_package_with_vocabularies(
        dict: &Value,
        labels: &[String],
        site_id: &str,
        extra_resource_fields: &[String],
        vocabularies: &HashMap<String, String>,
    ) -> IndexDocument {
        let empty = Map::new();
        let pkg = dict.as_object().unwrap_or(&empty);
        let mut doc = IndexDocument {
            id: str_of(pkg.get("id")),
            metadata_modified: str_of(pkg.get("metadata_modified")),
            data: dict.to_string(),
            fields: Vec::new(),
            dates: Vec::new(),
        };
        doc.push("site_id", site_id);
        doc.push("entity_type", "package");
        let dtype = str_of(pkg.get("type"));
        doc.push("dataset_type", &dtype);
        let private = pkg.get("private").and_then(Value::as_bool).unwrap_or(false);
        doc.push("capacity", if private { "private" } else { "public" });
        for l in labels {
            doc.push("permission_labels", l);
        }
        for key in ["metadata_created", "metadata_modified"] {
            if let Some(d) = pkg.get(key).and_then(Value::as_str).and_then(parse_instant) {
                doc.dates.push((key.into(), d));
            }
        }
        if let Some(title) = pkg.get("title").and_then(Value::as_str) {
            doc.push("title_string", title);
        }
        for t in pkg
            .get("tags")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = str_of(t.get("name"));
            match t.get("vocabulary_id").and_then(Value::as_str) {
                Some(v) if !v.is_empty() => {
                    let vocab = vocabularies.get(v).map_or(v, String::as_str);
                    doc.push(&format!("vocab_{vocab}"), &name)
                }
                _ => doc.push("tags", &name),
            }
        }
        for g in pkg
            .get("groups")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            doc.push("groups", &str_of(g.get("name")));
        }
        if let Some(org) = pkg.get("organization").filter(|o| o.is_object()) {
            doc.push("organization", &str_of(org.get("name")));
        }
        doc.push_resources(pkg, extra_resource_fields);
        doc.push_extras(pkg);
        for (k, v) in pkg {
            if HANDLED.contains(&k.as_str()) || v.is_null() {
                continue;
            }
            match v {
                Value::String(s) if !s.is_empty() => doc.push(k, s),
                Value::Bool(b) => doc.push(k, if *b { "true" } else { "false" }),
                Value::Number(n) => doc.push(k, &n.to_string()),
                Value::Array(items) => doc.push_list(k, items),
                _ => {}
            }
            // A schema file's field that no extra holds: indexed as CKAN indexes the extra it
            // would be there (`extras_<name>`, full text), beside its exact-string field.
            if !is_declared(k) && !is_core_key(k) {
                match v {
                    Value::String(s) if !s.is_empty() => doc.push(&format!("extras_{k}"), s),
                    Value::Number(n) => doc.push(&format!("extras_{k}"), &n.to_string()),
                    _ => {}
                }
            }
        }
        if let Some(p) = pkg.get("private") {
            doc.push(
                "private",
                if p.as_bool().unwrap_or(false) {
                    "true"
                } else {
                    "false"
                },
            );
        }
        // The catch-all `text` field.
        let copied: Vec<String> = doc
            .fields
            .iter()
            .filter(|(f, _)| copied_to_text(f))
            .map(|(_, v)| v.clone())
            .collect();
        for v in copied {
            doc.push("text", &v);
        }
        doc
    }

    /// Values of one field.
    pub fn values<'a>(&'a self, field: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.fields
            .iter()
            .filter(move |(f, _)| f == field)
            .map(|(_, v)| v.as_str())
    }

    /// The first value of a field.
    pub fn first<'a>(&'a self, field: &'a str) -> Option<&'a str> {
        self.values(field).next()
    }

    fn push(&mut self, field: &str, value: &str) {
        if kind(field) == FieldKind::Date {
            // Unparseable dates are dropped, as CKAN does.
            if let Some(d) = parse_instant(value) {
                self.dates.push((field.into(), d));
            }
            return;
        }
        self.fields.push((field.into(), value.into()));
    }

    /// A top-level list a schema file's field holds: a multiple-text field's items each under
    /// the field's name and in `extras_<name>`; a repeating field's items flattened as
    /// ckanext-dcat indexes them, each scalar subfield's values joined by spaces in
    /// `extras_<name>__<subfield>` (nested objects are left out, as there).
    fn push_list(&mut self, key: &str, items: &[Value]) {
        if is_declared(key) || is_core_key(key) {
            return;
        }
        let mut flattened: Vec<(String, String)> = Vec::new();
        for item in items {
            match item {
                Value::String(s) if !s.is_empty() => {
                    self.push(key, s);
                    self.push(&format!("extras_{key}"), s);
                }
                Value::Number(n) => {
                    self.push(key, &n.to_string());
                    self.push(&format!("extras_{key}"), &n.to_string());
                }
                Value::Object(m) => {
                    for (sub, v) in m {
                        let text = match v {
                            Value::String(s) if !s.is_empty() => s.clone(),
                            Value::Number(n) => n.to_string(),
                            Value::Bool(b) => if *b { "True" } else { "False" }.to_string(),
                            _ => continue,
                        };
                        let field = format!("extras_{key}__{sub}");
                        match flattened.iter_mut().find(|(f, _)| *f == field) {
                            Some((_, joined)) => {
                                joined.push(' ');
                                joined.push_str(&text);
                            }
                            None => flattened.push((field, text)),
                        }
                    }
                }
                _ => {}
            }
        }
        for (field, text) in flattened {
            self.push(&field, &text);
        }
    }

    fn push_resources(&mut self, pkg: &Map<String, Value>, extra_fields: &[String]) {
        for r in pkg
            .get("resources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for (field, key) in [
                ("res_name", "name"),
                ("res_description", "description"),
                ("res_format", "format"),
                ("res_url", "url"),
                ("res_type", "resource_type"),
            ] {
                if let Some(v) = r.get(key).and_then(Value::as_str).filter(|v| !v.is_empty()) {
                    self.push(field, v);
                }
            }
            for key in extra_fields {
                if let Some(v) = r.get(key).and_then(Value::as_str).filter(|v| !v.is_empty()) {
                    self.push(&format!("res_extras_{key}"), v);
                }
            }
        }
    }

    fn push_extras(&mut self, pkg: &Map<String, Value>) {
        for e in pkg
            .get("extras")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key: String = str_of(e.get("key"))
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                .collect();
            if key.is_empty() {
                continue;
            }
            let value = match e.get("value") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => continue,
                Some(v) => v.to_string(),
            };
            self.push(&format!("extras_{key}"), &value);
            if !is_declared(&key) && !pkg.contains_key(&key) {
                self.push(&key, &value);
            }
        }
    }
}

fn str_of(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builds_ckan_fields() {
        let d = json!({
            "id": "abc", "name": "air", "title": "Air Quality", "type": "dataset",
            "private": false, "state": "active", "notes": "Hourly readings",
            "metadata_created": "2024-01-02T03:04:05.123456",
            "metadata_modified": "2024-02-02T03:04:05.123456",
            "num_resources": 1, "owner_org": "org-id",
            "tags": [{"name": "Economy", "vocabulary_id": null}, {"name": "x", "vocabulary_id": "topics"}],
            "groups": [{"name": "env"}],
            "organization": {"name": "acme", "title": "Acme"},
            "resources": [{"name": "r1", "format": "CSV", "url": "http://x/a.csv", "description": "d", "resource_type": null}],
            "extras": [{"key": "theme!", "value": "health"}, {"key": "release_date", "value": "2023-05-01"}],
        });
        let doc = IndexDocument::from_package(&d, &["public".into()], "default", &[]);
        assert_eq!(doc.id, "abc");
        assert_eq!(doc.first("capacity"), Some("public"));
        assert_eq!(doc.first("tags"), Some("Economy"));
        assert_eq!(doc.first("vocab_topics"), Some("x"));
        assert_eq!(doc.first("groups"), Some("env"));
        assert_eq!(doc.first("organization"), Some("acme"));
        assert_eq!(doc.first("res_format"), Some("CSV"));
        assert_eq!(doc.first("extras_theme"), Some("health"));
        assert_eq!(doc.first("theme"), Some("health"));
        assert_eq!(doc.first("num_resources"), Some("1"));
        assert_eq!(doc.first("owner_org"), Some("org-id"));
        assert_eq!(doc.first("title_string"), Some("Air Quality"));
        assert_eq!(doc.first("dataset_type"), Some("dataset"));
        assert!(doc.values("text").any(|v| v == "Hourly readings"));
        assert!(doc.dates.iter().any(|(f, _)| f == "release_date"));
        assert!(doc.dates.iter().any(|(f, _)| f == "metadata_modified"));
    }

    #[test]
    fn schema_fields_are_indexed_as_ckan_and_ckanext_dcat_index_them() {
        let d = json!({
            "id": "abc", "name": "air", "type": "dataset", "owner_org": "org-id",
            "frequency": "monthly",
            "theme": ["http://x.org/t1", "http://x.org/t2"],
            "contact": [{"name": "Desk", "email": "a@x.org"}, {"name": "Lab", "geom": {"type": "Point"}}],
        });
        let doc = IndexDocument::from_package(&d, &["public".into()], "default", &[]);
        assert_eq!(doc.first("frequency"), Some("monthly"));
        assert_eq!(doc.first("extras_frequency"), Some("monthly"));
        assert_eq!(
            doc.values("theme").collect::<Vec<_>>(),
            ["http://x.org/t1", "http://x.org/t2"]
        );
        assert_eq!(doc.values("extras_theme").count(), 2);
        assert_eq!(doc.first("extras_contact__name"), Some("Desk Lab"));
        assert_eq!(doc.first("extras_contact__email"), Some("a@x.org"));
        assert_eq!(doc.first("extras_contact__geom"), None);
        assert_eq!(
            doc.first("extras_owner_org"),
            None,
            "core keys are not mirrored"
        );
        assert!(doc.values("text").any(|v| v == "Desk Lab"));
    }
}
