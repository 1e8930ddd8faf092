//! The harvest actions' auth functions (ckanext-harvest's `logic/auth`): what touches a source
//! or its jobs needs `package_update` on the source's dataset (its organization's editors and
//! admins), what reads it needs `package_show`, and the site-wide ones are sysadmins' only
//! (sysadmins pass before any auth function runs). Actions hand over the source's id as
//! `source_id`, having looked it up.

use catalog_framework::prelude::*;

fn source_id(data: &Params) -> String {
    data.get("source_id")
        .or_else(|| data.get("id"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Whether the source dataset's auth function `action` lets the caller through.
async fn dataset_allows(ctx: &mut ActionContext, action: &str, id: &str) -> CkanResult<bool> {
    if id.is_empty() {
        return Ok(false);
    }
    let mut p = Params::new();
    p.insert("id".into(), json!(id));
    match ctx.check_access(action, &p).await {
        Ok(()) => Ok(true),
        Err(e) if e.kind == ErrorKind::Authorization => Ok(false),
        Err(e) => Err(e),
    }
}

/// `package_update` on the source; the message names the caller and the source.
pub(crate) struct SourceUpdate(pub(crate) &'static str);

#[async_trait]
impl AuthFunction for SourceUpdate {
    async fn check(&self, ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
        let id = source_id(data);
        if dataset_allows(ctx, "package_update", &id).await? {
            Ok(())
        } else {
            Err(not_authorized(
                self.0
                    .replace("{user}", ctx.user_name())
                    .replace("{source}", &id),
            ))
        }
    }
}

/// `package_show` on the source (anonymous callers read public sources).
pub(crate) struct SourceRead;

#[async_trait]
impl AuthFunction for SourceRead {
    fn allow_anonymous(&self) -> bool {
        true
    }
    async fn check(&self, ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
        let id = source_id(data);
        if dataset_allows(ctx, "package_show", &id).await? {
            Ok(())
        } else {
            Err(not_authorized(format!(
                "User {} not authorized to read harvest source {id}",
                ctx.user_name()
            )))
        }
    }
}

/// Anyone, anonymous callers included (what they are shown is filtered by the action).
pub(crate) struct Anyone;

#[async_trait]
impl AuthFunction for Anyone {
    fn allow_anonymous(&self) -> bool {
        true
    }
    async fn check(&self, _ctx: &mut ActionContext, _data: &Params) -> CkanResult<()> {
        Ok(())
    }
}

/// Any logged-in user.
pub(crate) struct LoggedIn;

#[async_trait]
impl AuthFunction for LoggedIn {
    async fn check(&self, _ctx: &mut ActionContext, _data: &Params) -> CkanResult<()> {
        Ok(())
    }
}

/// Sysadmins only, with ckanext-harvest's message.
pub(crate) struct SysadminOnly(pub(crate) &'static str);

#[async_trait]
impl AuthFunction for SysadminOnly {
    fn allow_anonymous(&self) -> bool {
        true
    }
    async fn check(&self, _ctx: &mut ActionContext, _data: &Params) -> CkanResult<()> {
        Err(not_authorized(self.0))
    }
}
