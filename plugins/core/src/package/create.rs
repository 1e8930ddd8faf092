use catalog_framework::prelude::*;
use catalog_framework::store::time::now_iso;

use super::{
    claim_name, dataset_dict_params, keep_custom_fields, load, plugin_data_input,
    prepare_resources, prepare_tags, resolve_groups, resolve_owner_org, schema_validate, show_row,
    write, write_plugin_data,
};
use crate::ids::new_id;

dataset_dict_params! {
    /// Create a new dataset (package). Returns the created dataset.
    ///
    /// The parameters are the dataset dict (`name`, `title`, `owner_org`, `resources`, `tags`,
    /// `extras`, `groups` …), validated by the dataset type's schema.
    PackageCreateParams {
        /// the new dataset's id (a UUID; sysadmins only)
        id: crate::InDict<String>,
    }
}

pub(crate) async fn package_create(
    ctx: &mut ActionContext,
    p: PackageCreateParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    let mut errs = ValidationBuilder::default();
    catalog_framework::validators::check_type(p.get("type"), &mut errs);
    errs.finish()?;
    ctx.check_access("package_create", &p).await?;
    let dataset_type = p
        .get("type")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or("dataset")
        .to_string();
    let mut data = p.clone();
    schema_validate(ctx, &dataset_type, &mut data, SchemaOp::Create)?;
    let mut errs = ValidationBuilder::default();
    let id = match data.get("id").and_then(Value::as_str) {
        Some(given) if !ctx.is_sysadmin() && !ctx.ignore_auth => {
            let _ = given;
            errs.push("id", "The input field id was not expected.");
            new_id()
        }
        Some(given) => {
            let norm = catalog_framework::validators::uuid_parse(given).unwrap_or_default();
            if ctx.package_row(&norm).await?.is_some_and(|r| r.id == norm) {
                errs.push("id", "Dataset id already exists");
            }
            norm
        }
        None => new_id(),
    };
    let name = data
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    claim_name(ctx, &name, &id, &mut errs).await?;
    let owner_org = resolve_owner_org(ctx, data.get("owner_org"), None, &mut errs).await?;
    let private = data
        .get("private")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if private && owner_org.is_none() {
        errs.push("private", "Datasets with no organization can't be private.");
    }
    let input_resources = data
        .get("resources")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let resources = prepare_resources(ctx, &id, &input_resources, &[], &mut errs).await?;
    let input_tags = data
        .get("tags")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let tags = prepare_tags(ctx, &input_tags, &mut errs).await?;
    let plugin_data = plugin_data_input(ctx, &p, &mut errs)?;
    errs.finish()?;
    let groups = match data.get("groups") {
        Some(g) => Some(resolve_groups(ctx, g).await?),
        None => None,
    };
    let now = now_iso();
    let state = if ctx.is_sysadmin() || ctx.ignore_auth || ctx.allow_state_change {
        data.get("state")
            .and_then(Value::as_str)
            .unwrap_or("active")
            .to_string()
    } else {
        "active".to_string()
    };
    let modified = match data.get("metadata_modified").and_then(Value::as_str) {
        Some(m) if ctx.is_sysadmin() => m.to_string(),
        _ => now.clone(),
    };
    let mut doc = Map::new();
    for f in catalog_framework::validators::STRING_FIELDS {
        doc.insert((*f).into(), data.get(*f).cloned().unwrap_or(Value::Null));
    }
    doc.insert("type".into(), json!(dataset_type));
    doc.insert("id".into(), json!(id));
    doc.insert("name".into(), json!(name));
    doc.insert("state".into(), json!(state));
    doc.insert("private".into(), json!(private));
    doc.insert("owner_org".into(), json!(owner_org));
    doc.insert("creator_user_id".into(), json!(ctx.user_id()));
    doc.insert("metadata_created".into(), json!(now));
    doc.insert("metadata_modified".into(), json!(modified));
    doc.insert(
        "extras".into(),
        data.get("extras").cloned().unwrap_or(json!([])),
    );
    doc.insert("tags".into(), Value::Array(tags));
    doc.insert("resources".into(), Value::Array(resources));
    keep_custom_fields(&data, &mut doc);
    write(ctx, &doc, None, groups).await?;
    write_plugin_data(ctx, &id, plugin_data.as_deref()).await?;
    // The answer is read back after the commit, beside the next writer.
    ctx.commit_before_answer().await?;
    let row = load(ctx, &id).await?;
    show_row(ctx, &row).await
}
