//! Partial-JSON comparison of expected against actual response bodies.
//!
//! Expected values are plain JSON plus a few `$` matchers inside strings:
//!
//! | matcher | matches |
//! |---|---|
//! | `"$any"` | any value (the key must be present) |
//! | `"$absent"` | as an object member: the key must be absent |
//! | `"$string"`, `"$number"`, `"$bool"`, `"$array"`, `"$object"` | any value of that JSON type |
//! | `"$uuid"` | a UUID string |
//! | `"$datetime"` | an ISO-8601 timestamp string |
//! | `"$prefix:<text>"` | a string starting with `<text>` |
//! | `"$contains:<text>"` | a string containing `<text>` |
//! | `"$len:<n>"` | an array, object or string of length `n` |
//! | `"$$…"` | the literal string `"$…"` |

use serde_json::Value;

use crate::redact::{is_datetime, is_uuid};

/// How arrays inside the expectation are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayMode {
    /// Same length, element by element.
    Exact,
    /// Each expected element matches some actual element.
    Contains,
}

/// Checks that `actual` contains everything `expected` describes.
pub fn check_subset(expected: &Value, actual: &Value, mode: ArrayMode) -> Result<(), String> {
    subset(expected, actual, mode, "$body")
}

fn subset(expected: &Value, actual: &Value, mode: ArrayMode, path: &str) -> Result<(), String> {
    match expected {
        Value::String(s) if s.starts_with('$') && !s.starts_with("$$") => {
            matcher(s, actual).map_err(|why| format!("{path}: {why}"))
        }
        Value::String(s) => {
            let want = s
                .strip_prefix('$')
                .filter(|_| s.starts_with("$$"))
                .unwrap_or(s);
            match actual {
                Value::String(a) if a == want => Ok(()),
                _ => Err(format!("{path}: expected {want:?}, got {}", short(actual))),
            }
        }
        Value::Object(em) => {
            let Value::Object(am) = actual else {
                return Err(format!("{path}: expected an object, got {}", short(actual)));
            };
            for (k, ev) in em {
                let sub = format!("{path}.{k}");
                match (ev.as_str(), am.get(k)) {
                    (Some("$absent"), None) => {}
                    (Some("$absent"), Some(v)) => {
                        return Err(format!("{sub}: expected no such key, got {}", short(v)))
                    }
                    (_, None) => return Err(format!("{sub}: missing")),
                    (_, Some(av)) => subset(ev, av, mode, &sub)?,
                }
            }
            Ok(())
        }
        Value::Array(ea) => {
            let Value::Array(aa) = actual else {
                return Err(format!("{path}: expected an array, got {}", short(actual)));
            };
            match mode {
                ArrayMode::Exact => {
                    if ea.len() != aa.len() {
                        return Err(format!(
                            "{path}: expected {} elements, got {}: {}",
                            ea.len(),
                            aa.len(),
                            short(actual)
                        ));
                    }
                    for (i, (e, a)) in ea.iter().zip(aa).enumerate() {
                        subset(e, a, mode, &format!("{path}[{i}]"))?;
                    }
                    Ok(())
                }
                ArrayMode::Contains => {
                    for (i, e) in ea.iter().enumerate() {
                        if !aa.iter().any(|a| subset(e, a, mode, path).is_ok()) {
                            return Err(format!(
                                "{path}: no element matches expected [{i}] {}; got {}",
                                short(e),
                                short(actual)
                            ));
                        }
                    }
                    Ok(())
                }
            }
        }
        Value::Number(en) => match actual.as_f64() {
            Some(a) if en.as_f64() == Some(a) => Ok(()),
            _ => Err(format!("{path}: expected {en}, got {}", short(actual))),
        },
        other => {
            if other == actual {
                Ok(())
            } else {
                Err(format!("{path}: expected {other}, got {}", short(actual)))
            }
        }
    }
}

/// Checks that nothing `excluded` describes is present in `actual`.
pub fn check_excludes(excluded: &Value, actual: &Value) -> Result<(), String> {
    excludes(excluded, actual, "$body")
}

