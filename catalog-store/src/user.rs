//! Users (`catalog_user`), their API tokens, their memberships and collaborations.

use sqlx::any::AnyRow;
use sqlx::AnyConnection;

use super::rows::{id_or_name, Lock, RowExt};
use super::Store;
use crate::model::Principal;

pub async fn principal_for_token(store: &Store, token: &str) -> sqlx::Result<Option<Principal>> {
    let hash = crate::identity::hash_token(token);
    let row = sqlx::query(
        "SELECT u.id, u.name, u.sysadmin, u.state, t.id AS token_id, t.last_access \
         FROM api_token t JOIN catalog_user u ON u.id = t.user_id \
         WHERE t.token_hash = $1 AND (t.expires_at IS NULL OR t.expires_at > $2)",
    )
    .bind(&hash)
    .bind(crate::time::now_iso())
    .fetch_optional(&store.pool)
    .await?;
    // An unknown, revoked or expired token: anonymous, as in CKAN.
    let Some(row) = row else { return Ok(None) };
    // CKAN records last_access on every request; once a minute is enough and keeps reads cheap.
    let now = crate::time::now_iso();
    let stale = row
        .os("last_access")
        .is_none_or(|t| t.get(..16) != now.get(..16));
    if stale {
        // Behind the single-writer lock: on SQLite a write slipping between another
        // transaction's read and write would make that transaction fail (SQLITE_BUSY_SNAPSHOT).
        let _w = store.lock_writes().await;
        let _ = sqlx::query("UPDATE api_token SET last_access = $1 WHERE id = $2")
            .bind(&now)
            .bind(row.s("token_id"))
            .execute(&store.pool)
            .await;
    }
    Ok(Some(Principal {
        id: row.s("id"),
        name: row.s("name"),
        sysadmin: row.b("sysadmin"),
        state: row.s("state"),
    }))
}

/// A row of `catalog_user`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct UserRow {
    pub id: String,
    pub name: String,
    pub email: Option<String>,
    pub fullname: Option<String>,
    pub about: Option<String>,
    /// Never leaves the process (not even in a domain event's record).
    #[serde(skip)]
    pub password_hash: Option<String>,
    pub sysadmin: bool,
    pub state: String,
    pub created: String,
    pub image_url: Option<String>,
    pub last_active: Option<String>,
    pub email_notifications: bool,
    pub plugin_extras: Option<String>,
}

impl UserRow {
    fn from_row(r: &AnyRow) -> UserRow {
        UserRow {
            id: r.s("id"),
            name: r.s("name"),
            email: r.os("email"),
            fullname: r.os("fullname"),
            about: r.os("about"),
            password_hash: r.os("password_hash"),
            sysadmin: r.b("sysadmin"),
            state: r.s("state"),
            created: r.s("created"),
            image_url: r.os("image_url"),
            last_active: r.os("last_active"),
            email_notifications: r.b("email_notifications"),
            plugin_extras: r.os("plugin_extras"),
        }
    }

    pub fn display_name(&self) -> String {
        match &self.fullname {
            Some(f) if !f.trim().is_empty() => f.clone(),
            _ => self.name.clone(),
        }
    }
}

pub const USER_COLS: &str =
    "id, name, email, fullname, about, password_hash, sysadmin, state, created, image_url, \
     last_active, email_notifications, plugin_extras";

/// A user by id or exact name.
pub async fn user_by_ref(conn: &mut AnyConnection, r: &str) -> sqlx::Result<Option<UserRow>> {
    user_by_ref_locked(conn, r, Lock::None).await
}

/// [`user_by_ref`] with a row lock.
pub async fn user_by_ref_locked(
    conn: &mut AnyConnection,
    r: &str,
    lock: Lock,
) -> sqlx::Result<Option<UserRow>> {
    let sql = format!(
        "SELECT {USER_COLS} FROM catalog_user WHERE {}{}",
        id_or_name("catalog_user", ""),
        lock.clause()
    );
    Ok(sqlx::query(&sql)
        .bind(r)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(UserRow::from_row))
}

