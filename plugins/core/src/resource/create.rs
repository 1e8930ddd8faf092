use catalog_framework::params::req_str;
use catalog_framework::prelude::*;

use super::{
    guess_mimetype, resource_dict_params, resource_slot_error, shown_resource, store_file,
    stored_resources, take_upload, update_resources,
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
    let (row, mut resources) = stored_resources(ctx, &package_id).await?;
    let pkg_id = row.id.clone();
    let mut auth = Params::new();
    auth.insert("package_id".into(), json!(pkg_id));
    ctx.check_access("resource_create", &auth).await?;
    let mut res = p.clone();
    res.remove("package_id");
    let given_url = res.get("url").and_then(Value::as_str).map(str::to_string);
    let upload = take_upload(ctx, &mut res).await?;
    guess_mimetype(&mut res, given_url.as_deref(), upload.as_ref());
    res.entry("url").or_insert(json!(""));
    // A given id is checked by package_update (a valid UUID no other dataset's resource has);
    // without one, package_update gives the new resource its id.
    if let Some(id) = res.get("id").and_then(Value::as_str) {
        let id = catalog_framework::validators::uuid_parse(id).unwrap_or_else(|| id.to_string());
        res.insert("id".into(), json!(id));
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
    resources.push(Value::Object(res));
    let doc = update_resources(ctx, row, resources)
        .await
        .map_err(|e| resource_slot_error(e, None))?;
    // The new resource is the last of the dataset's.
    let new_id = doc
        .get("resources")
        .and_then(Value::as_array)
        .and_then(|rs| rs.last())
        .and_then(|r| r.get("id"))
        .and_then(Value::as_str)
        .ok_or_else(|| internal("the created resource is missing from its dataset"))?
        .to_string();
    if let Some((_, up)) = upload {
        store_file(&ctx.app.files, &new_id, &up).await?;
    }
    let created = shown_resource(ctx, &pkg_id, &new_id).await?;
    ctx.emit(
        Entity::Resource,
        Change::Created,
        &new_id,
        None,
        Some(created.clone()),
    );
    Ok(created)
}
