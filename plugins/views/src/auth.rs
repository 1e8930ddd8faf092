//! The views' auth functions (CKAN's `ckan/logic/auth/*` for resource views). They get
//! `package_id` and `resource_id` from the actions, which have looked the resource up, and
//! ask the dataset's own auth functions (`package_update`, `package_delete`, `package_show`),
//! so that whoever may edit, delete or read the dataset may do so with its views.
//! Sysadmins never reach them (the framework's bypass).

use catalog_framework::prelude::*;

/// Declares an auth function that anonymous callers reach (CKAN's messages name them `""`).
macro_rules! view_auth {
    ($( $name:ident => $f:path; )*) => {
        $(
            pub(crate) struct $name;
            #[async_trait]
            impl AuthFunction for $name {
                fn allow_anonymous(&self) -> bool {
                    true
                }
                async fn check(&self, ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
                    $f(ctx, data).await
                }
            }
        )*
    };
}

view_auth! {
    CreateAuth => create;
    EditAuth => edit;
    DeleteAuth => delete;
    ReadAuth => read;
    SysadminAuth => sysadmin_only;
    PackageEditAuth => package_edit;
}

fn key(data: &Params, key: &str) -> String {
    data.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Whether the dataset's auth function `action` lets the caller through.
async fn dataset_allows(
    ctx: &mut ActionContext,
    action: &str,
    package_id: &str,
) -> CkanResult<bool> {
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

fn deny(ctx: &ActionContext, what: &str) -> CkanError {
    not_authorized(format!("User {} not authorized to {what}", ctx.user_name()))
}

/// `resource_view_create`, `resource_create_default_resource_views`: CKAN's `resource_create`.
async fn create(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    let package_id = key(data, "package_id");
    if dataset_allows(ctx, "package_update", &package_id).await? {
        return Ok(());
    }
    Err(deny(
        ctx,
        &format!("create resources on dataset {package_id}"),
    ))
}

/// `resource_view_update`, `resource_view_reorder`: CKAN's `resource_update`.
async fn edit(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    if dataset_allows(ctx, "package_update", &key(data, "package_id")).await? {
        return Ok(());
    }
    Err(deny(
        ctx,
        &format!("edit resource {}", key(data, "resource_id")),
    ))
}

/// `resource_view_delete`: CKAN's `resource_delete`.
async fn delete(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    if dataset_allows(ctx, "package_delete", &key(data, "package_id")).await? {
        return Ok(());
    }
    Err(deny(
        ctx,
        &format!("delete resource {}", key(data, "resource_id")),
    ))
}

/// `resource_view_show`, `resource_view_list`: CKAN's `resource_show`.
async fn read(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    if dataset_allows(ctx, "package_show", &key(data, "package_id")).await? {
        return Ok(());
    }
    Err(deny(
        ctx,
        &format!("read resource {}", key(data, "resource_id")),
    ))
}

/// `package_create_default_resource_views`: CKAN's `package_update`.
async fn package_edit(ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
    let package_id = key(data, "package_id");
    if dataset_allows(ctx, "package_update", &package_id).await? {
        return Ok(());
    }
    Err(deny(ctx, &format!("edit package {package_id}")))
}

/// `resource_view_clear`: sysadmins only, with a bare `Access denied` for everyone else.
async fn sysadmin_only(_ctx: &mut ActionContext, _data: &Params) -> CkanResult<()> {
    Err(not_authorized(""))
}
