//! Site actions (status, licenses, help) and tags.

use catalog_framework::prelude::*;
use catalog_framework::store_queries as q;

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

pub async fn tag_list(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    ctx.check_access("tag_list", &p).await?;
    if let Some(v) = opt_str(&p, "vocabulary_id").filter(|s| !s.is_empty()) {
        return Err(not_found(format!("could not find vocabulary '{v}'")));
    }
    let all_fields = truthy(p.get("all_fields"))
        || matches!(p.get("all_fields"), Some(Value::String(s)) if !s.is_empty());
    let query = opt_str(&p, "query")
        .or_else(|| opt_str(&p, "q"))
        .map(|s| s.trim().to_lowercase());
    let rows = sqlx::query(
        "SELECT DISTINCT t.id, t.name FROM tag t JOIN package_tag pt ON pt.tag_id = t.id \
         WHERE pt.state = 'active' AND t.vocabulary_id = '' ORDER BY t.name",
    )
    .fetch_all(ctx.db().await?)
    .await?;
    let out = rows
        .iter()
        .filter(|r| query.as_ref().is_none_or(|q| r.s("name").to_lowercase().contains(q)))
        .map(|r| {
            if all_fields {
                json!({"display_name": r.s("name"), "id": r.s("id"), "name": r.s("name"), "vocabulary_id": null})
            } else {
                json!(r.s("name"))
            }
        })
        .collect();
    Ok(Value::Array(out))
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
    .ok_or_else(|| not_found(""))?;
    let mut m = Map::new();
    m.insert("display_name".into(), json!(row.s("name")));
    m.insert("id".into(), json!(row.s("id")));
    m.insert("name".into(), json!(row.s("name")));
    m.insert("vocabulary_id".into(), Value::Null);
    if bool_param(&p, "include_datasets", false)? {
        let ids: Vec<(String,)> = sqlx::query_as(
            "SELECT p.id FROM package p JOIN package_tag pt ON pt.package_id = p.id \
             WHERE pt.tag_id = $1 AND pt.state = 'active' AND p.state = 'active' AND p.private = false ORDER BY p.name LIMIT 1000",
        )
        .bind(row.s("id"))
        .fetch_all(ctx.db().await?)
        .await?;
        let mut pkgs = Vec::new();
        for (pid,) in ids {
            let r = q::package_by_ref(ctx.db().await?, &pid)
                .await?
                .ok_or_else(|| not_found(""))?;
            pkgs.push(crate::package::show_row(ctx, &r).await?);
        }
        m.insert("packages".into(), Value::Array(pkgs));
    }
    Ok(Value::Object(m))
}
