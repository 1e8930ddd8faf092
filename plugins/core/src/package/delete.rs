use catalog_framework::prelude::*;
use catalog_framework::store;
use catalog_framework::store::time::now_iso;

action_params! {
    /// Delete a dataset (its state becomes `deleted`).
    pub struct PackageDeleteParams {
        /// the id or name of the dataset
        id: String,
    }
}

pub(crate) async fn package_delete(
    ctx: &mut ActionContext,
    p: PackageDeleteParams,
) -> CkanResult<Value> {
    let r = p.id;
    let row = ctx
        .package_for_update(&r)
        .await?
        .ok_or_else(|| not_found(""))?;
    let mut auth = Params::new();
    auth.insert("id".into(), json!(row.id));
    ctx.check_access("package_delete", &auth).await?;
    let mut doc: Map<String, Value> = serde_json::from_str(&row.data)?;
    doc.insert("state".into(), json!("deleted"));
    let modified = now_iso();
    doc.insert("metadata_modified".into(), json!(modified));
    let data = serde_json::to_string(&doc)?;
    store::mark_package_deleted(ctx.db().await?, &row.id, &modified, &data).await?;
    if ctx.wants_events() {
        let before = serde_json::from_str(&row.data)?;
        ctx.emit(
            Entity::Package,
            Change::Deleted,
            &row.id,
            Some(before),
            Some(Value::Object(doc)),
        );
    }
    Ok(Value::Null)
}

action_params! {
    /// Purge a dataset: remove it and everything it owns permanently. Sysadmins only.
    pub struct DatasetPurgeParams {
        /// the id or name of the dataset
        id: String,
    }
}

pub(crate) async fn dataset_purge(
    ctx: &mut ActionContext,
    p: DatasetPurgeParams,
) -> CkanResult<Value> {
    let row = ctx
        .package_for_update(&p.id)
        .await?
        .ok_or_else(|| not_found("Dataset was not found"))?;
    ctx.check_access("dataset_purge", &p.to_params()).await?;
    let related: Vec<String> = store::relationships_of(ctx.db().await?, &row.id)
        .await?
        .into_iter()
        .flat_map(|r| [r.subject_package_id, r.object_package_id])
        .filter(|other| *other != row.id)
        .collect();
    let before: Value = serde_json::from_str(&row.data)?;
    let removed = store::purge_package(ctx.db().await?, &row.id).await?;
    // Their files go once the purge has committed (a job enqueued in this transaction).
    let with_files = crate::resource::purge_files::may_have_files(&before, removed);
    if !with_files.is_empty() {
        crate::resource::purge_files::enqueue(ctx, &row.id, with_files).await?;
    }
    // The datasets it was related to lose the relationship from their documents too.
    for other in related {
        crate::relationship::refresh_dataset(ctx, &other, false).await?;
    }
    if ctx.wants_events() {
        ctx.emit(Entity::Package, Change::Purged, &row.id, Some(before), None);
    }
    Ok(Value::Null)
}
