use catalog_framework::prelude::*;

action_params! {
    /// Return a dict describing the site.
    pub struct StatusShowParams {}
}

pub(crate) async fn status_show(ctx: &mut ActionContext, p: StatusShowParams) -> CkanResult<Value> {
    ctx.check_access("status_show", &p.__extras).await?;
    let c = &ctx.config().catalog;
    let mut m = Map::new();
    m.insert("site_title".into(), json!(ctx.app.site_title()));
    m.insert("site_description".into(), json!(ctx.app.site_description()));
    m.insert("site_url".into(), json!(c.site_url));
    m.insert("error_emails_to".into(), json!(c.email_to));
    m.insert("locale_default".into(), json!(c.locale_default));
    m.insert("extensions".into(), json!(ctx.app.registry.plugins()));
    if !c.hide_version || ctx.is_sysadmin() {
        m.insert("ckan_version".into(), json!(CKAN_VERSION));
        m.insert("catalog_version".into(), json!(env!("CARGO_PKG_VERSION")));
    }
    Ok(Value::Object(m))
}

/// The CKAN release whose Action API this build answers as (`ckan_version`); a build may set
/// another with the `CATALOG_CKAN_VERSION` environment variable at compile time.
const CKAN_VERSION: &str = match option_env!("CATALOG_CKAN_VERSION") {
    Some(v) => v,
    None => "2.12.0",
};
