//! What plugins ask of the core tables without naming them: `(id, name)` references of
//! datasets and groups (the legacy API writes either), the public datasets of a group, an
//! organization or a tag, and subqueries (`x IN (<subquery>)`) that a plugin's query over its
//! own tables filters by (live users, live objects, a group's public datasets).

use sqlx::AnyConnection;

use super::rows::id_or_name;

/// `(id, name)` of the dataset an id or a name refers to.
pub async fn package_ref(
    conn: &mut AnyConnection,
    reference: &str,
) -> sqlx::Result<Option<(String, String)>> {
    sqlx::query_as(&format!(
        "SELECT id, name FROM package WHERE {}",
        id_or_name("package", "")
    ))
    .bind(reference)
    .fetch_optional(&mut *conn)
    .await
}

/// `(id, name)` of the group or organization an id or a name refers to.
pub async fn group_ref(
    conn: &mut AnyConnection,
    reference: &str,
) -> sqlx::Result<Option<(String, String)>> {
    sqlx::query_as(&format!(
        "SELECT id, name FROM catalog_group WHERE {}",
        id_or_name("catalog_group", "")
    ))
    .bind(reference)
    .fetch_optional(&mut *conn)
    .await
}

/// Whether a group or organization of any state holds `name`.
pub async fn group_name_taken(conn: &mut AnyConnection, name: &str) -> sqlx::Result<bool> {
    let found: Option<String> =
        sqlx::query_scalar("SELECT id FROM catalog_group WHERE name = $1 LIMIT 1")
            .bind(name)
            .fetch_optional(&mut *conn)
            .await?;
    Ok(found.is_some())
}

/// `(id, name)` of every active public dataset, by name.
pub async fn public_package_refs(conn: &mut AnyConnection) -> sqlx::Result<Vec<(String, String)>> {
    sqlx::query_as(
        "SELECT id, name FROM package WHERE state = 'active' AND private = false ORDER BY name",
    )
    .fetch_all(&mut *conn)
    .await
}

/// `(id, name)` of the active public datasets of an organization (`owner_org`).
pub async fn organization_public_package_refs(
    conn: &mut AnyConnection,
    organization_id: &str,
) -> sqlx::Result<Vec<(String, String)>> {
    sqlx::query_as(
        "SELECT id, name FROM package WHERE owner_org = $1 AND state = 'active' AND private = false",
    )
    .bind(organization_id)
    .fetch_all(&mut *conn)
    .await
}

/// `(id, name)` of the active public datasets that are active members of a group.
pub async fn group_public_package_refs(
    conn: &mut AnyConnection,
    group_id: &str,
) -> sqlx::Result<Vec<(String, String)>> {
    sqlx::query_as(
        "SELECT p.id, p.name FROM member m JOIN package p ON p.id = m.table_id \
         WHERE m.group_id = $1 AND m.table_name = 'package' AND m.state = 'active' \
         AND p.state = 'active' AND p.private = false",
    )
    .bind(group_id)
    .fetch_all(&mut *conn)
    .await
}

/// `(id, name)` of the active public datasets carrying a tag (by the tag's id).
pub async fn tag_public_package_refs(
    conn: &mut AnyConnection,
    tag_id: &str,
) -> sqlx::Result<Vec<(String, String)>> {
    sqlx::query_as(
        "SELECT p.id, p.name FROM package_tag pt JOIN package p ON p.id = pt.package_id \
         WHERE pt.tag_id = $1 AND pt.state = 'active' AND p.state = 'active' AND p.private = false",
    )
    .bind(tag_id)
    .fetch_all(&mut *conn)
    .await
}

/// Subqueries of ids, for `x IN (…)` in a plugin's own query.
pub mod subquery {
    /// Users that are not deleted.
    pub const LIVE_USERS: &str = "SELECT id FROM catalog_user WHERE state <> 'deleted'";
    /// Datasets that are not deleted.
    pub const LIVE_PACKAGES: &str = "SELECT id FROM package WHERE state <> 'deleted'";
    /// Datasets that are active and public (what an anonymous visitor can read).
    pub const PUBLIC_ACTIVE_PACKAGES: &str =
        "SELECT id FROM package WHERE state = 'active' AND private = false";
    /// Groups (not organizations) that are not deleted.
    pub const LIVE_GROUPS: &str =
        "SELECT id FROM catalog_group WHERE state <> 'deleted' AND is_organization = false";
    /// Organizations that are not deleted.
    pub const LIVE_ORGANIZATIONS: &str =
        "SELECT id FROM catalog_group WHERE state <> 'deleted' AND is_organization = true";

    /// The public datasets that are members of the groups `groups` (a condition on the group
    /// id: `= $1`, `IN ($2, $3)`) now: active members of active datasets, or deleted
    /// memberships of deleted datasets (CKAN's `_group_activity_query`).
    pub fn group_public_datasets(groups: &str) -> String {
        format!(
            "SELECT p.id FROM member m JOIN package p ON p.id = m.table_id \
             WHERE m.group_id {groups} AND m.table_name = 'package' AND p.private = false \
             AND ((m.state = 'active' AND p.state = 'active') OR (m.state = 'deleted' AND p.state = 'deleted'))"
        )
    }

    /// The public datasets of the organizations `organizations` (a condition on `owner_org`:
    /// `= $1`, `IN ($2, $3)`).
    pub fn organization_public_datasets(organizations: &str) -> String {
        format!("SELECT id FROM package WHERE owner_org {organizations} AND private = false")
    }
}

/// A deleted dataset, organization or group (what a sysadmin's trash lists): its kind
/// (`package`, `organization`, `group`), id, name and title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeletedRef {
    pub kind: &'static str,
    pub id: String,
    pub name: String,
    pub title: Option<String>,
}

/// The deleted datasets, organizations and groups, at most `limit` of each kind, by name.
pub async fn deleted_refs(conn: &mut AnyConnection, limit: i64) -> sqlx::Result<Vec<DeletedRef>> {
    let mut out = Vec::new();
    let packages: Vec<(String, String)> = sqlx::query_as(
        "SELECT id, name FROM package WHERE state = 'deleted' ORDER BY name LIMIT $1",
    )
    .bind(limit)
    .fetch_all(&mut *conn)
    .await?;
    out.extend(packages.into_iter().map(|(id, name)| DeletedRef {
        kind: "package",
        id,
        name,
        title: None,
    }));
    for (kind, flag) in [("organization", true), ("group", false)] {
        let rows: Vec<(String, String, Option<String>)> = sqlx::query_as(
            "SELECT id, name, title FROM catalog_group \
             WHERE state = 'deleted' AND is_organization = $1 ORDER BY name LIMIT $2",
        )
        .bind(flag)
        .bind(limit)
        .fetch_all(&mut *conn)
        .await?;
        out.extend(rows.into_iter().map(|(id, name, title)| DeletedRef {
            kind,
            id,
            name,
            title,
        }));
    }
    Ok(out)
}
