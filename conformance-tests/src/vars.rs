//! `{{var}}` placeholders and dotted paths into JSON.

use std::collections::BTreeMap;

use serde_json::Value;

/// Variables shared by the steps of one scenario.
pub type Vars = BTreeMap<String, Value>;

/// Replaces `{{name}}` placeholders in every string (and object key) of `v`.
///
/// A string that is exactly one placeholder takes the variable's JSON value, so a saved
/// number or list stays a number or list; elsewhere the value is spliced in as text.
pub fn substitute(v: &Value, vars: &Vars) -> Result<Value, String> {
    Ok(match v {
        Value::String(s) => substitute_whole(s, vars)?,
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|x| substitute(x, vars))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, x) in m {
                out.insert(substitute_str(k, vars)?, substitute(x, vars)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

fn substitute_whole(s: &str, vars: &Vars) -> Result<Value, String> {
    if let Some(name) = s.strip_prefix("{{").and_then(|r| r.strip_suffix("}}")) {
        if !name.contains("{{") && !name.contains("}}") {
            return lookup(name.trim(), vars).cloned();
        }
    }
    substitute_str(s, vars).map(Value::String)
}

/// Replaces placeholders inside a string; non-string values are spliced as JSON text.
pub fn substitute_str(s: &str, vars: &Vars) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            return Err(format!("unterminated placeholder in {s:?}"));
        };
        match lookup(after[..end].trim(), vars)? {
            Value::String(x) => out.push_str(x),
            other => out.push_str(&other.to_string()),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

fn lookup<'a>(name: &str, vars: &'a Vars) -> Result<&'a Value, String> {
    vars.get(name).ok_or_else(|| {
        format!(
            "unknown variable {{{{{name}}}}} (not saved by an earlier step, or that step failed)"
        )
    })
}

/// Follows a dotted path (`result.resources.0.id`); numeric segments index arrays.
pub fn get_path<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .filter(|seg| !seg.is_empty())
        .try_fold(v, |cur, seg| match cur {
            Value::Object(m) => m.get(seg),
            Value::Array(a) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars() -> Vars {
        let mut v = Vars::new();
        v.insert("run".into(), json!("rabc123"));
        v.insert("n".into(), json!(3));
        v
    }

    #[test]
    fn whole_placeholders_keep_their_type_and_partial_ones_splice_text() {
        let out = substitute(
            &json!({"name": "ds-{{run}}", "count": "{{n}}", "{{run}}": ["{{ run }}"]}),
            &vars(),
        )
        .unwrap();
        assert_eq!(
            out,
            json!({"name": "ds-rabc123", "count": 3, "rabc123": ["rabc123"]})
        );
    }

    #[test]
    fn unknown_variables_are_errors() {
        let err = substitute(&json!("{{nope}}"), &vars()).unwrap_err();
        assert!(err.contains("nope"), "{err}");
    }

    #[test]
    fn paths_walk_objects_and_arrays() {
        let v = json!({"result": {"resources": [{"id": "a"}, {"id": "b"}]}});
        assert_eq!(get_path(&v, "result.resources.1.id"), Some(&json!("b")));
        assert_eq!(get_path(&v, "result.resources.2.id"), None);
    }
}