pub async fn users_where(
    conn: &mut AnyConnection,
    where_sql: &str,
    binds: &[String],
) -> sqlx::Result<Vec<UserRow>> {
    let sql = format!("SELECT {USER_COLS} FROM catalog_user WHERE {where_sql}");
    let mut q = sqlx::query(&sql);
    for b in binds {
        q = q.bind(b);
    }
    Ok(q.fetch_all(conn)
        .await?
        .iter()
        .map(UserRow::from_row)
        .collect())
}

/// Active memberships of a user: `(group_id, capacity)`.
pub async fn user_memberships(
    conn: &mut AnyConnection,
    user_id: &str,
) -> sqlx::Result<Vec<(String, String)>> {
    let rows = sqlx::query(
        "SELECT m.group_id, m.capacity FROM member m JOIN catalog_group g ON g.id = m.group_id \
         WHERE m.table_name = 'user' AND m.table_id = $1 AND m.state = 'active' AND g.state = 'active'",
    )
    .bind(user_id)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .iter()
        .map(|r| (r.s("group_id"), r.s("capacity")))
        .collect())
}

/// Collaborations of a user: `(package_id, capacity)`.
pub async fn user_collaborations(
    conn: &mut AnyConnection,
    user_id: &str,
) -> sqlx::Result<Vec<(String, String)>> {
    let rows = sqlx::query("SELECT package_id, capacity FROM collaborator WHERE user_id = $1")
        .bind(user_id)
        .fetch_all(conn)
        .await?;
    Ok(rows
        .iter()
        .map(|r| (r.s("package_id"), r.s("capacity")))
        .collect())
}

/// The user an API token (by its id, `jti`) belongs to.
pub async fn api_token_owner(conn: &mut AnyConnection, jti: &str) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar("SELECT user_id FROM api_token WHERE id = $1")
        .bind(jti)
        .fetch_optional(&mut *conn)
        .await
}

/// The active users of a group or organization that are not deleted, by name, with their
/// capacity: one statement.
pub async fn group_user_members(
    conn: &mut AnyConnection,
    group_id: &str,
) -> sqlx::Result<Vec<(UserRow, String)>> {
    let cols = USER_COLS
        .split(", ")
        .map(|c| format!("u.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let rows = sqlx::query(&format!(
        "SELECT {cols}, m.capacity FROM catalog_user u JOIN member m ON m.table_id = u.id AND m.table_name = 'user' \
         WHERE m.group_id = $1 AND m.state = 'active' AND u.state <> 'deleted' ORDER BY u.name"
    ))
    .bind(group_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .iter()
        .map(|r| (UserRow::from_row(r), r.s("capacity")))
        .collect())
}

/// The columns a user write stores (besides its id, state, creation time and notification
/// setting, which only an insert sets).
pub struct UserWrite<'a> {
    pub name: &'a str,
    pub email: Option<&'a str>,
    pub fullname: Option<&'a str>,
    pub about: Option<&'a str>,
    pub image_url: Option<&'a str>,
    pub password_hash: Option<&'a str>,
    pub sysadmin: bool,
}

/// Inserts a user.
pub async fn insert_user(
    conn: &mut AnyConnection,
    id: &str,
    state: &str,
    created: &str,
    email_notifications: bool,
    u: &UserWrite<'_>,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO catalog_user (id, name, email, fullname, about, password_hash, sysadmin, state, created, image_url, email_notifications) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(id)
    .bind(u.name)
    .bind(u.email)
    .bind(u.fullname)
    .bind(u.about)
    .bind(u.password_hash)
    .bind(u.sysadmin)
    .bind(state)
    .bind(created)
    .bind(u.image_url)
    .bind(email_notifications)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Replaces a user's editable columns.
pub async fn update_user(
    conn: &mut AnyConnection,
    id: &str,
    u: &UserWrite<'_>,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE catalog_user SET name = $2, email = $3, fullname = $4, about = $5, image_url = $6, password_hash = $7, sysadmin = $8 WHERE id = $1",
    )
    .bind(id)
    .bind(u.name)
    .bind(u.email)
    .bind(u.fullname)
    .bind(u.about)
    .bind(u.image_url)
    .bind(u.password_hash)
    .bind(u.sysadmin)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Replaces a user's `plugin_extras` (a JSON object's text, or none).
