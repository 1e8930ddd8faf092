//! Who may use the DataStore, as CKAN's `datastore_auth`: writing needs `package_update` on
//! the resource's dataset, reading needs `package_show` on it.

use catalog_framework::prelude::*;

/// Whether the dataset's auth function `action` lets the caller through.
pub(crate) async fn dataset_allows(
    ctx: &mut ActionContext,
    action: &str,
    data: &Params,
) -> CkanResult<bool> {
    let package_id = data
        .get("package_id")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if package_id.is_empty() {
        return Ok(false);
    }
    let mut p = Params::new();
    p.insert("id".into(), json!(package_id));
    match ctx.check_access(action, &p).await {
        Ok(()) => Ok(true),
        Err(e) if e.kind == ErrorKind::Authorization => Ok(false),
        Err(e) => Err(e),
    }
}

fn refuse(ctx: &ActionContext, what: &str, data: &Params) -> CkanError {
    let rid = data
        .get("resource_id")
        .and_then(Value::as_str)
        .unwrap_or_default();
    not_authorized(format!(
        "User {} not authorized to {what} resource {rid}",
        ctx.user_name()
    ))
}

/// `datastore_create`, `_upsert`, `_delete`: CKAN's `datastore_auth` with `resource_update`,
/// which is the dataset's `package_update`.
pub(crate) struct WriteAuth;

#[async_trait]
impl AuthFunction for WriteAuth {
    async fn check(&self, ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
        if dataset_allows(ctx, "package_update", data).await? {
            Ok(())
        } else {
            Err(refuse(ctx, "update", data))
        }
    }
}

/// `datastore_search`, `datastore_info`: read access to the resource's dataset (anonymous
/// visitors read public datasets' rows).
pub(crate) struct ReadAuth;

#[async_trait]
impl AuthFunction for ReadAuth {
    fn allow_anonymous(&self) -> bool {
        true
    }
    async fn check(&self, ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
        if dataset_allows(ctx, "package_show", data).await? {
            Ok(())
        } else {
            Err(refuse(ctx, "read", data))
        }
    }
}
