use catalog_framework::prelude::*;
use catalog_framework::store::time::parse_iso;
use catalog_framework::store::{self as q, TaskStatusRow};
use catalog_framework::typed::{InDict, Later};

use super::{task_status_dict, text_param};
use crate::shapes::DictList;

action_params! {
    /// Create or update a task status (sysadmins only). The row is the one of `id`, else the
    /// one of `(entity_id, task_type, key)`, else a new one; only the fields given change.
    ///
    /// :param id: optional: the row to update
    /// :param entity_id: required
    /// :param entity_type: required
    /// :param task_type: required
    /// :param key: required
    /// :param value: required for a new row
    /// :param state: optional
    /// :param error: optional
    /// :param last_updated: optional ISO timestamp (a new row gets the current time)
    /// :rtype: dictionary
    pub struct TaskStatusUpdateParams {
        /// the row to update
        id: InDict<String>,
        /// the entity's id
        entity_id: InDict<String>,
        /// the entity's type
        entity_type: InDict<String>,
        /// the task's type
        task_type: InDict<String>,
        /// the task status's key
        key: InDict<String>,
        /// the value (required for a new row)
        value: InDict<String>,
        /// the task's state
        state: InDict<String>,
        /// the task's error
        error: InDict<String>,
        /// an ISO timestamp (a new row gets the current time)
        last_updated: InDict<String>,
    }
}

pub(crate) async fn task_status_update(
    ctx: &mut ActionContext,
    p: TaskStatusUpdateParams,
) -> CkanResult<Value> {
    update_one(ctx, &p.__extras).await
}

/// A task status dict (validated whole, as CKAN's schema does) written.
pub(crate) async fn update_one(ctx: &mut ActionContext, p: &Params) -> CkanResult<Value> {
    let by_id = match text_param(p.get("id")) {
        Some(id) => Some(
            q::task_status_by_id(ctx.db().await?, &id)
                .await?
                .ok_or_else(|| not_found("TaskStatus was not found."))?,
        ),
        None => None,
    };
    ctx.check_access("task_status_update", p).await?;
    let mut errs = validation();
    let mut required = |key: &str| {
        text_param(p.get(key)).unwrap_or_else(|| {
            errs.push(key, "Missing value");
            String::new()
        })
    };
    let entity_id = required("entity_id");
    let entity_type = required("entity_type");
    let key = required("key");
    let task_type = required("task_type");
    let last_updated = match p.get("last_updated") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_str().and_then(parse_iso) {
            Some(t) => Some(format_python_iso(&t)),
            None => {
                errs.push("last_updated", "Date format incorrect");
                None
            }
        },
    };
    errs.finish()?;
    let existing = match by_id {
        Some(row) => Some(row),
        None => q::task_status_by_key(ctx.db().await?, &entity_id, &task_type, &key).await?,
    };
    let optional = |k: &str| match p.get(k) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
    };
    let row = match existing {
        Some(mut row) => {
            row.entity_id = entity_id;
            row.entity_type = entity_type;
            row.task_type = task_type;
            row.key = key;
            if let Some(v) = optional("value") {
                row.value = v;
            }
            if let Some(v) = optional("state") {
                row.state = Some(v);
            }
            if let Some(v) = optional("error") {
                row.error = Some(v);
            }
            if last_updated.is_some() {
                row.last_updated = last_updated;
            }
            // Moving a row by id onto another row's key would break the key's uniqueness.
            if let Some(other) =
                q::task_status_by_key(ctx.db().await?, &row.entity_id, &row.task_type, &row.key)
                    .await?
            {
                if other.id != row.id {
                    return Err(validation()
                        .field(
                            "key",
                            "A task status with this entity_id, task_type and key already exists",
                        )
                        .build());
                }
            }
            row
        }
        None => TaskStatusRow {
            id: q::new_id(),
            entity_id,
            entity_type,
            task_type,
            key,
            value: optional("value").ok_or_else(|| missing("value"))?,
            state: optional("state"),
            error: optional("error"),
            last_updated: Some(
                last_updated.unwrap_or_else(|| format_python_iso(&chrono::Utc::now().naive_utc())),
            ),
        },
    };
    q::save_task_status(ctx.db().await?, &row).await?;
    Ok(task_status_dict(&row))
}

/// Python's `datetime.isoformat()` of a naive time: microseconds only when not zero.
fn format_python_iso(t: &chrono::NaiveDateTime) -> String {
    if t.and_utc().timestamp_subsec_micros() == 0 {
        t.format("%Y-%m-%dT%H:%M:%S").to_string()
    } else {
        t.format("%Y-%m-%dT%H:%M:%S%.6f").to_string()
    }
}

action_params! {
    /// Create or update several task statuses, in order (as task_status_update each); all or
    /// nothing.
    ///
    /// :param data: list of task status dicts
    /// :rtype: dictionary with `results`
    pub struct TaskStatusUpdateManyParams {
        /// a list of task status dicts
        data: Later<DictList>,
    }
}

pub(crate) async fn task_status_update_many(
    ctx: &mut ActionContext,
    p: TaskStatusUpdateManyParams,
) -> CkanResult<Value> {
    let items = p.data.require()?.0;
    let mut results = Vec::with_capacity(items.len());
    for item in &items {
        let Some(item) = item.as_object() else {
            return Err(validation()
                .field("data", "Must be a list of dicts")
                .build());
        };
        results.push(update_one(ctx, item).await?);
    }
    Ok(json!({"results": results}))
}
