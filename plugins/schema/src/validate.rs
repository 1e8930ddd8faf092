//! The default dataset schema's validation (spec/ckan-write-auth-legacy.md §1.1), step by step:
//! each step reads its fields from the submitted dict, adds its errors and writes the cleaned
//! values into the new dict, in the order CKAN's schema checks them.

use catalog_framework::error::integrity;
use catalog_framework::params::truthy;
use catalog_framework::prelude::*;
use catalog_framework::validators::*;

/// Validates and cleans `data` in place: the whole dict is replaced by the cleaned one, or the
/// errors of every field are returned (a wrong shape of `extras`, `resources` or `groups` is an
/// integrity error at once).
pub(crate) fn validate_dataset(data: &mut Params, ctx: &SchemaContext<'_>) -> CkanResult<()> {
    let max = ctx.config.catalog.max_field_chars;
    let mut errs = ValidationBuilder::default();
    let mut out = Params::new();
    name(data, ctx.op, &mut errs, &mut out);
    strings(data, max, &mut errs, &mut out);
    title(ctx.op, &mut out);
    copied(data, &mut errs, &mut out);
    tags(data, &mut errs, &mut out);
    extras(data, ctx.is_sysadmin, &mut errs, &mut out)?;
    resources(data, max, &mut errs, &mut out)?;
    groups(data, &out)?;
    errs.finish()?;
    *data = out;
    Ok(())
}

/// `name`: required on create, a valid name of 2 to 100 characters.
fn name(data: &Params, op: SchemaOp, errs: &mut ValidationBuilder, out: &mut Params) {
    match data.get("name") {
        None | Some(Value::Null) if op == SchemaOp::Create => errs.push("name", "Missing value"),
        Some(Value::String(s)) if s.is_empty() && op == SchemaOp::Create => {
            errs.push("name", "Missing value")
        }
        None | Some(Value::Null) => {}
        Some(v) => {
            check_name(v, errs, "name");
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
}

/// The string fields (at most `max` characters each), `version` (at most 100) and the two
/// email addresses (trimmed, of a valid form).
fn strings(data: &Params, max: usize, errs: &mut ValidationBuilder, out: &mut Params) {
    for f in STRING_FIELDS {
        if let Some(v) = data.get(*f) {
            match as_text(v) {
                Some(t) => {
                    check_max(errs, f, &t, max);
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
}

/// `title`: on create, the name when it is empty; always trimmed.
fn title(op: SchemaOp, out: &mut Params) {
    if op == SchemaOp::Create {
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
}

/// The fields kept as given (`private` as a boolean), and `id` checked to be a UUID.
fn copied(data: &Params, errs: &mut ValidationBuilder, out: &mut Params) {
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
}

/// `tags` (names, or objects with a name and a vocabulary) and `tag_string` (comma-separated
/// names) into one list of tags.
fn tags(data: &Params, errs: &mut ValidationBuilder, out: &mut Params) {
    let mut tags: Vec<Value> = Vec::new();
    let mut tag_errs: Vec<String> = Vec::new();
    match data.get("tags") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for t in items {
                let (name, vocab) = match t {
                    Value::Object(o) => (o.get("name").cloned(), o.get("vocabulary_id").cloned()),
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
}

/// `extras`: a list of key/value objects, keys unique and no schema field's name; anything but
/// a list is an integrity error.
fn extras(
    data: &Params,
    is_sysadmin: bool,
    errs: &mut ValidationBuilder,
    out: &mut Params,
) -> CkanResult<()> {
    match data.get("extras") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            let mut cleaned = Vec::new();
            let mut item_errs = Vec::new();
            let mut any_err = false;
            let mut seen = std::collections::HashSet::new();
            for e in items {
                let mut ie = ValidationBuilder::default();
                if let Some(m) = extra_id_error(e, is_sysadmin) {
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
                item_errs.push(Value::Object(if ie.is_empty() {
                    Map::new()
                } else {
                    ie.build().body
                }));
                cleaned.push(json!({"key": key, "value": value}));
            }
            if any_err {
                errs.set("extras", Value::Array(item_errs));
            }
            out.insert("extras".into(), Value::Array(cleaned));
        }
        Some(_) => return Err(integrity(
            "Only lists of dicts can be placed against subschema ('extras',), not <class 'str'>",
            Value::Object(data.clone()),
        )),
    }
    Ok(())
}

/// `resources`: each validated on its own, errors in a list mirroring the input; anything but
/// a list is an integrity error.
fn resources(
    data: &Params,
    max: usize,
    errs: &mut ValidationBuilder,
    out: &mut Params,
) -> CkanResult<()> {
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
    Ok(())
}

/// `groups`, copied as given, must be a list (or null).
fn groups(data: &Params, out: &Params) -> CkanResult<()> {
    if let Some(g) = out.get("groups") {
        if !g.is_array() && !g.is_null() {
            return Err(integrity(
                "Only lists of dicts can be placed against subschema ('groups',)",
                Value::Object(data.clone()),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(v: Value, op: SchemaOp) -> CkanResult<Params> {
        let config = Config::default();
        let mut p = v.as_object().unwrap().clone();
        validate_dataset(
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
