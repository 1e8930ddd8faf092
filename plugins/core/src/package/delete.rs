use catalog_framework::prelude::*;

action_params! {
    /// Delete a dataset (its state becomes `deleted`).
    pub struct PackageDeleteParams {
        /// the id or name of the dataset
        id: String,
    }
}

pub async fn package_delete(ctx: &mut ActionContext, p: PackageDeleteParams) -> CkanResult<Value> {
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
    doc.insert("metadata_modified".into(), json!(now_iso()));
    let conn = ctx.db().await?;
    sqlx::query(
        "UPDATE package SET state = 'deleted', metadata_modified = $2, data = $3 WHERE id = $1",
    )
    .bind(&row.id)
    .bind(doc["metadata_modified"].as_str())
    .bind(serde_json::to_string(&doc)?)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "UPDATE member SET state = 'deleted' WHERE table_name = 'package' AND table_id = $1",
    )
    .bind(&row.id)
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM collaborator WHERE package_id = $1")
        .bind(&row.id)
        .execute(&mut *conn)
        .await?;
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

pub async fn dataset_purge(ctx: &mut ActionContext, p: DatasetPurgeParams) -> CkanResult<Value> {
    let r = p.id;
    let row = ctx
        .package_for_update(&r)
        .await?
        .ok_or_else(|| not_found("Dataset was not found"))?;
    let mut auth = p.__extras;
    auth.insert("id".into(), json!(r));
    ctx.check_access("dataset_purge", &auth).await?;
    let conn = ctx.db().await?;
    for sql in [
        "DELETE FROM member WHERE table_name = 'package' AND table_id = $1",
        "DELETE FROM collaborator WHERE package_id = $1",
        "DELETE FROM package_tag WHERE package_id = $1",
        "DELETE FROM resource WHERE package_id = $1",
        "DELETE FROM package WHERE id = $1",
    ] {
        sqlx::query(sql).bind(&row.id).execute(&mut *conn).await?;
    }
    if ctx.wants_events() {
        let before = serde_json::from_str(&row.data)?;
        ctx.emit(Entity::Package, Change::Purged, &row.id, Some(before), None);
    }
    Ok(Value::Null)
}
