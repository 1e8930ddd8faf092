use catalog_framework::prelude::*;

use super::{resource_package, resources_of};
use crate::package::load;

action_params! {
    /// Return the metadata of a resource.
    pub struct ResourceShowParams {
        /// the resource's id
        id: String,
    }
}

pub(crate) async fn resource_show(
    ctx: &mut ActionContext,
    p: ResourceShowParams,
) -> CkanResult<Value> {
    let id = p.id;
    let pkg = resource_package(ctx, &id).await?;
    let mut auth = Params::new();
    auth.insert("id".into(), json!(id));
    auth.insert("package_id".into(), json!(pkg));
    ctx.check_access("resource_show", &auth).await?;
    let row = load(ctx, &pkg).await?;
    let shown = crate::package::show_row(ctx, &row).await?;
    resources_of(&shown)
        .into_iter()
        .find(|r| r["id"] == json!(id) || r["name"] == json!(id))
        .ok_or_else(|| not_found("Resource was not found."))
}
