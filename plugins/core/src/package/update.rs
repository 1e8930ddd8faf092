use catalog_framework::params::{equal_but_key, req_str};
use catalog_framework::prelude::*;
use catalog_framework::store::time::now_iso;
use catalog_framework::store::PackageRow;

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
    let p = p.__extras;
    let row = load(ctx, &dataset_ref(&p)?).await?;
    update_and_show(ctx, row, p).await
}

/// The `id` (else `name`) naming the dataset of a `package_update`.
fn dataset_ref(p: &Params) -> CkanResult<String> {
    match p.get("id").or_else(|| p.get("name")) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(v) if !v.is_null() && !v.is_string() => {
            Err(validation().field("id", "Must be a string").build())
        }
        _ => {
            let mut e = ValidationBuilder::default();
            e.set("id", json!("Missing value"));
            Err(e.build())
        }
    }
}

/// package_update of the dataset `row` (loaded in this call) with the dict `p`; the answer is
/// read back after the commit when the caller is the top-level action (package_update,
/// package_patch).
async fn update_and_show(ctx: &mut ActionContext, row: PackageRow, p: Params) -> CkanResult<Value> {
    let id = row.id.clone();
    update_row(ctx, row, p, false).await?;
    ctx.commit_before_answer().await?;
    let row = load(ctx, &id).await?;
    show_row(ctx, &row).await
}

/// package_update on a dataset dict in the caller's transaction (what the resource actions
/// send it): `row` is the dataset's row the caller loaded in this call, and the dataset counts
/// as changed (a new `metadata_modified`) even when the dict equals it. Returns the stored
/// document written.
pub(crate) async fn update_dict(
    ctx: &mut ActionContext,
    row: PackageRow,
    p: Params,
) -> CkanResult<Map<String, Value>> {
    update_row(ctx, row, p, true).await
}

/// Writes `p` over the dataset `row`; `touch`: count the dataset as changed even when `p`
/// equals it.
async fn update_row(
    ctx: &mut ActionContext,
    row: PackageRow,
    p: Params,
    touch: bool,
) -> CkanResult<Map<String, Value>> {
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
        // The dataset's own name is its own (names are unique): nothing to claim.
        if n != row.name {
            claim_name(ctx, n, &row.id, &mut errs).await?;
        }
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
    // Each test only when the ones before it found no change.
    let changed = touch
        || !equal_but_key(&old, &doc, "metadata_modified")
        || match &groups {
            // The same groups sent back (a package_show's dict) are no change.
            Some(new) => {
                let mut now =
                    catalog_framework::store::package_group_ids(ctx.db().await?, &row.id).await?;
                let mut new = new.clone();
                now.sort();
                new.sort();
                now != new
            }
            None => false,
        }
        || match &plugin_data {
            Some(new) => {
                catalog_framework::store::package_plugin_data(ctx.db().await?, &row.id).await?
                    != Some(new.clone())
            }
            None => false,
        };
    let modified = match data.get("metadata_modified").and_then(Value::as_str) {
        Some(m) if ctx.is_sysadmin() => m.to_string(),
        _ if changed => now_iso(),
        _ => row.metadata_modified.clone(),
    };
    doc.insert("metadata_modified".into(), json!(modified));
    write(ctx, &doc, Some(&row.data), groups).await?;
    write_plugin_data(ctx, &row.id, plugin_data.as_deref()).await?;
    Ok(doc)
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
    update_and_show(ctx, row, merged).await
}
