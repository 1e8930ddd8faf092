use catalog_framework::prelude::*;
use catalog_framework::store;
use catalog_framework::store::time::now_iso;

use super::write;

/// The parameters of the three bulk updates; each action's struct gives its help text.
macro_rules! bulk_params {
    ($($(#[doc = $doc:literal])* $name:ident;)*) => {$(
        action_params! {
            $(#[doc = $doc])*
            pub struct $name {
                /// the ids of the datasets (others of the organization are left alone)
                datasets: Vec<String>,
                /// the id or name of their organization
                org_id: String,
            }
        }
        impl From<$name> for Bulk {
            fn from(p: $name) -> Bulk {
                Bulk { datasets: p.datasets, org_id: p.org_id, rest: p.__extras }
            }
        }
    )*};
}

struct Bulk {
    datasets: Vec<String>,
    org_id: String,
    rest: Params,
}

bulk_params! {
    /// Make datasets of an organization private.
    BulkUpdatePrivateParams;
    /// Make datasets of an organization public.
    BulkUpdatePublicParams;
    /// Delete datasets of an organization.
    BulkUpdateDeleteParams;
}

async fn bulk(ctx: &mut ActionContext, p: Bulk, action: &str, patch: Params) -> CkanResult<Value> {
    let org = ctx
        .group_row(&p.org_id)
        .await?
        .ok_or_else(|| not_found("Organization was not found."))?;
    let mut auth = p.rest;
    auth.insert("datasets".into(), json!(p.datasets));
    auth.insert("org_id".into(), json!(org.id));
    ctx.check_access(action, &auth).await?;
    for id in p.datasets {
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
        write(ctx, &doc, Some(&row.data), None).await?;
        if doc["state"] == "deleted" {
            store::clear_package_memberships(ctx.db().await?, &row.id).await?;
        }
    }
    Ok(Value::Null)
}

pub(crate) async fn bulk_update_private(
    ctx: &mut ActionContext,
    p: BulkUpdatePrivateParams,
) -> CkanResult<Value> {
    let patch = json!({"private": true})
        .as_object()
        .cloned()
        .unwrap_or_default();
    bulk(ctx, p.into(), "bulk_update_private", patch).await
}

pub(crate) async fn bulk_update_public(
    ctx: &mut ActionContext,
    p: BulkUpdatePublicParams,
) -> CkanResult<Value> {
    let patch = json!({"private": false})
        .as_object()
        .cloned()
        .unwrap_or_default();
    bulk(ctx, p.into(), "bulk_update_public", patch).await
}

pub(crate) async fn bulk_update_delete(
    ctx: &mut ActionContext,
    p: BulkUpdateDeleteParams,
) -> CkanResult<Value> {
    let patch = json!({"state": "deleted"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    bulk(ctx, p.into(), "bulk_update_delete", patch).await
}
