use catalog_framework::authz;
use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::{Later, PyStr, Raw};

use super::{non_empty, task_status_dict, text_param};

action_params! {
    /// Return a task status, by `id` or by `entity_id`, `task_type` and `key`.
    ///
    /// :param id: optional
    /// :param entity_id: required without `id`
    /// :param task_type: required without `id`
    /// :param key: required without `id`
    /// :rtype: dictionary
    pub struct TaskStatusShowParams {
        /// the task status's id
        id: Later<PyStr>,
        /// the entity's id (required without `id`, as are `task_type` and `key`: checked one
        /// at a time after the access check; a null counts as given)
        entity_id: Raw,
        /// the task's type
        task_type: Raw,
        /// the task status's key
        key: Raw,
    }
}

pub(crate) async fn task_status_show(
    ctx: &mut ActionContext,
    p: TaskStatusShowParams,
) -> CkanResult<Value> {
    ctx.check_access("task_status_show", &p.to_params()).await?;
    let row = match non_empty(&p.id) {
        Some(id) => q::task_status_by_id(ctx.db().await?, &id).await?,
        None => {
            // CKAN's get_or_bust, one key at a time.
            let keys = [
                ("entity_id", &p.entity_id),
                ("task_type", &p.task_type),
                ("key", &p.key),
            ];
            for (key, v) in keys {
                if v.get().is_none() {
                    return Err(missing(key));
                }
            }
            let v = |r: &Raw| text_param(r.get()).unwrap_or_default();
            q::task_status_by_key(
                ctx.db().await?,
                &v(&p.entity_id),
                &v(&p.task_type),
                &v(&p.key),
            )
            .await?
        }
    };
    let row = row.ok_or_else(|| not_found(""))?;
    check_entity_readable(ctx, &row.entity_id, None).await?;
    Ok(task_status_dict(&row))
}

/// A task status is about a dataset or a resource the caller may read (or about something
/// else): the tasks of a private dataset are its editors' business (CKAN shows them to anyone;
/// docs/API-COMPAT.md).
/// A refusal names the entity only when the caller named it (`named`).
async fn check_entity_readable(
    ctx: &mut ActionContext,
    entity_id: &str,
    named: Option<&str>,
) -> CkanResult<()> {
    if ctx.is_sysadmin() || ctx.ignore_auth {
        return Ok(());
    }
    // A resource's dataset, or the entity itself when it is a dataset.
    let dataset = q::resource_package_id(ctx.db().await?, entity_id)
        .await?
        .unwrap_or_else(|| entity_id.to_string());
    let Some(row) = ctx.package_row(&dataset).await? else {
        return Ok(());
    };
    if authz::can_read_package(ctx, &row).await? {
        Ok(())
    } else {
        let what = named.map_or_else(
            || "this task status".to_string(),
            |n| format!("the task status of {n}"),
        );
        Err(not_authorized(format!(
            "User {} not authorized to read {what}",
            ctx.user_name()
        )))
    }
}

action_params! {
    /// Return the task statuses of a resource (CKAN 2.7's action, from the days of its celery
    /// queue). There is no celery here: `status`, `date_done` and `traceback` are null.
    ///
    /// :param id: the resource's id
    /// :rtype: list of dictionaries
    pub struct ResourceStatusShowParams {
        /// the resource's id (required; checked after the access check)
        id: Later<PyStr>,
    }
}

pub(crate) async fn resource_status_show(
    ctx: &mut ActionContext,
    p: ResourceStatusShowParams,
) -> CkanResult<Value> {
    ctx.check_access("resource_status_show", &p.to_params())
        .await?;
    let id = non_empty(&p.id).ok_or_else(|| missing("id"))?;
    check_entity_readable(ctx, &id, Some(&id)).await?;
    let rows = q::task_statuses_of(ctx.db().await?, &id).await?;
    Ok(Value::Array(
        rows.iter()
            .map(|t| {
                let mut m = Map::new();
                m.insert("status".into(), Value::Null);
                m.insert("date_done".into(), Value::Null);
                m.insert("traceback".into(), Value::Null);
                if let Value::Object(d) = task_status_dict(t) {
                    m.extend(d);
                }
                Value::Object(m)
            })
            .collect(),
    ))
}
