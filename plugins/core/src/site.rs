//! Site actions (status, licenses, help) and `tag_show`.

use catalog_framework::prelude::*;

use crate::licenses::LICENSES;

pub async fn status_show(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    ctx.check_access("status_show", &p).await?;
    let c = &ctx.config().catalog;
    let mut m = Map::new();
    m.insert("site_title".into(), json!(c.site_title));
    m.insert("site_description".into(), json!(c.site_description));
    m.insert("site_url".into(), json!(c.site_url));
    m.insert("error_emails_to".into(), json!(c.email_to));
    m.insert("locale_default".into(), json!(c.locale_default));
    m.insert("extensions".into(), json!(ctx.app.registry.plugins()));
    if !c.hide_version || ctx.is_sysadmin() {
        m.insert("ckan_version".into(), json!("2.11.0"));
        m.insert("catalog_version".into(), json!(env!("CARGO_PKG_VERSION")));
    }
    Ok(Value::Object(m))
}

pub async fn site_read(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    ctx.check_access("site_read", &p).await?;
    Ok(json!(true))
}

pub async fn license_list(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    ctx.check_access("license_list", &p).await?;
    Ok(Value::Array(LICENSES.iter().map(|l| l.to_json()).collect()))
}

pub async fn help_show(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let name = req_str(&p, "name")?;
    ctx.check_access("help_show", &p).await?;
    let action = ctx
        .app
        .registry
        .action(&name)
        .ok_or_else(|| not_found("Action function not found"))?;
    let doc = action.doc();
    Ok(if doc.is_empty() {
        Value::Null
    } else {
        json!(doc)
    })
}

pub async fn tag_show(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let id = req_str(&p, "id")?;
    ctx.check_access("tag_show", &p).await?;
    let row = sqlx::query(
        "SELECT id, name FROM tag WHERE (id = $1 OR name = $1) AND vocabulary_id = '' LIMIT 1",
    )
    .bind(&id)
    .fetch_optional(ctx.db().await?)
    .await?
    // With a vocabulary (none exists), only the lookup by id can succeed, as in `Tag.get`.
    .filter(|r| opt_str(&p, "vocabulary_id").is_none_or(|v| v.is_empty()) || r.s("id") == id)
    .ok_or_else(|| not_found(""))?;
    let mut m = Map::new();
    m.insert("display_name".into(), json!(row.s("name")));
    m.insert("id".into(), json!(row.s("id")));
    m.insert("name".into(), json!(row.s("name")));
    m.insert("vocabulary_id".into(), Value::Null);
    if bool_param(&p, "include_datasets", false)? {
        let pkgs = crate::search_actions::tag_datasets(ctx, &row.s("name")).await?;
        m.insert("packages".into(), Value::Array(pkgs));
    }
    Ok(Value::Object(m))
}