fn excludes(excluded: &Value, actual: &Value, path: &str) -> Result<(), String> {
    match (excluded, actual) {
        (Value::Object(em), Value::Object(am)) => {
            for (k, ev) in em {
                if let Some(av) = am.get(k) {
                    excludes(ev, av, &format!("{path}.{k}"))?;
                }
            }
            Ok(())
        }
        (Value::Array(ea), Value::Array(aa)) => {
            for e in ea {
                if let Some(hit) = aa
                    .iter()
                    .find(|a| subset(e, a, ArrayMode::Contains, path).is_ok())
                {
                    return Err(format!("{path}: unexpected element {}", short(hit)));
                }
            }
            Ok(())
        }
        (e, a) if subset(e, a, ArrayMode::Contains, path).is_ok() => {
            Err(format!("{path}: unexpected value {}", short(a)))
        }
        _ => Ok(()),
    }
}

fn matcher(m: &str, actual: &Value) -> Result<(), String> {
    let ok = match m {
        "$any" => true,
        "$absent" => return Err("`$absent` only works as an object member".into()),
        "$string" => actual.is_string(),
        "$number" => actual.is_number(),
        "$bool" => actual.is_boolean(),
        "$array" => actual.is_array(),
        "$object" => actual.is_object(),
        "$uuid" => actual.as_str().is_some_and(is_uuid),
        "$datetime" => actual.as_str().is_some_and(is_datetime),
        _ => {
            if let Some(p) = m.strip_prefix("$prefix:") {
                actual.as_str().is_some_and(|a| a.starts_with(p))
            } else if let Some(p) = m.strip_prefix("$contains:") {
                actual.as_str().is_some_and(|a| a.contains(p))
            } else if let Some(n) = m.strip_prefix("$len:") {
                let n: usize = n
                    .parse()
                    .map_err(|_| format!("bad matcher {m:?}: not a length"))?;
                match actual {
                    Value::Array(a) => a.len() == n,
                    Value::Object(o) => o.len() == n,
                    Value::String(s) => s.chars().count() == n,
                    _ => false,
                }
            } else {
                return Err(format!(
                    "unknown matcher {m:?} (write \"$${}\" for a literal)",
                    &m[1..]
                ));
            }
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!("expected {m}, got {}", short(actual)))
    }
}

/// A value rendered for a failure message, cut to a readable length.
pub fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 300 {
        let cut: String = s.chars().take(300).collect();
        format!("{cut}…")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_are_subsets_and_arrays_exact_by_default() {
        let actual =
            json!({"success": true, "result": {"tags": [{"name": "a"}, {"name": "b"}], "x": 1}});
        check_subset(&json!({"result": {"x": 1.0}}), &actual, ArrayMode::Exact).unwrap();
        check_subset(
            &json!({"result": {"tags": [{"name": "a"}, {"name": "b"}]}}),
            &actual,
            ArrayMode::Exact,
        )
        .unwrap();
        let err = check_subset(
            &json!({"result": {"tags": [{"name": "b"}]}}),
            &actual,
            ArrayMode::Exact,
        )
        .unwrap_err();
        assert!(err.contains("expected 1 elements, got 2"), "{err}");
        check_subset(
            &json!({"result": {"tags": [{"name": "b"}]}}),
            &actual,
            ArrayMode::Contains,
        )
        .unwrap();
    }

    #[test]
    fn matchers() {
        let actual = json!({
            "id": "7d1f3c8e-2a1b-4c5d-9e8f-0a1b2c3d4e5f",
            "created": "2024-01-01T00:00:00.123456",
            "msg": "Bad request: JSON Error: Error decoding JSON data. x",
            "list": [1, 2, 3],
            "dollar": "$5"
        });
        let expected = json!({
            "id": "$uuid", "created": "$datetime", "msg": "$prefix:Bad request: JSON Error:",
            "list": "$len:3", "password_hash": "$absent", "dollar": "$$5"
        });
        check_subset(&expected, &actual, ArrayMode::Exact).unwrap();
        assert!(check_subset(&json!({"id": "$absent"}), &actual, ArrayMode::Exact).is_err());
        assert!(
            check_subset(&json!({"id": "$uid"}), &actual, ArrayMode::Exact)
                .unwrap_err()
                .contains("unknown matcher")
        );
    }

    #[test]
    fn excludes_reject_listed_elements() {
        let actual = json!({"result": ["a", "b"]});
        check_excludes(&json!({"result": ["c"]}), &actual).unwrap();
        assert!(check_excludes(&json!({"result": ["b"]}), &actual).is_err());
        check_excludes(&json!({"other": ["b"]}), &actual).unwrap();
    }
}
