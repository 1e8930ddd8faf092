use catalog_framework::authz;
use catalog_framework::prelude::*;
use catalog_framework::typed::Truthy;

use super::{add_plugin_data, show_row};
use crate::dictize::package_dict_as;

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
        /// show the dataset with the default schema instead of its type's (custom fields of
        /// a dataset type then appear as stored, e.g. as extras)
        use_default_schema: Option<Truthy>,
        /// include the dataset's `plugin_data` (sysadmins only; ignored for others)
        include_plugin_data: Option<Truthy>,
        /// accepted for CKAN clients and ignored: tracking is CKAN's `tracking` plugin, which
        /// the catalog does not have (docs/API-COMPAT.md)
        include_tracking: Option<Truthy>,
    }
}

/// Answers from the cache (or fills it) with the dict and its JSON text, which the HTTP layer
/// writes out as it is.
pub(crate) async fn package_show(
    ctx: &mut ActionContext,
    p: PackageShowParams,
) -> CkanResult<Answer> {
    let id = p.id.or(p.name_or_id).ok_or_else(|| missing("name_or_id"))?;
    let default_schema = p.use_default_schema.is_some_and(|t| t.0);
    let include_plugin_data = p.include_plugin_data.is_some_and(|t| t.0) && ctx.is_sysadmin();
    let cacheable = !ctx.in_write() && !default_schema && !include_plugin_data;
    let generation = ctx.app.package_cache.generation();
    // A write acknowledged before this call, or the client's last write on another node, may
    // not have reached the cache yet (the indexer invalidates it): read the store until it has.
    let cached = if cacheable && ctx.local_copies_current() {
        ctx.app.package_cache.get(&id)
    } else {
        None
    };
    if let Some(hit) = cached {
        check_read(ctx, &id).await?;
        return Ok(Answer::Serialized(hit));
    }
    let row = ctx.package_row(&id).await?.ok_or_else(|| not_found(""))?;
    check_read(ctx, &id).await?;
    let mut dict = if default_schema {
        package_dict_as(ctx, &row, true).await?
    } else {
        show_row(ctx, &row).await?
    };
    if include_plugin_data {
        add_plugin_data(ctx, &mut dict).await?;
    }
    // A dataset with relationships shows each caller only those to datasets the caller may
    // read, so its dict is the caller's own: never cached.
    let related = authz::has_relationships(&dict);
    authz::hide_unreadable_relationships(ctx, &mut dict).await?;
    if !cacheable || related || !ctx.fill_caches || !ctx.app.package_cache.enabled() {
        return Ok(dict.into());
    }
    let entry = ctx.app.package_cache.put(
        generation,
        catalog_framework::store::CachedPackage::new(row, dict),
    );
    Ok(Answer::Serialized(entry))
}

/// The `package_show` auth check for dataset `id`, as the caller named it (a refusal names
/// what the caller sent, never the id of a dataset asked for by name).
async fn check_read(ctx: &mut ActionContext, id: &str) -> CkanResult<()> {
    let mut auth = Params::new();
    auth.insert("id".into(), json!(id));
    ctx.check_access("package_show", &auth).await
}