pub async fn set_user_plugin_extras(
    conn: &mut AnyConnection,
    id: &str,
    extras: Option<&str>,
) -> sqlx::Result<()> {
    sqlx::query("UPDATE catalog_user SET plugin_extras = $2 WHERE id = $1")
        .bind(id)
        .bind(extras)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Marks a user deleted, with its memberships; its collaborations go.
pub async fn mark_user_deleted(conn: &mut AnyConnection, id: &str) -> sqlx::Result<()> {
    for sql in [
        "UPDATE catalog_user SET state = 'deleted' WHERE id = $1",
        "UPDATE member SET state = 'deleted' WHERE table_name = 'user' AND table_id = $1",
        "DELETE FROM collaborator WHERE user_id = $1",
    ] {
        sqlx::query(sql).bind(id).execute(&mut *conn).await?;
    }
    Ok(())
}

/// A row of `api_token`, without the token's hash.
#[derive(Debug, Clone)]
pub struct ApiTokenRow {
    pub id: String,
    pub name: String,
    pub user_id: String,
    pub created_at: String,
    pub last_access: Option<String>,
}

/// Stores a new API token of a user (only the token's hash); it stops working at
/// `expires_at` (an ISO timestamp as `now_iso` writes them) if one is given.
pub async fn insert_api_token(
    conn: &mut AnyConnection,
    id: &str,
    user_id: &str,
    name: &str,
    token_hash: &str,
    created_at: &str,
    expires_at: Option<&str>,
) -> sqlx::Result<()> {
    sqlx::query("INSERT INTO api_token (id, user_id, name, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(id)
        .bind(user_id)
        .bind(name)
        .bind(token_hash)
        .bind(created_at)
        .bind(expires_at)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// A user's API tokens, oldest first (then by id).
pub async fn user_api_tokens(
    conn: &mut AnyConnection,
    user_id: &str,
) -> sqlx::Result<Vec<ApiTokenRow>> {
    let rows = sqlx::query("SELECT id, name, user_id, created_at, last_access FROM api_token WHERE user_id = $1 ORDER BY created_at, id")
        .bind(user_id)
        .fetch_all(&mut *conn)
        .await?;
    Ok(rows
        .iter()
        .map(|r| ApiTokenRow {
            id: r.s("id"),
            name: r.s("name"),
            user_id: r.s("user_id"),
            created_at: r.s("created_at"),
            last_access: r.os("last_access"),
        })
        .collect())
}

/// Revokes an API token (by its id, `jti`); nothing happens when there is none.
pub async fn delete_api_token(conn: &mut AnyConnection, jti: &str) -> sqlx::Result<()> {
    sqlx::query("DELETE FROM api_token WHERE id = $1")
        .bind(jti)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Sets (or clears) a user's password-reset key (CKAN's `user.reset_key`).
pub async fn set_user_reset_key(
    conn: &mut AnyConnection,
    id: &str,
    key: Option<&str>,
) -> sqlx::Result<()> {
    sqlx::query("UPDATE catalog_user SET reset_key = $1 WHERE id = $2")
        .bind(key)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// A user's password-reset key, if one is set.
pub async fn user_reset_key(conn: &mut AnyConnection, id: &str) -> sqlx::Result<Option<String>> {
    let row: Option<(Option<String>,)> =
        sqlx::query_as("SELECT reset_key FROM catalog_user WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
    Ok(row.and_then(|(k,)| k))
}
