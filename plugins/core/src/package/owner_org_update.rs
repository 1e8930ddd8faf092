use catalog_framework::prelude::*;

use super::{load, write};

action_params! {
    /// Move a dataset to another organization. Sysadmins only.
    pub struct PackageOwnerOrgUpdateParams {
        /// the id or name of the dataset
        id: String,
        /// the id or name of the organization; empty or absent takes the dataset out of its
        /// organization
        organization_id: Option<String>,
    }
}

pub(crate) async fn package_owner_org_update(
    ctx: &mut ActionContext,
    p: PackageOwnerOrgUpdateParams,
) -> CkanResult<Value> {
    ctx.check_access("package_owner_org_update", &p.to_params())
        .await?;
    let row = load(ctx, &p.id).await?;
    let org = match p.organization_id.as_deref().filter(|s| !s.is_empty()) {
        None => None,
        Some(o) => Some(
            ctx.group_row(o)
                .await?
                .filter(|g| g.is_organization)
                .ok_or_else(|| not_found("Organization was not found."))?
                .id,
        ),
    };
    let mut doc: Map<String, Value> = serde_json::from_str(&row.data)?;
    doc.insert("owner_org".into(), json!(org));
    write(ctx, &doc, Some(&row.data), None).await?;
    Ok(Value::Null)
}
