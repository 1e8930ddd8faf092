//! Dataset collaborators, behind `catalog.auth.allow_dataset_collaborators`.

use catalog_framework::prelude::*;
use catalog_framework::time::now_iso;

fn enabled(ctx: &ActionContext) -> CkanResult<()> {
    if ctx.config().catalog.auth.allow_dataset_collaborators {
        Ok(())
    } else {
        Err(validation_message("Dataset collaborators not enabled"))
    }
}

fn capacities(ctx: &ActionContext) -> Vec<&'static str> {
    if ctx.config().catalog.auth.allow_admin_collaborators {
        vec!["admin", "editor", "member"]
    } else {
        vec!["editor", "member"]
    }
}

pub async fn package_collaborator_create(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let (id, user_id, capacity) = (
        req_str(&p, "id")?,
        req_str(&p, "user_id")?,
        req_str(&p, "capacity")?,
    );
    let caps = capacities(ctx);
    if !caps.contains(&capacity.as_str()) {
        return Err(validation_message(format!(
            "Role must be one of \"{}\"",
            caps.join(", ")
        )));
    }
    let pkg = ctx
        .package_row(&id)
        .await?
        .ok_or_else(|| not_found("Dataset not found"))?;
    let user = ctx
        .user_row(&user_id)
        .await?
        .ok_or_else(|| not_found("User not found"))?;
    let mut auth = p.clone();
    auth.insert("id".into(), json!(pkg.id));
    ctx.check_access("package_collaborator_create", &auth)
        .await?;
    enabled(ctx)?;
    let now = now_iso();
    sqlx::query(
        "INSERT INTO collaborator (package_id, user_id, capacity, modified) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (package_id, user_id) DO UPDATE SET capacity = $3, modified = $4",
    )
    .bind(&pkg.id)
    .bind(&user.id)
    .bind(&capacity)
    .bind(&now)
    .execute(ctx.db().await?)
    .await?;
    Ok(
        json!({"package_id": pkg.id, "user_id": user.id, "capacity": capacity, "modified": now.replacen('T', " ", 1)}),
    )
}

pub async fn package_collaborator_delete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let (id, user_id) = (req_str(&p, "id")?, req_str(&p, "user_id")?);
    let pkg = ctx
        .package_row(&id)
        .await?
        .ok_or_else(|| not_found("Package not found"))?;
    let user = ctx
        .user_row(&user_id)
        .await?
        .ok_or_else(|| not_found("User not found"))?;
    let mut auth = p.clone();
    auth.insert("id".into(), json!(pkg.id));
    ctx.check_access("package_collaborator_delete", &auth)
        .await?;
    enabled(ctx)?;
    let done = sqlx::query("DELETE FROM collaborator WHERE package_id = $1 AND user_id = $2")
        .bind(&pkg.id)
        .bind(&user.id)
        .execute(ctx.db().await?)
        .await?;
    if done.rows_affected() == 0 {
        return Err(not_found(format!(
            "User {user_id} is not a collaborator on this package"
        )));
    }
    Ok(Value::Null)
}

pub async fn package_collaborator_list(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let id = req_str(&p, "id")?;
    let pkg = ctx
        .package_row(&id)
        .await?
        .ok_or_else(|| not_found("Package not found"))?;
    let mut auth = p.clone();
    auth.insert("id".into(), json!(pkg.id));
    ctx.check_access("package_collaborator_list", &auth).await?;
    enabled(ctx)?;
    let capacity = opt_str(&p, "capacity");
    if let Some(c) = &capacity {
        let caps = capacities(ctx);
        if !caps.contains(&c.as_str()) {
            return Err(validation_message(format!(
                "Capacity must be one of \"{}\"",
                caps.join(", ")
            )));
        }
    }
    let rows = sqlx::query("SELECT package_id, user_id, capacity, modified FROM collaborator WHERE package_id = $1 ORDER BY modified")
        .bind(&pkg.id)
        .fetch_all(ctx.db().await?)
        .await?;
    Ok(Value::Array(
        rows.iter()
            .filter(|r| capacity.as_ref().is_none_or(|c| *c == r.s("capacity")))
            .map(|r| json!({"package_id": r.s("package_id"), "user_id": r.s("user_id"), "capacity": r.s("capacity"), "modified": r.s("modified").replacen('T', " ", 1)}))
            .collect(),
    ))
}

pub async fn package_collaborator_list_for_user(
    ctx: &mut ActionContext,
    p: Params,
) -> CkanResult<Value> {
    enabled(ctx)?;
    let id = req_str(&p, "id")?;
    let user = ctx.user_row(&id).await?;
    let Some(user) = user else {
        return Err(not_authorized("Not allowed to retrieve collaborators"));
    };
    let mut auth = p.clone();
    auth.insert("id".into(), json!(user.id));
    ctx.check_access("package_collaborator_list_for_user", &auth)
        .await?;
    let capacity = opt_str(&p, "capacity");
    let rows = sqlx::query("SELECT package_id, capacity, modified FROM collaborator WHERE user_id = $1 ORDER BY modified")
        .bind(&user.id)
        .fetch_all(ctx.db().await?)
        .await?;
    Ok(Value::Array(
        rows.iter()
            .filter(|r| capacity.as_ref().is_none_or(|c| *c == r.s("capacity")))
            .map(|r| json!({"package_id": r.s("package_id"), "capacity": r.s("capacity"), "modified": r.s("modified")}))
            .collect(),
    ))
}
