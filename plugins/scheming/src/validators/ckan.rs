//! CKAN's own validators and converters that schema files name (ckan/logic/validators.py,
//! ckan/lib/navl/validators.py), with CKAN's messages. Those whose check needs the store
//! (`package_name_validator`: the name is free; `owner_org_validator`: the caller may write to
//! the organization) or that core does for every dataset (`name_validator`, the tag rules of
//! `tag_string_convert`, `if_empty_guess_format`, `clean_format`) pass the value on: the core
//! actions and the default schema apply them to every dataset whatever its schema.

use std::sync::Arc;

use catalog_framework::prelude::*;
use catalog_framework::typed::py_str;

use super::{on_value, validator, Build, Flow, Validator};
use crate::register_scheming_validator;

pub fn ignore_missing(_: &Build<'_>) -> Result<Arc<dyn Validator>, String> {
    Ok(validator(|slot| {
        if slot.is_missing() {
            slot.value = None;
            return Flow::Stop;
        }
        Flow::Next
    }))
}
register_scheming_validator!("ignore_missing", ignore_missing);

register_scheming_validator!("not_missing", |_| Ok(validator(|slot| {
    if slot.value.is_none() {
        slot.errors.push("Missing value".into());
        return Flow::Stop;
    }
    Flow::Next
})));

/// `not_empty`: `False`, `0` and `0.0` pass; any other falsy value or a missing key is
/// "Missing value" and ends the chain.
pub fn not_empty(_: &Build<'_>) -> Result<Arc<dyn Validator>, String> {
    Ok(validator(|slot| {
        let v = slot.get();
        let valid_falsy = matches!(v, Value::Bool(false)) || v.as_f64().is_some_and(|n| n == 0.0);
        if !valid_falsy && !slot.is_truthy() {
            slot.errors.push("Missing value".into());
            return Flow::Stop;
        }
        Flow::Next
    }))
}
register_scheming_validator!("not_empty", not_empty);

register_scheming_validator!("ignore", |_| Ok(validator(|slot| {
    slot.value = None;
    Flow::Stop
})));

register_scheming_validator!("ignore_empty", |_| Ok(validator(|slot| {
    if !slot.is_truthy() && !matches!(slot.get(), Value::Bool(false) | Value::Number(_)) {
        slot.value = None;
        return Flow::Stop;
    }
    Flow::Next
})));

register_scheming_validator!("empty", |_| Ok(validator(|slot| {
    if slot.is_truthy() {
        let key = slot.key.to_string();
        slot.errors
            .push(format!("The input field {key} was not expected."));
    }
    Flow::Next
})));

/// `unicode_safe` (and `unicode`, `str`): any value as Python's `str()` writes it; a missing
/// key is "Missing value" (navl's `missing` refuses to become text).
fn unicode_safe(_: &Build<'_>) -> Result<Arc<dyn Validator>, String> {
    Ok(validator(|slot| {
        match slot.value.take() {
            None => slot.errors.push("Missing value".into()),
            Some(v) => slot.value = Some(Value::String(py_str(&v))),
        }
        Flow::Next
    }))
}
register_scheming_validator!("unicode_safe", unicode_safe);
register_scheming_validator!("unicode", unicode_safe);
register_scheming_validator!("str", unicode_safe);

fn strip(_: &Build<'_>) -> Result<Arc<dyn Validator>, String> {
    Ok(on_value(|v| match v {
        Value::String(s) => Ok(Value::String(s.trim().to_string())),
        other => Ok(other),
    }))
}
register_scheming_validator!("strip_value", strip);
register_scheming_validator!("remove_whitespace", strip);

/// CKAN's `int_validator`: `None` and `""` are `None`; integers, integral floats and
/// integer strings are integers; else "Invalid integer".
pub fn to_int(v: &Value) -> Result<Value, String> {
    match v {
        Value::Null => Ok(Value::Null),
        Value::String(s) if s.is_empty() => Ok(Value::Null),
        Value::Number(n) if n.is_i64() || n.is_u64() => Ok(v.clone()),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(json!(f as i64)),
            _ => Err("Invalid integer".into()),
        },
        Value::Bool(b) => Ok(json!(i64::from(*b))),
        Value::String(s) => s
            .trim()
            .parse::<i64>()
            .map(|n| json!(n))
            .map_err(|_| "Invalid integer".into()),
        _ => Err("Invalid integer".into()),
    }
}
register_scheming_validator!("int_validator", |_| Ok(on_value(|v| to_int(&v))));
register_scheming_validator!("convert_int", |_| Ok(on_value(|v| match v {
    Value::Null => Err("Invalid integer".into()),
    other => to_int(&other),
})));
register_scheming_validator!("natural_number_validator", |_| Ok(on_value(|v| {
    let n = to_int(&v)?;
    if n.as_i64().is_some_and(|n| n < 0) {
        return Err("Must be a natural number".into());
    }
    Ok(n)
})));
register_scheming_validator!("is_positive_integer", |_| Ok(on_value(|v| {
    let n = to_int(&v)?;
    if n.as_i64().is_some_and(|n| n < 1) {
        return Err("Must be a postive integer".into());
    }
    Ok(n)
})));

// `boolean_validator`: missing or `None` is `False`; strings `true`, `yes`, `t`, `y`, `1`
// (any case) are `True`.
register_scheming_validator!("boolean_validator", |_| Ok(validator(|slot| {
    let b = match slot.get() {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::String(s) => matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "yes" | "t" | "y" | "1"
        ),
        Value::Number(n) => n.as_f64().is_some_and(|n| n == 1.0),
        _ => false,
    };
    slot.value = Some(Value::Bool(b));
    Flow::Next
})));

