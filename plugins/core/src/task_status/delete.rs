use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::{Later, PyStr};

use super::non_empty;

action_params! {
    /// Delete a task status (sysadmins only).
    ///
    /// :param id: the task status's id
    pub struct TaskStatusDeleteParams {
        /// the task status's id
        id: Later<PyStr>,
    }
}

pub(crate) async fn task_status_delete(
    ctx: &mut ActionContext,
    p: TaskStatusDeleteParams,
) -> CkanResult<Value> {
    let id = non_empty(&p.id).ok_or_else(|| missing("id"))?;
    let row = q::task_status_by_id(ctx.db().await?, &id)
        .await?
        .ok_or_else(|| not_found(""))?;
    ctx.check_access("task_status_delete", &p.to_params())
        .await?;
    q::delete_task_status(ctx.db().await?, &row.id).await?;
    Ok(Value::Null)
}
