//! Task status (`task_status_*`, `resource_status_show`): what background tasks report about an
//! entity, one row per `(entity_id, task_type, key)`. Spec: the wave-2 samples 393–415.

use catalog_framework::prelude::*;
use catalog_framework::store::TaskStatusRow;
use catalog_framework::typed::{Later, PyStr};

use crate::shapes::LaterExt;

pub(crate) mod delete;
pub(crate) mod show;
pub(crate) mod update;

/// The row as CKAN's `task_status_dictize` gives it (column order).
pub(crate) fn task_status_dict(t: &TaskStatusRow) -> Value {
    json!({
        "id": t.id, "entity_id": t.entity_id, "entity_type": t.entity_type,
        "task_type": t.task_type, "key": t.key, "value": t.value, "state": t.state,
        "error": t.error, "last_updated": t.last_updated,
    })
}

/// An id parameter as CKAN's `unicode_safe` keeps it (Python's `str()`): `None` for absent,
/// null or empty (what [`text_param`] gives).
pub(crate) fn non_empty(id: &Later<PyStr>) -> Option<String> {
    id.value().map(|s| s.text).filter(|s| !s.is_empty())
}

/// A parameter as CKAN's `unicode_safe` keeps it: strings as they are, other scalars as text;
/// `None` for absent, null or empty.
pub(crate) fn text_param(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(Value::Bool(b)) => Some(if *b { "True" } else { "False" }.into()),
        Some(v @ (Value::Array(_) | Value::Object(_))) => Some(v.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_non_empty_id_is_the_text_param() {
        for v in [
            json!("a"),
            json!(""),
            json!(3),
            json!(2.5),
            json!(true),
            json!(false),
            json!([]),
            json!({"a": [1]}),
            json!(null),
        ] {
            assert_eq!(
                non_empty(&Later::new("id", Some(v.clone()))),
                text_param(Some(&v))
            );
        }
        assert_eq!(non_empty(&Later::new("id", None)), None);
    }
}