// `isodate`: `""` is `None`; a date or date and time in ISO form, kept as ISO text;
// else "Date format incorrect".
register_scheming_validator!("isodate", |_| Ok(on_value(|v| match &v {
    Value::Null => Ok(v),
    Value::String(s) if s.is_empty() => Ok(Value::Null),
    Value::String(s) => catalog_framework::store::time::parse_iso(s)
        .map(|t| json!(catalog_framework::store::time::format_iso(t)))
        .ok_or_else(|| "Date format incorrect".to_string()),
    _ => Err("Date format incorrect".into()),
})));

/// `url_validator`: empty passes; else an http(s) URL whose host has letters, digits, `-`
/// and `.` only ("Please provide a valid URL").
pub fn is_ckan_url(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once("://") else {
        return false;
    };
    let netloc = rest.split(['/', '?', '#']).next().unwrap_or("");
    matches!(scheme, "http" | "https")
        && !netloc.is_empty()
        && netloc
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
}
register_scheming_validator!("url_validator", |_| Ok(validator(|slot| {
    if slot.is_truthy() && !slot.get().as_str().is_some_and(is_ckan_url) {
        slot.errors.push("Please provide a valid URL".into());
    }
    Flow::Next
})));

register_scheming_validator!("email_validator", |_| Ok(validator(|slot| {
    if let Some(s) = slot.get().as_str().filter(|s| !s.is_empty()) {
        if !catalog_framework::validators::is_valid_email(s) {
            let s = s.to_string();
            slot.errors.push(format!("Email {s} is not a valid format"));
        }
    }
    Flow::Next
})));

register_scheming_validator!("package_version_validator", |_| Ok(on_value(|v| {
    if v.as_str().is_some_and(|s| s.chars().count() > 100) {
        return Err("Version must be a maximum of 100 characters long".into());
    }
    Ok(v)
})));

// `if_empty_same_as(other)`: an empty value takes the other field's.
register_scheming_validator!("if_empty_same_as", |b| {
    let other = b
        .args
        .first()
        .and_then(Value::as_str)
        .ok_or("needs the name of the other field")?
        .to_string();
    Ok(validator(move |slot| {
        if !slot.is_truthy() {
            if let Some(v) = slot.siblings.get(&other).filter(|v| !v.is_null()) {
                slot.value = Some(v.clone());
            }
        }
        Flow::Next
    }))
});

// `default(value)`: a missing, `None` or `""` value becomes the default.
register_scheming_validator!("default", |b| {
    let d = b.args.first().cloned().ok_or("needs a default value")?;
    Ok(validator(move |slot| {
        let empty = match slot.get() {
            Value::Null => true,
            Value::String(s) => s.is_empty(),
            _ => false,
        };
        if empty {
            slot.value = Some(d.clone());
        }
        Flow::Next
    }))
});

register_scheming_validator!("OneOf", |b| {
    let choices: Vec<Value> = match b.args {
        [Value::Array(items)] => items.clone(),
        items => items.to_vec(),
    };
    Ok(one_of(choices))
});

/// CKAN's `OneOf(container)`: "Value must be one of [...]" in Python's repr.
pub fn one_of(choices: Vec<Value>) -> Arc<dyn Validator> {
    let message = format!(
        "Value must be one of {}",
        super::py_repr(&Value::Array(choices.clone()))
    );
    validator(move |slot| {
        let v = slot.get();
        if !choices.contains(v) {
            slot.errors.push(message.clone());
        }
        Flow::Next
    })
}

register_scheming_validator!("ignore_not_sysadmin", |_| Ok(validator(|slot| {
    if !slot.run.is_sysadmin {
        slot.value = None;
        return Flow::Stop;
    }
    Flow::Next
})));

register_scheming_validator!("json_object", |_| Ok(on_value(|v| match v {
    Value::Null | Value::Object(_) => Ok(v),
    Value::String(ref s) if s.is_empty() => Ok(v),
    _ => Err("Unsupported value for JSON field: must be an object".into()),
})));

/// Validators whose check core makes for every dataset (see the module's doc): the value
/// passes on unchanged here.
pub fn pass_on(_: &Build<'_>) -> Result<Arc<dyn Validator>, String> {
    Ok(validator(|_| Flow::Next))
}
register_scheming_validator!("name_validator", pass_on);
register_scheming_validator!("package_name_validator", pass_on);
register_scheming_validator!("group_name_validator", pass_on);
// `owner_org_validator`: no organization ends the chain (core's action decides whether a
// dataset may have none, `catalog.auth.create_unowned_dataset`, with CKAN's message).
register_scheming_validator!("owner_org_validator", |_| Ok(validator(|slot| {
    if slot.is_missing() || slot.get().as_str() == Some("") {
        slot.value = None;
        return Flow::Stop;
    }
    Flow::Next
})));
register_scheming_validator!("package_id_not_changed", pass_on);
register_scheming_validator!("tag_string_convert", pass_on);
register_scheming_validator!("if_empty_guess_format", pass_on);
register_scheming_validator!("clean_format", pass_on);
register_scheming_validator!("keep_extras", pass_on);
register_scheming_validator!("free_tags_only", pass_on);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_and_urls() {
        assert_eq!(to_int(&json!("12")).unwrap(), json!(12));
        assert_eq!(to_int(&json!(3.0)).unwrap(), json!(3));
        assert_eq!(to_int(&json!("")).unwrap(), Value::Null);
        assert_eq!(to_int(&json!("x")).unwrap_err(), "Invalid integer");
        assert!(is_ckan_url("https://example.org/a?b"));
        assert!(!is_ckan_url("ftp://example.org"));
        assert!(!is_ckan_url("http://exa mple.org"));
    }
}
