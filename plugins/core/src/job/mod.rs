//! Background job actions (`job_list`, `job_show`, `job_clear`, `job_cancel`, sysadmin-only as
//! in CKAN) and the `test_job` handler of `catalog jobs test`.
//!
//! Jobs live in the store (`catalog_framework::store::JobRow`); the queue names shown and
//! accepted are CKAN's unprefixed names.

pub(crate) mod cancel;
pub(crate) mod clear;
pub(crate) mod list;
pub(crate) mod show;
pub(crate) mod test_job;

use std::borrow::Cow;

use catalog_framework::prelude::*;
use catalog_framework::store::time::parse_iso;
use catalog_framework::store::JobRow;
use catalog_framework::typed::{Later, ParamType};

/// A job timestamp as CKAN's `dictize_job` writes `created`: `%Y-%m-%dT%H:%M:%S`, no
/// fraction, no zone.
fn seconds(t: &str) -> String {
    match parse_iso(t) {
        Some(t) => t.format("%Y-%m-%dT%H:%M:%S").to_string(),
        None => t.to_string(),
    }
}

/// CKAN's `dictize_job`: exactly `id`, `title`, `created`, `queue`, in that order.
pub(crate) fn job_dict(job: &JobRow) -> Value {
    json!({
        "id": job.id,
        "title": job.title,
        "created": seconds(&job.created),
        "queue": job.queue,
    })
}

/// `job_show`'s dict: CKAN's four keys, then what a store-kept job adds (its kind, state,
/// attempts, times, last error and result; docs/API-COMPAT.md).
pub(crate) fn job_detail(job: &JobRow) -> Value {
    let mut d = job_dict(job);
    let o = d.as_object_mut().expect("an object");
    let time = |t: &Option<String>| t.as_deref().map(seconds);
    o.insert("kind".into(), json!(job.kind));
    o.insert("state".into(), json!(job.state));
    o.insert("attempts".into(), json!(job.attempts));
    o.insert("max_attempts".into(), json!(job.max_attempts));
    o.insert("run_after".into(), json!(seconds(&job.run_after)));
    o.insert("started".into(), json!(time(&job.started)));
    o.insert("finished".into(), json!(time(&job.finished)));
    o.insert("error".into(), json!(job.error));
    let result = job
        .result
        .as_deref()
        .map(|r| serde_json::from_str::<Value>(r).unwrap_or_else(|_| json!(r)));
    o.insert("result".into(), json!(result));
    d
}

/// CKAN's `list_of_strings` on `queues` (`job_list_schema`, `job_clear_schema`): anything but
/// a list is `Not a list`; an item that is no string is `Not a string: <item>` (the first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QueueList(pub(crate) Vec<String>);

impl ParamType for QueueList {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        let Value::Array(items) = v else {
            return Err("Not a list".into());
        };
        items
            .iter()
            .map(|x| match x {
                Value::String(s) => Ok(s.clone()),
                other => Err(format!("Not a string: {}", py_str(other)).into()),
            })
            .collect::<Result<_, _>>()
            .map(QueueList)
    }
    fn schema() -> Value {
        json!({"type": "array", "items": {"type": "string"}})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// The `queues` named (none when absent or null).
pub(crate) fn queues_param(p: &Later<QueueList>) -> CkanResult<Vec<String>> {
    Ok(p.get()?.map(|q| q.0).unwrap_or_default())
}

/// Python's `str()` of a decoded JSON value, as CKAN's messages print it.
fn py_str(v: &Value) -> String {
    fn repr(v: &Value) -> String {
        match v {
            Value::String(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
            other => py_str(other),
        }
    }
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{}]", a.iter().map(repr).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", repr(&json!(k)), repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_are_a_list_of_strings_with_ckan_messages() {
        let queues = |v: Option<Value>| queues_param(&Later::new("queues", v));
        assert_eq!(queues(None).unwrap(), Vec::<String>::new());
        assert_eq!(queues(Some(Value::Null)).unwrap(), Vec::<String>::new());
        assert_eq!(
            queues(Some(json!(["a", "b"]))).unwrap(),
            vec!["a".to_string(), "b".to_string()]
        );
        let err = |v: Value| queues(Some(v)).unwrap_err().to_error_object();
        assert_eq!(err(json!("a"))["queues"], json!(["Not a list"]));
        assert_eq!(err(json!(""))["queues"], json!(["Not a list"]));
        assert_eq!(
            err(json!(["a", 1, 2]))["queues"],
            json!(["Not a string: 1"])
        );
        assert_eq!(
            err(json!([{"x": [true, null, "s"]}]))["queues"],
            json!(["Not a string: {'x': [True, None, 's']}"])
        );
    }

    #[test]
    fn created_has_no_fraction() {
        assert_eq!(seconds("2026-11-24T03:06:58.123456"), "2026-11-24T03:06:58");
    }
}
