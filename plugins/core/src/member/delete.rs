use catalog_framework::prelude::*;

use super::{member_target, member_user};

pub async fn member_delete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let (g, table, obj_id) =
        member_target(ctx, &p, "member_delete", &["id", "object", "object_type"]).await?;
    let active: Option<(String, String)> = sqlx::query_as(
        "SELECT id, capacity FROM member WHERE group_id = $1 AND table_name = $2 AND table_id = $3 AND state = 'active'",
    )
    .bind(&g.id)
    .bind(table)
    .bind(&obj_id)
    .fetch_optional(ctx.db().await?)
    .await?;
    sqlx::query("UPDATE member SET state = 'deleted' WHERE group_id = $1 AND table_name = $2 AND table_id = $3 AND state = 'active'")
        .bind(&g.id)
        .bind(table)
        .bind(&obj_id)
        .execute(ctx.db().await?)
        .await?;
    if let Some((id, capacity)) = active {
        let before = json!({"id": id, "table_name": table, "table_id": obj_id, "group_id": g.id, "capacity": capacity, "state": "active"});
        let mut after = before.clone();
        after["state"] = json!("deleted");
        ctx.emit(
            Entity::Member,
            Change::Deleted,
            &g.id,
            Some(before),
            Some(after),
        );
    }
    Ok(Value::Null)
}

pub async fn group_member_delete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    member_user(ctx, p, false, false).await
}

pub async fn organization_member_delete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    member_user(ctx, p, true, false).await
}
