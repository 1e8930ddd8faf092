use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::Later;

use super::{capacity_filter, enabled};
use crate::shapes::Scalar;

action_params! {
    /// Return the collaborators of a dataset.
    pub struct PackageCollaboratorListParams {
        /// the id or name of the dataset
        id: String,
        /// only the collaborators with this capacity
        capacity: Later<Scalar>,
    }
}

pub(crate) async fn package_collaborator_list(
    ctx: &mut ActionContext,
    p: PackageCollaboratorListParams,
) -> CkanResult<Value> {
    let pkg = ctx
        .package_row(&p.id)
        .await?
        .ok_or_else(|| not_found("Package not found"))?;
    let mut auth = p.to_params();
    auth.insert("id".into(), json!(pkg.id));
    ctx.check_access("package_collaborator_list", &auth).await?;
    enabled(ctx)?;
    let capacity = capacity_filter(ctx, &p.capacity)?;
    let rows = q::package_collaborators(ctx.db().await?, &pkg.id).await?;
    Ok(Value::Array(
        rows.iter()
            .filter(|r| capacity.as_ref().is_none_or(|c| *c == r.capacity))
            .map(|r| json!({"package_id": r.package_id, "user_id": r.user_id, "capacity": r.capacity, "modified": r.modified.replacen('T', " ", 1)}))
            .collect(),
    ))
}
