//! Users (`catalog_user`), their API tokens, their memberships and collaborations.

use sqlx::any::AnyRow;
use sqlx::AnyConnection;

use super::rows::{Lock, RowExt};
use super::Store;
use crate::context::Principal;

pub async fn principal_for_token(store: &Store, token: &str) -> sqlx::Result<Option<Principal>> {
    let hash = crate::identity::hash_token(token);
    let row = sqlx::query(
        "SELECT u.id, u.name, u.sysadmin, u.state, t.id AS token_id, t.last_access \
         FROM api_token t JOIN catalog_user u ON u.id = t.user_id WHERE t.token_hash = $1",
    )
    .bind(&hash)
    .fetch_optional(&store.pool)
    .await?;
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
        "SELECT {USER_COLS} FROM catalog_user WHERE id = $1 OR name = $1{}",
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
