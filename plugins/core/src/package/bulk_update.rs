use catalog_framework::prelude::*;
use catalog_framework::store;

use super::write;

async fn bulk(
    ctx: &mut ActionContext,
    p: Params,
    action: &str,
    patch: Params,
) -> CkanResult<Value> {
    let datasets = str_list(&p, "datasets")?.ok_or_else(|| missing("datasets"))?;
    let org_id = req_str(&p, "org_id")?;
    let org = ctx
        .group_row(&org_id)
        .await?
        .ok_or_else(|| not_found("Organization was not found."))?;
    let mut auth = p.clone();
    auth.insert("org_id".into(), json!(org.id));
    ctx.check_access(action, &auth).await?;
    for id in datasets {
        let row = ctx.package_for_update(&id).await?;
        let Some(row) =
            row.filter(|r| r.id == id && r.owner_org.as_deref() == Some(org.id.as_str()))
        else {
            continue;
        };
        let mut doc: Map<String, Value> = serde_json::from_str(&row.data)?;
        for (k, v) in &patch {
            doc.insert(k.clone(), v.clone());
        }
        doc.insert("metadata_modified".into(), json!(now_iso()));
        write(ctx, &doc, false, None).await?;
        if doc["state"] == "deleted" {
            store::clear_package_memberships(ctx.db().await?, &row.id).await?;
        }
    }
    Ok(Value::Null)
}

pub async fn bulk_update_private(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let patch = json!({"private": true})
        .as_object()
        .cloned()
        .unwrap_or_default();
    bulk(ctx, p, "bulk_update_private", patch).await
}

pub async fn bulk_update_public(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let patch = json!({"private": false})
        .as_object()
        .cloned()
        .unwrap_or_default();
    bulk(ctx, p, "bulk_update_public", patch).await
}

pub async fn bulk_update_delete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let patch = json!({"state": "deleted"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    bulk(ctx, p, "bulk_update_delete", patch).await
}
