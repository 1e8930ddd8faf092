//! The source config keys every harvester takes (ckanext-harvest's base harvester):
//! `default_tags`, `default_groups`, `default_extras`, `override_extras`, `clean_tags`, plus
//! ours, `force_all` and `delete_missing`. Each harvester checks these with
//! [`validate_common`] and adds its own; the engine applies them to each dataset it writes
//! (`run/import.rs`).

use catalog_framework::prelude::*;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
