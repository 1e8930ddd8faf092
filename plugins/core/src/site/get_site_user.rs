use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::store::time::now_iso;

action_params! {
    /// Return the site user (created on first use): the sysadmin account named after
    /// `catalog.site_id` that internal services act as. Sysadmins only.
    ///
    /// :rtype: dictionary with `name`, `id` and `apikey` (always null: API keys are not used)
    pub struct GetSiteUserParams {}
}

pub(crate) async fn get_site_user(
    ctx: &mut ActionContext,
    p: GetSiteUserParams,
) -> CkanResult<Value> {
    ctx.check_access("get_site_user", &p.__extras).await?;
    let name = ctx.config().catalog.site_id.clone();
    let user = match ctx.user_row(&name).await?.filter(|u| u.name == name) {
        Some(u) => u,
        None => {
            let id = q::new_id();
            let row = q::UserWrite {
                name: &name,
                email: None,
                fullname: None,
                about: None,
                image_url: None,
                password_hash: None,
                sysadmin: true,
            };
            // Two first calls at once: the loser's insert fails on the name, and it reads the
            // winner's user.
            let inserted =
                q::insert_user(ctx.db().await?, &id, "active", &now_iso(), false, &row).await;
            let found = ctx.user_row(&name).await?.filter(|u| u.name == name);
            match (found, inserted) {
                (Some(u), _) => u,
                (None, Err(e)) => return Err(e.into()),
                (None, Ok(())) => return Err(internal("the site user vanished")),
            }
        }
    };
    Ok(json!({"name": user.name, "id": user.id, "apikey": null}))
}
