use catalog_framework::prelude::*;

use super::show_row;

action_params! {
    /// Return the metadata of a dataset (package) and its resources.
    ///
    /// :param id: the id or name of the dataset
    /// :rtype: dictionary
    pub struct PackageShowParams {
        /// the id or name of the dataset
        id: Option<String>,
        /// the id or name of the dataset, when `id` is not given
        name_or_id: Option<String>,
        /// accepted for CKAN clients; each dataset type has one schema here
        use_default_schema: Option<Value>,
        /// accepted for CKAN clients; no tracking is recorded
        include_tracking: Option<Value>,
    }
}

pub async fn package_show(ctx: &mut ActionContext, p: PackageShowParams) -> CkanResult<Value> {
    let id = p.id.or(p.name_or_id).ok_or_else(|| missing("name_or_id"))?;
    let cacheable = !ctx.in_write();
    let generation = ctx.app.package_cache.generation();
    let cached = if cacheable {
        ctx.app.package_cache.get(&id)
    } else {
        None
    };
    let row = match &cached {
        Some(hit) => hit.row.clone(),
        None => ctx.package_row(&id).await?.ok_or_else(|| not_found(""))?,
    };
    let mut auth = Params::new();
    auth.insert("id".into(), json!(row.id));
    ctx.check_access("package_show", &auth).await?;
    if let Some(hit) = cached {
        return Ok(hit.dict.clone());
    }
    let dict = show_row(ctx, &row).await?;
    if cacheable {
        ctx.app.package_cache.put(
            generation,
            catalog_framework::store::CachedPackage {
                row,
                dict: dict.clone(),
            },
        );
    }
    Ok(dict)
}
