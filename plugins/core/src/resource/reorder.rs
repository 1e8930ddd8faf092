use std::borrow::Cow;

use catalog_framework::prelude::*;
use catalog_framework::typed::{Later, ParamType};

use super::{stored_resources, update_resources};

const NOT_A_LIST: &str = "Must be a list of resource";

/// `order`: a list of resource ids (an item that is no string counts as `""`); anything else
/// is `Must be a list of resource`, unkeyed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourceOrder(pub(crate) Vec<String>);

impl ParamType for ResourceOrder {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match v {
            Value::Array(a) => Ok(ResourceOrder(
                a.iter()
                    .map(|v| v.as_str().unwrap_or_default().to_string())
                    .collect(),
            )),
            _ => Err(NOT_A_LIST.into()),
        }
    }
    fn schema() -> Value {
        json!({"type": "array", "items": {"type": "string"}})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
    fn refusal(_key: &str, message: Cow<'static, str>) -> CkanError {
        validation_message(message.into_owned())
    }
}

action_params! {
    /// Reorder the resources of a dataset.
    pub struct PackageResourceReorderParams {
        /// the id or name of the dataset
        id: String,
        /// the ids of the resources, in their new order (the others follow them)
        order: Later<ResourceOrder>,
    }
}

pub(crate) async fn package_resource_reorder(
    ctx: &mut ActionContext,
    p: PackageResourceReorderParams,
) -> CkanResult<Value> {
    let id = p.id;
    let order = p
        .order
        .get()?
        .ok_or_else(|| validation_message(NOT_A_LIST))?
        .0;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_order_is_a_list() {
        let order = |v: Value| Later::<ResourceOrder>::new("order", Some(v)).get();
        assert_eq!(
            order(json!(["a", 1])).unwrap().unwrap().0,
            vec!["a".to_string(), String::new()]
        );
        assert_eq!(
            order(json!("a")).unwrap_err().to_error_object(),
            json!({"__type": "Validation Error", "message": NOT_A_LIST})
        );
    }
}
