use catalog_framework::prelude::*;

use super::{stored_resources, update_resources};

action_params! {
    /// Reorder the resources of a dataset.
    pub struct PackageResourceReorderParams {
        /// the id or name of the dataset
        id: String,
        /// the ids of the resources, in their new order (the others follow them)
        order: Option<Value>,
    }
}

pub(crate) async fn package_resource_reorder(
    ctx: &mut ActionContext,
    p: PackageResourceReorderParams,
) -> CkanResult<Value> {
    let id = p.id;
    let order = match &p.order {
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .collect::<Vec<_>>(),
        _ => return Err(validation_message("Must be a list of resource")),
    };
    let unique: std::collections::HashSet<&String> = order.iter().collect();
    if unique.len() != order.len() {
        return Err(validation_message("Must supply unique resource_ids"));
    }
    let (row, resources) = stored_resources(ctx, &id).await?;
    let mut ordered = Vec::new();
    for rid in &order {
        let r = resources
            .iter()
            .find(|r| r["id"] == json!(rid))
            .ok_or_else(|| validation_message(format!("resource_id {rid} can not be found")))?;
        ordered.push(r.clone());
    }
    for r in &resources {
        if !order.iter().any(|o| r["id"] == json!(o)) {
            ordered.push(r.clone());
        }
    }
    let all: Vec<Value> = ordered.iter().map(|r| r["id"].clone()).collect();
    update_resources(ctx, row, ordered).await?;
    Ok(json!({"id": id, "order": all}))
}
