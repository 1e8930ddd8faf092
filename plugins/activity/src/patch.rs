//! Compact activity data: a patch from one version of an object's data to the next.
//!
//! CKAN stores the whole dataset dict with every activity. Consecutive versions of one dataset
//! differ in a few fields (`metadata_modified`, a title, one resource), so an activity stores a
//! patch against the previous activity of the same object, and a whole copy every
//! [`SNAPSHOT_EVERY`] activities (or when the previous one is missing), which bounds the work
//! of reading one back.
//!
//! A patch is one of:
//! - `{"=": value}`: the new value replaces the old one;
//! - `{"~": {key: patch, …}}`: an object with the same keys in the same order, changed under
//!   the listed keys (so the key order of the result is the original's, exactly);
//! - `{"#": [[index, patch], …]}`: an array of the same length, changed at the listed indexes.

use serde_json::{json, Map, Value};

/// A whole copy at least every this many activities of one object.
pub const SNAPSHOT_EVERY: i64 = 16;

/// The patch from `old` to `new`, or `None` when they are equal.
pub fn diff(old: &Value, new: &Value) -> Option<Value> {
    if old == new {
        return None;
    }
    match (old, new) {
        (Value::Object(a), Value::Object(b)) if a.keys().eq(b.keys()) => {
            let mut changed = Map::new();
            for (k, v) in b {
                if let Some(p) = diff(&a[k], v) {
                    changed.insert(k.clone(), p);
                }
            }
            Some(json!({ "~": changed }))
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            let changed: Vec<Value> = a
                .iter()
                .zip(b)
                .enumerate()
                .filter_map(|(i, (x, y))| diff(x, y).map(|p| json!([i, p])))
                .collect();
            Some(json!({ "#": changed }))
        }
        _ => Some(json!({ "=": new })),
    }
}

/// Applies a patch made by [`diff`]; `None` when it does not fit `old` (a corrupt chain).
pub fn apply(old: Value, patch: &Value) -> Option<Value> {
    let p = patch.as_object()?;
    if let Some(v) = p.get("=") {
        return Some(v.clone());
    }
    if let Some(changed) = p.get("~").and_then(Value::as_object) {
        let Value::Object(mut m) = old else {
            return None;
        };
        for (k, sub) in changed {
            let cur = m.get_mut(k)?;
            *cur = apply(cur.take(), sub)?;
        }
        return Some(Value::Object(m));
    }
    if let Some(changed) = p.get("#").and_then(Value::as_array) {
        let Value::Array(mut a) = old else {
            return None;
        };
        for entry in changed {
            let i = usize::try_from(entry.get(0)?.as_u64()?).ok()?;
            let cur = a.get_mut(i)?;
            *cur = apply(cur.take(), entry.get(1)?)?;
        }
        return Some(Value::Array(a));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(a: Value, b: Value) {
        let p = diff(&a, &b).expect("they differ");
        let back = apply(a, &p).expect("applies");
        assert_eq!(back, b);
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            serde_json::to_string(&b).unwrap(),
            "same key order"
        );
    }

    #[test]
    fn patches_rebuild_the_new_version_exactly() {
        let a = json!({"name": "a", "title": "A", "resources": [{"id": "r1", "url": "x"}], "extras": []});
        round_trip(
            a.clone(),
            json!({"name": "a", "title": "B", "resources": [{"id": "r1", "url": "x"}], "extras": []}),
        );
        round_trip(
            a.clone(),
            json!({"name": "a", "title": "A", "resources": [{"id": "r1", "url": "y"}], "extras": []}),
        );
        round_trip(
            a.clone(),
            json!({"name": "a", "title": "A", "resources": [], "extras": []}),
        );
        // A key added or removed, or the order changed: the object is copied whole.
        round_trip(
            a.clone(),
            json!({"title": "A", "name": "a", "resources": [], "extras": []}),
        );
        round_trip(
            a.clone(),
            json!({"name": "a", "title": null, "resources": [{"id": "r1", "url": "x"}], "extras": [], "new": 1}),
        );
        round_trip(json!(null), json!({"x": 1}));
        assert_eq!(diff(&a, &a), None);
    }

    #[test]
    fn a_small_change_makes_a_small_patch() {
        let big = "x".repeat(5000);
        let a =
            json!({"notes": big, "metadata_modified": "2026-01-01T00:00:00.000001", "title": "A"});
        let b =
            json!({"notes": big, "metadata_modified": "2026-01-01T00:00:01.000001", "title": "B"});
        let p = diff(&a, &b).unwrap();
        assert!(serde_json::to_string(&p).unwrap().len() < 100, "{p}");
    }

    #[test]
    fn a_patch_that_does_not_fit_is_refused() {
        assert_eq!(apply(json!([1]), &json!({"~": {"a": {"=": 1}}})), None);
        assert_eq!(apply(json!({"a": 1}), &json!({"~": {"b": {"=": 1}}})), None);
        assert_eq!(apply(json!([1]), &json!({"#": [[3, {"=": 1}]]})), None);
        assert_eq!(apply(json!(1), &json!({"?": 1})), None);
    }
}
