//! Queries shared by the framework and plugins: users, groups, memberships, datasets.
//! Portable SQL only (`$N` placeholders), run on whatever connection the caller holds.

use serde_json::{Map, Value};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use crate::context::Principal;
use crate::store::Store;

/// Column access that hides the backends' differences (SQLite booleans are integers).
pub trait RowExt {
    fn s(&self, col: &str) -> String;
    fn os(&self, col: &str) -> Option<String>;
    fn b(&self, col: &str) -> bool;
    fn i(&self, col: &str) -> i64;
}

impl RowExt for AnyRow {
    fn s(&self, col: &str) -> String {
        self.try_get::<Option<String>, _>(col)
            .ok()
            .flatten()
            .unwrap_or_default()
    }
    fn os(&self, col: &str) -> Option<String> {
        self.try_get::<Option<String>, _>(col).ok().flatten()
    }
    fn b(&self, col: &str) -> bool {
        if let Ok(b) = self.try_get::<bool, _>(col) {
            return b;
        }
        self.try_get::<i64, _>(col).map(|i| i != 0).unwrap_or(false)
    }
    fn i(&self, col: &str) -> i64 {
        if let Ok(i) = self.try_get::<i64, _>(col) {
            return i;
        }
        self.try_get::<i32, _>(col).map(i64::from).unwrap_or(0)
    }
}

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

/// `$1, $2, …, $n`: the placeholders of an `IN (…)` list.
pub fn placeholders(n: usize) -> String {
    (1..=n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The row lock a read takes inside a write transaction (PostgreSQL only: on SQLite the write
/// transaction already excludes every other writer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lock {
    /// A plain read.
    None,
    /// `FOR SHARE`: the row cannot change until commit; other readers may share it.
    Share,
    /// `FOR UPDATE`: the row is this transaction's until commit (a read-modify-write).
    Update,
}

impl Lock {
    fn clause(self) -> &'static str {
        match self {
            Lock::None => "",
            Lock::Share => " FOR SHARE",
            Lock::Update => " FOR UPDATE",
        }
    }
}

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

/// A row of `catalog_group` (groups and organizations).
#[derive(Debug, Clone, serde::Serialize)]
pub struct GroupRow {
    pub id: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub image_url: Option<String>,
    pub group_type: String,
    pub is_organization: bool,
    pub approval_status: String,
    pub state: String,
    pub created: String,
    pub extras: Map<String, Value>,
}

pub const GROUP_COLS: &str =
    "id, name, title, description, image_url, type, is_organization, approval_status, state, created, extras";

impl GroupRow {
    pub fn from_row(r: &AnyRow) -> GroupRow {
        Self::from_prefixed(r, "")
    }

    /// A group read under column aliases `<prefix><column>` (joined into another row).
    fn from_prefixed(r: &AnyRow, prefix: &str) -> GroupRow {
        let c = |name: &str| format!("{prefix}{name}");
        GroupRow {
            id: r.s(&c("id")),
            name: r.s(&c("name")),
            title: r.os(&c("title")),
            description: r.os(&c("description")),
            image_url: r.os(&c("image_url")),
            group_type: r.s(&c("type")),
            is_organization: r.b(&c("is_organization")),
            approval_status: r.s(&c("approval_status")),
            state: r.s(&c("state")),
            created: r.s(&c("created")),
            extras: serde_json::from_str(&r.s(&c("extras"))).unwrap_or_default(),
        }
    }

    pub fn display_name(&self) -> String {
        match &self.title {
            Some(t) if !t.trim().is_empty() => t.clone(),
            _ => self.name.clone(),
        }
    }
}

pub async fn group_by_ref(conn: &mut AnyConnection, r: &str) -> sqlx::Result<Option<GroupRow>> {
    group_by_ref_locked(conn, r, Lock::None).await
}

/// [`group_by_ref`] with a row lock.
pub async fn group_by_ref_locked(
    conn: &mut AnyConnection,
    r: &str,
    lock: Lock,
) -> sqlx::Result<Option<GroupRow>> {
    let sql = format!(
        "SELECT {GROUP_COLS} FROM catalog_group WHERE id = $1 OR name = $1{}",
        lock.clause()
    );
    Ok(sqlx::query(&sql)
        .bind(r)
        .fetch_optional(conn)
        .await?
        .as_ref()
        .map(GroupRow::from_row))
}

pub async fn groups_by_ids(
    conn: &mut AnyConnection,
    ids: &[String],
) -> sqlx::Result<Vec<GroupRow>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT {GROUP_COLS} FROM catalog_group WHERE id IN ({})",
        placeholders(ids.len())
    );
    let mut q = sqlx::query(&sql);
    for id in ids {
        q = q.bind(id);
    }
    Ok(q.fetch_all(conn)
        .await?
        .iter()
        .map(GroupRow::from_row)
        .collect())
}

/// The summary columns of a dataset row, enough for authorization.
#[derive(Debug, Clone)]
pub struct PackageRow {
    pub id: String,
    pub name: String,
    pub dataset_type: String,
    pub state: String,
    pub private: bool,
    pub owner_org: Option<String>,
    pub creator_user_id: Option<String>,
    pub metadata_modified: String,
    pub data: String,
}

/// The columns [`PackageRow::from_row`] reads (`data` may be left out: it is then empty).
pub const PACKAGE_COLS: &str =
    "id, name, type, state, private, owner_org, creator_user_id, metadata_modified, data";

