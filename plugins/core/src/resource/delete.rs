use catalog_framework::prelude::*;

use super::{resource_package, stored_resources, update_resources};

action_params! {
    /// Delete a resource from its dataset.
    pub struct ResourceDeleteParams {
        /// the id of the resource (or its exact name)
        id: String,
    }
}

pub(crate) async fn resource_delete(
    ctx: &mut ActionContext,
    p: ResourceDeleteParams,
) -> CkanResult<Value> {
    let id = p.id;
    let pkg = resource_package(ctx, &id)
        .await
        .map_err(|_| not_found(""))?;
    let (row, mut resources) = stored_resources(ctx, &pkg).await?;
    let mut auth = Params::new();
    auth.insert("id".into(), json!(id));
    auth.insert("package_id".into(), json!(row.id));
    ctx.check_access("resource_delete", &auth).await?;
    let before = resources.iter().find(|r| r["id"] == json!(id)).cloned();
    resources.retain(|r| r["id"] != json!(id));
    update_resources(ctx, row, resources).await?;
    ctx.emit(Entity::Resource, Change::Deleted, &id, before, None);
    Ok(Value::Null)
}
