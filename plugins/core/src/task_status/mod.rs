//! Task status (`task_status_*`, `resource_status_show`): what background tasks report about an
//! entity, one row per `(entity_id, task_type, key)`. Spec: the wave-2 samples 393–415.

use catalog_framework::prelude::*;
use catalog_framework::store::TaskStatusRow;

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