impl PackageRow {
    pub fn from_row(r: &AnyRow) -> PackageRow {
        PackageRow {
            id: r.s("id"),
            name: r.s("name"),
            dataset_type: r.s("type"),
            state: r.s("state"),
            private: r.b("private"),
            owner_org: r.os("owner_org"),
            creator_user_id: r.os("creator_user_id"),
            metadata_modified: r.s("metadata_modified"),
            data: r.s("data"),
        }
    }
}

/// A dataset's row with what its dict shows beside it: its active organization and its active
/// groups (unsorted), read by one statement.
#[derive(Debug, Clone)]
pub struct PackageBundle {
    pub row: PackageRow,
    pub organization: Option<GroupRow>,
    pub groups: Vec<GroupRow>,
}

/// `prefix.col AS aliasprefix_col, …` for the group columns.
fn group_cols_as(table: &str, alias: &str) -> String {
    GROUP_COLS
        .split(", ")
        .map(|c| format!("{table}.{c} AS {alias}{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The dataset named by id (preferred) or name, with its organization and groups: one
/// statement, one row per group (at least one).
pub async fn package_bundle_by_ref(
    conn: &mut AnyConnection,
    r: &str,
) -> sqlx::Result<Option<PackageBundle>> {
    static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let sql = SQL.get_or_init(|| {
        format!(
            "WITH p AS (SELECT {PACKAGE_COLS} FROM package WHERE id = $1 OR name = $1              ORDER BY CASE WHEN id = $1 THEN 0 ELSE 1 END LIMIT 1)              SELECT p.*, {}, {} FROM p              LEFT JOIN catalog_group o ON o.id = p.owner_org AND o.state = 'active'              LEFT JOIN member m ON m.table_name = 'package' AND m.table_id = p.id                AND m.state = 'active' AND m.capacity <> 'organization'              LEFT JOIN catalog_group g ON g.id = m.group_id AND g.is_organization = false                AND g.state = 'active'",
            group_cols_as("o", "o_"),
            group_cols_as("g", "g_"),
        )
    });
    let rows = sqlx::query(sql).bind(r).fetch_all(conn).await?;
    let Some(first) = rows.first() else {
        return Ok(None);
    };
    let organization = first
        .os("o_id")
        .map(|_| GroupRow::from_prefixed(first, "o_"));
    let mut groups: Vec<GroupRow> = Vec::new();
    for row in &rows {
        if let Some(id) = row.os("g_id") {
            if !groups.iter().any(|g| g.id == id) {
                groups.push(GroupRow::from_prefixed(row, "g_"));
            }
        }
    }
    Ok(Some(PackageBundle {
        row: PackageRow::from_row(first),
        organization,
        groups,
    }))
}

pub async fn package_by_ref(conn: &mut AnyConnection, r: &str) -> sqlx::Result<Option<PackageRow>> {
    package_by_ref_locked(conn, r, Lock::None).await
}

/// The summary rows (without `data`) of the datasets with these ids, in no order.
pub async fn package_summaries(
    conn: &mut AnyConnection,
    ids: &[String],
) -> sqlx::Result<Vec<PackageRow>> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let sql = format!(
            "SELECT id, name, type, state, private, owner_org, creator_user_id, metadata_modified \
             FROM package WHERE id IN ({})",
            placeholders(chunk.len())
        );
        let mut q = sqlx::query(&sql);
        for id in chunk {
            q = q.bind(id);
        }
        out.extend(
            q.fetch_all(&mut *conn)
                .await?
                .iter()
                .map(PackageRow::from_row),
        );
    }
    Ok(out)
}

/// [`package_by_ref`] with a row lock.
pub async fn package_by_ref_locked(
    conn: &mut AnyConnection,
    r: &str,
    lock: Lock,
) -> sqlx::Result<Option<PackageRow>> {
    let sql = format!(
        "SELECT {PACKAGE_COLS} FROM package WHERE id = $1 OR name = $1 \
         ORDER BY CASE WHEN id = $1 THEN 0 ELSE 1 END LIMIT 1{}",
        lock.clause()
    );
    let row = sqlx::query(&sql).bind(r).fetch_optional(conn).await?;
    Ok(row.as_ref().map(PackageRow::from_row))
}

/// The free tags (no vocabulary) of these names that exist: `(id, name)`, in no order.
pub async fn free_tags_by_name(
    conn: &mut AnyConnection,
    names: &[String],
) -> sqlx::Result<Vec<(String, String)>> {
    let mut out = Vec::with_capacity(names.len());
    for chunk in names.chunks(500) {
        let sql = format!(
            "SELECT id, name FROM tag WHERE vocabulary_id = '' AND name IN ({})",
            placeholders(chunk.len())
        );
        let mut q = sqlx::query_as::<_, (String, String)>(&sql);
        for n in chunk {
            q = q.bind(n);
        }
        out.extend(q.fetch_all(&mut *conn).await?);
    }
    Ok(out)
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

/// Child → parent edges of the group hierarchy (`capacity = 'parent'` member rows).
pub async fn hierarchy_edges(conn: &mut AnyConnection) -> sqlx::Result<Vec<(String, String)>> {
    let rows = sqlx::query(
        "SELECT group_id, table_id FROM member WHERE table_name = 'group' AND capacity = 'parent' AND state = 'active'",
    )
    .fetch_all(conn)
    .await?;
    Ok(rows
        .iter()
        .map(|r| (r.s("group_id"), r.s("table_id")))
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
