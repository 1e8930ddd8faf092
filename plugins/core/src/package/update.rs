use catalog_framework::params::req_str;
use catalog_framework::prelude::*;
use catalog_framework::store::time::now_iso;

use super::{
    claim_name, dataset_dict_params, keep_custom_fields, load, plugin_data_input,
    prepare_resources, prepare_tags, resolve_groups, resolve_owner_org, schema_validate, show_row,
    write, write_plugin_data,
};

/// Fields `package_update` clears when absent (CKAN's "remove if not provided").
const CLEARED_ON_UPDATE: &[&str] = &[
    "title",
    "version",
    "url",
    "author",
    "author_email",
    "maintainer",
    "maintainer_email",
    "notes",
    "license_id",
];

dataset_dict_params! {
    /// Update a dataset (package), replacing its fields. Absent tags and extras are removed;
    /// absent resources and groups are kept.
    ///
    /// The parameters are the dataset dict with its `id` or `name`, validated by the dataset
    /// type's schema.
    PackageUpdateParams {
        /// the id or name of the dataset (else `name` names it)
        id: crate::InDict<String>,
    }
}

/// `package_update` with replace semantics (spec/ckan-write-auth-legacy.md §1.4).
pub(crate) async fn package_update(
    ctx: &mut ActionContext,
    p: PackageUpdateParams,
) -> CkanResult<Value> {
    update_and_show(ctx, p.__extras, true).await
}

/// package_update on a dataset dict (what the resource actions send it), in the caller's
/// transaction.
pub(crate) async fn update_dict(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    update_and_show(ctx, p, false).await
}

/// package_update on a dataset dict; `commit_first`: the dataset is read back for the answer
/// after the commit when the caller is the top-level action (package_update, package_patch).
async fn update_and_show(
    ctx: &mut ActionContext,
    p: Params,
    commit_first: bool,
) -> CkanResult<Value> {
    let r = match p.get("id").or_else(|| p.get("name")) {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(v) if !v.is_null() && !v.is_string() => {
            return Err(validation().field("id", "Must be a string").build())
        }
        _ => {
            let mut e = ValidationBuilder::default();
            e.set("id", json!("Missing value"));
            return Err(e.build());
        }
    };
    let row = load(ctx, &r).await?;
    let mut auth = p.clone();
    auth.insert("id".into(), json!(row.id));
    ctx.check_access("package_update", &auth).await?;
    let old: Map<String, Value> = serde_json::from_str(&row.data)?;
    let mut data = p.clone();
    data.insert("id".into(), json!(row.id));
    data.remove("type");
    schema_validate(ctx, &row.dataset_type, &mut data, SchemaOp::Update)?;
    let mut errs = ValidationBuilder::default();
    let mut doc = old.clone();
    for f in CLEARED_ON_UPDATE {
        doc.insert((*f).into(), data.get(*f).cloned().unwrap_or(Value::Null));
    }
    if let Some(n) = data.get("name").and_then(Value::as_str) {
        claim_name(ctx, n, &row.id, &mut errs).await?;
        doc.insert("name".into(), json!(n));
    }
    // CKAN's update schema ignores a missing or null `owner_org`: the owner stays.
    if data.get("owner_org").is_some_and(|v| !v.is_null()) {
        let org = resolve_owner_org(ctx, data.get("owner_org"), Some(&row), &mut errs).await?;
        doc.insert("owner_org".into(), json!(org));
    }
    if let Some(pv) = data.get("private") {
        doc.insert("private".into(), pv.clone());
    }
    if doc.get("private").and_then(Value::as_bool).unwrap_or(false)
        && doc.get("owner_org").is_none_or(Value::is_null)
    {
        errs.push("private", "Datasets with no organization can't be private.");
    }
    if let Some(st) = data.get("state").and_then(Value::as_str) {
        // Checked by `schema_validate`.
        doc.insert("state".into(), json!(st));
    }
    doc.insert(
        "extras".into(),
        data.get("extras").cloned().unwrap_or(json!([])),
    );
    let input_tags = data
        .get("tags")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    doc.insert(
        "tags".into(),
        Value::Array(prepare_tags(ctx, &input_tags, &mut errs).await?),
    );
    if let Some(rs) = data.get("resources").and_then(Value::as_array).cloned() {
        let existing = old
            .get("resources")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        doc.insert(
            "resources".into(),
            Value::Array(prepare_resources(ctx, &row.id, &rs, &existing, &mut errs).await?),
        );
    }
    let plugin_data = plugin_data_input(ctx, &p, &mut errs)?;
    errs.finish()?;
    let groups = match data.get("groups") {
        Some(g) => Some(resolve_groups(ctx, g).await?),
        None => None,
    };
    keep_custom_fields(&data, &mut doc);
    let mut compare_old = old.clone();
    compare_old.remove("metadata_modified");
    let mut compare_new = doc.clone();
    compare_new.remove("metadata_modified");
    let plugin_data_changed = match &plugin_data {
        Some(new) => {
            catalog_framework::store::package_plugin_data(ctx.db().await?, &row.id).await?
                != Some(new.clone())
        }
        None => false,
    };
    let changed = compare_old != compare_new || groups.is_some() || plugin_data_changed;
    let modified = match data.get("metadata_modified").and_then(Value::as_str) {
        Some(m) if ctx.is_sysadmin() => m.to_string(),
        _ if changed => now_iso(),
        _ => row.metadata_modified.clone(),
    };
    doc.insert("metadata_modified".into(), json!(modified));
    write(ctx, &doc, false, groups).await?;
    write_plugin_data(ctx, &row.id, plugin_data.as_deref()).await?;
    if commit_first {
        ctx.commit_before_answer().await?;
    }
    let row = load(ctx, &row.id).await?;
    show_row(ctx, &row).await
}

dataset_dict_params! {
    /// Patch a dataset: only the given fields change.
    ///
    /// The parameters are the dataset's `id` or `name` and the fields to change.
    PackagePatchParams {
        /// the id or name of the dataset (else `name` names it)
        id: crate::InDict<String>,
    }
}

pub(crate) async fn package_patch(
    ctx: &mut ActionContext,
    p: PackagePatchParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    if ctx.user.is_none() && !ctx.ignore_auth {
        return Err(not_authorized(
            "Action package_patch requires an authenticated user",
        ));
    }
    let r = req_str(&p, "id")?;
    let row = load(ctx, &r).await?;
    let mut auth = Params::new();
    auth.insert("id".into(), json!(row.id));
    ctx.check_access("package_update", &auth).await?;
    let current = show_row(ctx, &row).await?;
    let mut merged = current.as_object().cloned().unwrap_or_default();
    merged.remove("metadata_modified");
    for (k, v) in p {
        merged.insert(k, v);
    }
    merged.insert("id".into(), json!(row.id));
    update_and_show(ctx, merged, true).await
}
