use catalog_framework::params::req_str;
use catalog_framework::prelude::*;

use super::{
    find_resource, guess_mimetype, resource_dict_params, store_file, stored_resources, take_upload,
    update_resources,
};

resource_dict_params! {
    /// Add a resource to a dataset. `upload` in a multipart body stores a file.
    ///
    /// The parameters are the resource dict with its `package_id`, validated by the dataset
    /// type's schema.
    ResourceCreateParams {
        /// the id or name of the dataset to add the resource to
        package_id: crate::InDict<String>,
    }
}

pub(crate) async fn resource_create(
    ctx: &mut ActionContext,
    p: ResourceCreateParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    let package_id = req_str(&p, "package_id")?;
    let (pkg_id, mut resources) = stored_resources(ctx, &package_id).await?;
    let mut auth = Params::new();
    auth.insert("package_id".into(), json!(pkg_id));
    ctx.check_access("resource_create", &auth).await?;
    let mut res = p.clone();
    res.remove("package_id");
    let given_url = res.get("url").and_then(Value::as_str).map(str::to_string);
    let upload = take_upload(ctx, &mut res).await?;
    guess_mimetype(&mut res, given_url.as_deref(), upload.as_ref());
    res.entry("url").or_insert(json!(""));
    let new_id = match res.get("id").and_then(Value::as_str) {
        Some(id) => catalog_framework::validators::uuid_parse(id).unwrap_or_else(|| id.to_string()),
        None => crate::ids::new_id(),
    };
    res.insert("id".into(), json!(new_id));
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
    resources.push(Value::Object(res));
    let shown = update_resources(ctx, &pkg_id, resources)
        .await
        .map_err(last_resource_error)?;
    if let Some((_, up)) = upload {
        store_file(&ctx.app.files, &new_id, &up).await?;
    }
    let created = find_resource(&shown, &new_id)?;
    ctx.emit(
        Entity::Resource,
        Change::Created,
        &new_id,
        None,
        Some(created.clone()),
    );
    Ok(created)
}

/// CKAN re-raises only the new resource's errors from the inner package_update.
fn last_resource_error(e: CkanError) -> CkanError {
    if e.kind != ErrorKind::Validation {
        return e;
    }
    match e
        .body
        .get("resources")
        .and_then(Value::as_array)
        .and_then(|a| a.last())
        .and_then(Value::as_object)
    {
        Some(last) if !last.is_empty() => CkanError {
            kind: ErrorKind::Validation,
            body: last.clone(),
        },
        _ => e,
    }
}
