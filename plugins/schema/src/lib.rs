//! CKAN's default dataset schema for the type `dataset` (spec/ckan-write-auth-legacy.md §1.1).
#![forbid(unsafe_code)]

use catalog_framework::error::integrity;
use catalog_framework::params::truthy;
use catalog_framework::prelude::*;
pub use catalog_framework::validators::*;

register_plugin!("default_dataset_schema");
register_dataset_schema!("dataset", DefaultDatasetSchema);

/// The core schema every dataset type falls back to.
pub struct DefaultDatasetSchema;

impl DatasetSchema for DefaultDatasetSchema {
    fn validate(&self, data: &mut Params, ctx: &SchemaContext<'_>) -> CkanResult<()> {
        let max = ctx.config.catalog.max_field_chars;
        let mut errs = ValidationBuilder::default();
        let mut out = Params::new();

        // name
        match data.get("name") {
            None | Some(Value::Null) if ctx.op == SchemaOp::Create => {
                errs.push("name", "Missing value")
            }
            Some(Value::String(s)) if s.is_empty() && ctx.op == SchemaOp::Create => {
                errs.push("name", "Missing value")
            }
            None | Some(Value::Null) => {}
            Some(v) => {
                check_name(v, &mut errs, "name");
                // CKAN's package_name_validator (datasets only) says it again its own way.
                if let Some(n) = v.as_str() {
                    let len = n.chars().count();
                    if len < 2 {
                        errs.push(
                            "name",
                            format!("Name \"{n}\" length is less than minimum 2"),
                        );
                    } else if len > 100 {
                        errs.push(
                            "name",
                            format!("Name \"{n}\" length is more than maximum 100"),
                        );
                    }
                }
                out.insert("name".into(), v.clone());
            }
        }
        for f in STRING_FIELDS {
            if let Some(v) = data.get(*f) {
                match as_text(v) {
                    Some(t) => {
                        check_max(&mut errs, f, &t, max);
                        out.insert((*f).into(), t);
                    }
                    None => errs.push(f, "Must be a string"),
                }
            }
        }
        if let Some(v) = out.get("version").and_then(Value::as_str) {
            if v.chars().count() > 100 {
                errs.push(
                    "version",
                    "Version must be a maximum of 100 characters long",
                );
            }
        }
        for f in ["author_email", "maintainer_email"] {
            if let Some(Value::String(s)) = out.get(f).cloned() {
                let t = s.trim().to_string();
                if !t.is_empty() && !is_valid_email(&t) {
                    errs.push(f, format!("Email {t} is not a valid format"));
                }
                out.insert(f.into(), json!(t));
            }
        }
        if ctx.op == SchemaOp::Create {
            let empty_title = out
                .get("title")
                .and_then(Value::as_str)
                .is_none_or(|t| t.trim().is_empty());
            if empty_title {
                if let Some(n) = out.get("name").cloned() {
                    out.insert("title".into(), n);
                }
            }
        }
        if let Some(t) = out.get("title").and_then(Value::as_str) {
            let trimmed = t.trim().to_string();
            out.insert("title".into(), json!(trimmed));
        }
        if data.contains_key("private") {
            out.insert("private".into(), json!(truthy(data.get("private"))));
        }
        for f in [
            "id",
            "owner_org",
            "state",
            "plugin_data",
            "metadata_modified",
            "groups",
        ] {
            if let Some(v) = data.get(f) {
                out.insert(f.into(), v.clone());
            }
        }
        if let Some(id) = out.get("id") {
            if !id.is_null() && id.as_str().and_then(uuid_parse).is_none() {
                errs.push("id", "Invalid id provided");
            }
        }

        // tags and tag_string
        let mut tags: Vec<Value> = Vec::new();
        let mut tag_errs: Vec<String> = Vec::new();
        match data.get("tags") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for t in items {
                    let (name, vocab) = match t {
                        Value::Object(o) => {
                            (o.get("name").cloned(), o.get("vocabulary_id").cloned())
                        }
                        Value::String(s) => (Some(json!(s)), None),
                        _ => (None, None),
                    };
                    match name.as_ref().and_then(Value::as_str) {
                        Some(n) if !n.is_empty() => {
                            tag_errs.extend(tag_errors(n));
                            tags.push(
                                json!({"name": n, "vocabulary_id": vocab.unwrap_or(Value::Null)}),
                            );
                        }
                        _ => tag_errs.push("Missing value".into()),
                    }
                }
            }
            Some(_) => tag_errs.push("Not a list".into()),
        }
        if let Some(ts) = data.get("tag_string").and_then(Value::as_str) {
            for n in ts.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                tag_errs.extend(tag_errors(n));
                tags.push(json!({"name": n, "vocabulary_id": null}));
            }
        }
        if !tag_errs.is_empty() {
            errs.set("tags", json!(tag_errs));
        }
        if data.contains_key("tags") || data.contains_key("tag_string") {
            out.insert("tags".into(), Value::Array(tags));
        }

        // extras
        match data.get("extras") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                let mut cleaned = Vec::new();
                let mut item_errs = Vec::new();
                let mut any_err = false;
                let mut seen = std::collections::HashSet::new();
                for e in items {
                    let mut ie = ValidationBuilder::default();
                    if let Some(m) = extra_id_error(e, ctx.is_sysadmin) {
                        ie.push("id", m);
                    }
                    let key = e.get("key").and_then(Value::as_str).unwrap_or("");
                    if key.is_empty() {
                        ie.push("key", "Missing value");
                    } else if SCHEMA_FIELDS.contains(&key) {
                        ie.push("key", "There is a schema field with the same name");
                    }
                    let value = match e.get("value") {
                        None => {
                            ie.push("value", "Missing value");
                            Value::Null
                        }
                        Some(Value::String(s)) => json!(s),
                        Some(other) => json!(other.to_string()),
                    };
                    if !key.is_empty() && !seen.insert(key.to_string()) {
                        errs.push("extras_validation", format!("Duplicate key \"{key}\""));
                    }
                    any_err |= !ie.is_empty();
                    item_errs.push(Value::Object(if ie.is_empty() { Map::new() } else { ie.build().body }));
                    cleaned.push(json!({"key": key, "value": value}));
                }
                if any_err {
                    errs.set("extras", Value::Array(item_errs));
                }
                out.insert("extras".into(), Value::Array(cleaned));
            }
            Some(_) => {
                return Err(integrity(
                    "Only lists of dicts can be placed against subschema ('extras',), not <class 'str'>",
                    Value::Object(data.clone()),
                ))
            }
        }

        // resources
        match data.get("resources") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                let mut cleaned = Vec::new();
                let mut item_errs = Vec::new();
                let mut any_err = false;
                for r in items {
                    match validate_resource(r, max) {
                        Ok(c) => {
                            cleaned.push(Value::Object(c));
                            item_errs.push(json!({}));
                        }
                        Err(e) => {
                            any_err = true;
                            item_errs.push(Value::Object(e));
                        }
                    }
                }
                if any_err {
                    errs.set("resources", Value::Array(item_errs));
                }
                out.insert("resources".into(), Value::Array(cleaned));
            }
            Some(_) => {
                return Err(integrity(
                    "Only lists of dicts can be placed against subschema ('resources',)",
                    Value::Object(data.clone()),
                ))
            }
        }
        if let Some(g) = out.get("groups") {
            if !g.is_array() && !g.is_null() {
                return Err(integrity(
                    "Only lists of dicts can be placed against subschema ('groups',)",
                    Value::Object(data.clone()),
                ));
            }
        }
        errs.finish()?;
        *data = out;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(v: Value, op: SchemaOp) -> CkanResult<Params> {
        let config = Config::default();
        let mut p = v.as_object().unwrap().clone();
        DefaultDatasetSchema.validate(
            &mut p,
            &SchemaContext {
                op,
                is_sysadmin: false,
                config: &config,
            },
        )?;
        Ok(p)
    }

    #[test]
    fn name_rules_and_title_default() {
        let e = run(json!({"name": "Bad Name!"}), SchemaOp::Create).unwrap_err();
        assert_eq!(
            e.body["name"][0],
            "Must be purely lowercase alphanumeric (ascii) characters and these symbols: -_"
        );
        assert_eq!(
            run(json!({}), SchemaOp::Create).unwrap_err().body["name"][0],
            "Missing value"
        );
        let ok = run(
            json!({"name": "good-name", "tag_string": "a1, b2", "unknown": 1}),
            SchemaOp::Create,
        )
        .unwrap();
        assert_eq!(ok["title"], "good-name");
        assert_eq!(ok["tags"].as_array().unwrap().len(), 2);
        assert!(!ok.contains_key("unknown"));
    }

    #[test]
    fn nested_errors_mirror_input() {
        let e = run(
            json!({"name": "ok-name", "resources": [{"url": "x"}, {"size": "big"}]}),
            SchemaOp::Create,
        )
        .unwrap_err();
        assert_eq!(
            e.body["resources"],
            json!([{}, {"size": ["Invalid integer"]}])
        );
        let e = run(
            json!({"name": "ok-name", "author_email": "not-an-email"}),
            SchemaOp::Create,
        )
        .unwrap_err();
        assert_eq!(
            e.body["author_email"][0],
            "Email not-an-email is not a valid format"
        );
        let e = run(
            json!({"name": "ok-name", "tags": [{"name": "x"}]}),
            SchemaOp::Create,
        )
        .unwrap_err();
        assert_eq!(e.body["tags"][0], "Tag \"x\" length is less than minimum 2");
    }
}
