//! Groups and organizations (`catalog_group`) and their hierarchy.

use serde_json::{Map, Value};
use sqlx::any::AnyRow;
use sqlx::AnyConnection;

use super::rows::{id_or_name, placeholders, Lock, RowExt};

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
    pub(super) fn from_prefixed(r: &AnyRow, prefix: &str) -> GroupRow {
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
        "SELECT {GROUP_COLS} FROM catalog_group WHERE {}{}",
        id_or_name("catalog_group", ""),
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

/// Marks a group or organization deleted, with its memberships (its members', and its own in
/// parent groups).
pub async fn mark_group_deleted(conn: &mut AnyConnection, id: &str) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE member SET state = 'deleted' WHERE group_id = $1 OR (table_name = 'group' AND table_id = $1)",
    )
    .bind(id)
    .execute(&mut *conn)
    .await?;
    sqlx::query("UPDATE catalog_group SET state = 'deleted' WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Removes a group or organization and its memberships.
pub async fn purge_group(conn: &mut AnyConnection, id: &str) -> sqlx::Result<()> {
    sqlx::query(
        "DELETE FROM member WHERE group_id = $1 OR (table_name = 'group' AND table_id = $1)",
    )
    .bind(id)
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM catalog_group WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Marks a group's memberships in parent groups deleted (before its parents are set again).
pub async fn clear_group_parents(conn: &mut AnyConnection, id: &str) -> sqlx::Result<()> {
    sqlx::query("UPDATE member SET state = 'deleted' WHERE group_id = $1 AND table_name = 'group'")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// The columns a group write stores (besides its id, type and timestamps).
pub struct GroupWrite<'a> {
    pub name: &'a str,
    pub title: Option<&'a str>,
    pub description: Option<&'a str>,
    pub image_url: Option<&'a str>,
    pub extras: &'a serde_json::Map<String, serde_json::Value>,
}

fn extras_json(g: &GroupWrite<'_>) -> sqlx::Result<String> {
    serde_json::to_string(g.extras).map_err(|e| sqlx::Error::Encode(Box::new(e)))
}

/// Inserts an approved group or organization in `state` (`active`, or `deleted` when a
/// sysadmin creates it so).
pub async fn insert_group(
    conn: &mut AnyConnection,
    id: &str,
    group_type: &str,
    is_organization: bool,
    state: &str,
    created: &str,
    g: &GroupWrite<'_>,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO catalog_group (id, name, title, description, image_url, type, is_organization, approval_status, state, created, extras) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'approved', $10, $8, $9)",
    )
    .bind(id)
    .bind(g.name)
    .bind(g.title)
    .bind(g.description)
    .bind(g.image_url)
    .bind(group_type)
    .bind(is_organization)
    .bind(created)
    .bind(extras_json(g)?)
    .bind(state)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Replaces a group's editable columns.
pub async fn update_group(
    conn: &mut AnyConnection,
    id: &str,
    g: &GroupWrite<'_>,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE catalog_group SET name = $2, title = $3, description = $4, image_url = $5, extras = $6 WHERE id = $1",
    )
    .bind(id)
    .bind(g.name)
    .bind(g.title)
    .bind(g.description)
    .bind(g.image_url)
    .bind(extras_json(g)?)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Every active group and organization, in no order.
pub async fn active_groups(conn: &mut AnyConnection) -> sqlx::Result<Vec<GroupRow>> {
    let sql = format!("SELECT {GROUP_COLS} FROM catalog_group WHERE state = 'active'");
    let rows = sqlx::query(&sql).fetch_all(&mut *conn).await?;
    Ok(rows.iter().map(GroupRow::from_row).collect())
}

/// The active child groups of a group: `(name, capacity)`.
pub async fn group_children(
    conn: &mut AnyConnection,
    group_id: &str,
) -> sqlx::Result<Vec<(String, String)>> {
    sqlx::query_as(
        "SELECT g.name, m.capacity FROM member m JOIN catalog_group g ON g.id = m.table_id \
         WHERE m.group_id = $1 AND m.table_name = 'group' AND m.state = 'active'",
    )
    .bind(group_id)
    .fetch_all(&mut *conn)
    .await
}

/// How many public active datasets are active members of a group: its `package_count` as a
/// search would count it for anyone, read from the memberships themselves (a write that just
/// changed them answers before the search index has them).
pub async fn group_public_dataset_count(
    conn: &mut AnyConnection,
    group_id: &str,
) -> sqlx::Result<i64> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM member m JOIN package p ON p.id = m.table_id \
         WHERE m.group_id = $1 AND m.table_name = 'package' AND m.state = 'active' \
         AND p.state = 'active' AND p.private = false",
    )
    .bind(group_id)
    .fetch_one(&mut *conn)
    .await
}

/// The groups (not organizations) a dataset, by id or name, is an active member of.
pub async fn package_group_ids(
    conn: &mut AnyConnection,
    package_ref: &str,
) -> sqlx::Result<Vec<String>> {
    sqlx::query_scalar(&format!(
        "SELECT m.group_id FROM member m \
         WHERE m.table_name = 'package' AND m.state = 'active' AND m.capacity <> 'organization' \
         AND m.table_id = (SELECT id FROM package WHERE {})",
        id_or_name("package", "")
    ))
    .bind(package_ref)
    .fetch_all(&mut *conn)
    .await
}

/// The active groups (or, with `is_organization`, organizations) of a type, in no order.
pub async fn active_groups_of_type(
    conn: &mut AnyConnection,
    group_type: &str,
    is_organization: bool,
) -> sqlx::Result<Vec<GroupRow>> {
    let sql = format!(
        "SELECT {GROUP_COLS} FROM catalog_group WHERE state = 'active' AND type = $1 AND is_organization = $2"
    );
    let rows = sqlx::query(&sql)
        .bind(group_type)
        .bind(is_organization)
        .fetch_all(&mut *conn)
        .await?;
    Ok(rows.iter().map(GroupRow::from_row).collect())
}

/// Every active organization (`is_organization`) or every active group (not), of any type, in
/// no order.
pub async fn active_groups_of_kind(
    conn: &mut AnyConnection,
    is_organization: bool,
) -> sqlx::Result<Vec<GroupRow>> {
    let kind = if is_organization { "true" } else { "false" };
    let sql = format!(
        "SELECT {GROUP_COLS} FROM catalog_group WHERE state = 'active' AND is_organization = {kind}"
    );
    let rows = sqlx::query(&sql).fetch_all(&mut *conn).await?;
    Ok(rows.iter().map(GroupRow::from_row).collect())
}

/// `(name, title)` of the groups and organizations with these names, in no order.
pub async fn group_titles_by_name(
    conn: &mut AnyConnection,
    names: &[&str],
) -> sqlx::Result<Vec<(String, Option<String>)>> {
    let mut out = Vec::with_capacity(names.len());
    for chunk in names.chunks(super::ROW_BATCH) {
        let sql = format!(
            "SELECT name, title FROM catalog_group WHERE name IN ({})",
            placeholders(chunk.len())
        );
        let mut q = sqlx::query_as::<_, (String, Option<String>)>(&sql);
        for n in chunk {
            q = q.bind(*n);
        }
        out.extend(q.fetch_all(&mut *conn).await?);
    }
    Ok(out)
}
