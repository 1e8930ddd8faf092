use catalog_framework::params::req_str;
use catalog_framework::prelude::*;

use super::{
    guess_mimetype, resource_dict_params, resource_package, resource_slot_error, shown_resource,
    store_file, stored_resources, take_upload, update_resources,
};

async fn resource_update_inner(
    ctx: &mut ActionContext,
    p: Params,
    merge: bool,
) -> CkanResult<Value> {
    let id = req_str(&p, "id")?;
    let pkg = resource_package(ctx, &id)
        .await
        .map_err(|_| not_found("Resource was not found."))?;
    let (row, mut resources) = stored_resources(ctx, &pkg).await?;
    let pkg_id = row.id.clone();
    let mut auth = Params::new();
    auth.insert("id".into(), json!(id));
    auth.insert("package_id".into(), json!(pkg_id));
    ctx.check_access("resource_update", &auth).await?;
    let idx = resources
        .iter()
        .position(|r| r["id"] == json!(id))
        .ok_or_else(|| not_found("Resource was not found."))?;
    let old = resources[idx].as_object().cloned().unwrap_or_default();
    let mut res = if merge {
        let mut m = old.clone();
        m.retain(|_, v| !v.is_null());
        m
    } else {
        Map::new()
    };
    for (k, v) in p {
        res.insert(k, v);
    }
    res.remove("package_id");
    if !merge {
        // Columns that keep their value when absent on update.
        for k in [
            "name",
            "format",
            "hash",
            "size",
            "created",
            "last_modified",
            "cache_url",
            "url_type",
            "datastore_active",
        ] {
            if let (false, Some(v)) = (res.contains_key(k), old.get(k)) {
                res.insert(k.into(), v.clone());
            }
        }
    }
    let given_url = res.get("url").and_then(Value::as_str).map(str::to_string);
    let upload = take_upload(ctx, &mut res).await?;
    if !merge {
        guess_mimetype(&mut res, given_url.as_deref(), upload.as_ref());
    }
    let max = ctx.config().catalog.max_field_chars;
    let res = catalog_framework::validators::validate_resource(&Value::Object(res), max).map_err(
        |e| {
            let mut b = ValidationBuilder::default();
            for (k, v) in e {
                b.set(&k, v);
            }
            b.build()
        },
    )?;
    resources[idx] = Value::Object(res);
    update_resources(ctx, row, resources)
        .await
        .map_err(|e| resource_slot_error(e, Some(idx)))?;
    if let Some((_, up)) = upload {
        store_file(&ctx.app.files, &id, &up).await?;
    }
    let updated = shown_resource(ctx, &pkg_id, &id).await?;
    ctx.emit(
        Entity::Resource,
        Change::Updated,
        &id,
        Some(Value::Object(old)),
        Some(updated.clone()),
    );
    Ok(updated)
}

resource_dict_params! {
    /// Update a resource, replacing its fields.
    ///
    /// The parameters are the resource dict with its `id`.
    ResourceUpdateParams {
        /// the resource's id
        id: crate::InDict<String>,
    }
}

pub(crate) async fn resource_update(
    ctx: &mut ActionContext,
    p: ResourceUpdateParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    resource_update_inner(ctx, p, false).await
}

resource_dict_params! {
    /// Patch a resource: only the given fields change.
    ///
    /// The parameters are the resource's `id` and the fields to change.
    ResourcePatchParams {
        /// the resource's id
        id: crate::InDict<String>,
    }
}

pub(crate) async fn resource_patch(
    ctx: &mut ActionContext,
    p: ResourcePatchParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    resource_update_inner(ctx, p, true).await
}
