use catalog_framework::prelude::*;

action_params! {
    /// Return true if the caller may read the site.
    pub struct SiteReadParams {}
}

pub(crate) async fn site_read(ctx: &mut ActionContext, p: SiteReadParams) -> CkanResult<Value> {
    ctx.check_access("site_read", &p.__extras).await?;
    Ok(json!(true))
}
