//! ckanext-scheming's six actions (ckanext/scheming/logic.py): `scheming_dataset_schema_list`
//! / `_show`, and the same for groups and organizations. Anyone may call them; they read the
//! schemas loaded at start-up.

use catalog_framework::prelude::*;
use catalog_framework::typed::{PyStr, PyTruthy};

use crate::schema::{Kind, SchemaSet};
use crate::Scheming;

/// The loaded schemas of a kind (none when the plugin has no schema files of it).
fn set(ctx: &ActionContext, kind: Kind) -> Option<&SchemaSet> {
    let s = ctx.app.extension::<Scheming>()?;
    Some(match kind {
        Kind::Dataset => &s.datasets,
        Kind::Group => &s.groups,
        Kind::Organization => &s.organizations,
    })
}

fn list(ctx: &ActionContext, kind: Kind) -> Value {
    json!(set(ctx, kind).map(|s| s.order.clone()).unwrap_or_default())
}

fn show(ctx: &ActionContext, kind: Kind, p: ShowParams) -> CkanResult<Value> {
    let Some(PyStr { text: t, .. }) = p.r#type else {
        return Err(missing("type"));
    };
    // `data_dict.get('expanded', True)`, read as Python reads it: a GET's "false" is true.
    let expanded = p.expanded.is_none_or(|e| e.0);
    let schema = set(ctx, kind)
        .and_then(|s| s.by_type.get(&t))
        .ok_or_else(|| not_found(""))?;
    Ok(Value::Object(if expanded {
        schema.expanded.clone()
    } else {
        schema.raw.clone()
    }))
}

action_params! {
    /// Return a list of the types customized with the scheming extension.
    pub struct ListParams {}
}

action_params! {
    /// Return the scheming schema of a type.
    pub struct ShowParams {
        /// the type
        r#type: Option<PyStr> as "type",
        /// True to expand presets (default)
        expanded: Option<PyTruthy>,
    }
}

async fn dataset_list(ctx: &mut ActionContext, _: ListParams) -> CkanResult<Value> {
    Ok(list(ctx, Kind::Dataset))
}
async fn dataset_show(ctx: &mut ActionContext, p: ShowParams) -> CkanResult<Value> {
    show(ctx, Kind::Dataset, p)
}
async fn group_list(ctx: &mut ActionContext, _: ListParams) -> CkanResult<Value> {
    Ok(list(ctx, Kind::Group))
}
async fn group_show(ctx: &mut ActionContext, p: ShowParams) -> CkanResult<Value> {
    show(ctx, Kind::Group, p)
}
async fn organization_list(ctx: &mut ActionContext, _: ListParams) -> CkanResult<Value> {
    Ok(list(ctx, Kind::Organization))
}
async fn organization_show(ctx: &mut ActionContext, p: ShowParams) -> CkanResult<Value> {
    show(ctx, Kind::Organization, p)
}

/// Anyone may read the schemas.
struct Public;

#[async_trait]
impl AuthFunction for Public {
    fn allow_anonymous(&self) -> bool {
        true
    }
    async fn check(&self, _: &mut ActionContext, _: &Params) -> CkanResult<()> {
        Ok(())
    }
}

register_typed_actions! {
    read scheming_dataset_schema_list(ListParams) => dataset_list, auth = Public;
    read scheming_dataset_schema_show(ShowParams) => dataset_show, auth = Public;
    read scheming_group_schema_list(ListParams) => group_list, auth = Public;
    read scheming_group_schema_show(ShowParams) => group_show, auth = Public;
    read scheming_organization_schema_list(ListParams) => organization_list, auth = Public;
    read scheming_organization_schema_show(ShowParams) => organization_show, auth = Public;
}
