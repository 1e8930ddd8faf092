use catalog_framework::prelude::*;

use super::{load, write};

pub async fn package_owner_org_update(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let r = req_str(&p, "id")?;
    ctx.check_access("package_owner_org_update", &p).await?;
    let row = load(ctx, &r).await?;
    let org = match p
        .get("organization_id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        None => None,
        Some(o) => Some(
            ctx.group_row(o)
                .await?
                .filter(|g| g.is_organization)
                .ok_or_else(|| not_found("Organization was not found."))?
                .id,
        ),
    };
    let mut doc: Map<String, Value> = serde_json::from_str(&row.data)?;
    doc.insert("owner_org".into(), json!(org));
    write(ctx, &doc, false, None).await?;
    Ok(Value::Null)
}
