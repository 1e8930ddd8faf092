//! Datasets (`package`) with their organization and groups.

use sqlx::any::AnyRow;
use sqlx::AnyConnection;

use super::group::{GroupRow, GROUP_COLS};
use super::rows::{id_or_name, placeholders, Lock, RowExt};

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

/// The joins that add a dataset's organization and groups to the rows of `p`.
fn bundle_select() -> String {
    format!(
        "SELECT p.*, {}, {} FROM p \
         LEFT JOIN catalog_group o ON o.id = p.owner_org AND o.state = 'active' \
         LEFT JOIN member m ON m.table_name = 'package' AND m.table_id = p.id \
           AND m.state = 'active' AND m.capacity <> 'organization' \
         LEFT JOIN catalog_group g ON g.id = m.group_id AND g.is_organization = false \
           AND g.state = 'active'",
        group_cols_as("o", "o_"),
        group_cols_as("g", "g_"),
    )
}

/// Bundles from the rows of [`bundle_select`]: one row per dataset and group, the rows of a
/// dataset next to each other or not.
fn bundles_from_rows(rows: &[AnyRow]) -> Vec<PackageBundle> {
    let mut out: Vec<PackageBundle> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for row in rows {
        let id = row.s("id");
        let i = *at.entry(id).or_insert_with(|| {
            out.push(PackageBundle {
                row: PackageRow::from_row(row),
                organization: row.os("o_id").map(|_| GroupRow::from_prefixed(row, "o_")),
                groups: Vec::new(),
            });
            out.len() - 1
        });
        if let Some(gid) = row.os("g_id") {
            let groups = &mut out[i].groups;
            if !groups.iter().any(|g| g.id == gid) {
                groups.push(GroupRow::from_prefixed(row, "g_"));
            }
        }
    }
    out
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
            "WITH p AS (SELECT {PACKAGE_COLS} FROM package WHERE {}) {}",
            id_or_name("package", ""),
            bundle_select()
        )
    });
    let rows = sqlx::query(sql).bind(r).fetch_all(conn).await?;
    Ok(bundles_from_rows(&rows).into_iter().next())
}

/// The datasets with these ids (absent ones left out), with their organizations and groups:
/// one statement per 500 ids, in no order.
pub async fn package_bundles_by_ids(
    conn: &mut AnyConnection,
    ids: &[String],
) -> sqlx::Result<Vec<PackageBundle>> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let sql = format!(
            "WITH p AS (SELECT {PACKAGE_COLS} FROM package WHERE id IN ({})) {}",
            placeholders(chunk.len()),
            bundle_select()
        );
        let mut q = sqlx::query(&sql);
        for id in chunk {
            q = q.bind(id);
        }
        out.extend(bundles_from_rows(&q.fetch_all(&mut *conn).await?));
    }
    Ok(out)
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
        "SELECT {PACKAGE_COLS} FROM package WHERE {}{}",
        id_or_name("package", ""),
        lock.clause()
    );
    let row = sqlx::query(&sql).bind(r).fetch_optional(conn).await?;
    Ok(row.as_ref().map(PackageRow::from_row))
}

/// The indexed columns of a dataset row and its document, as a dataset write stores them.
pub struct PackageWrite<'a> {
    pub id: &'a str,
    pub name: Option<&'a str>,
    pub dataset_type: Option<&'a str>,
    pub state: Option<&'a str>,
    pub private: bool,
    pub owner_org: Option<&'a str>,
    pub creator_user_id: Option<&'a str>,
    pub metadata_created: Option<&'a str>,
    pub metadata_modified: Option<&'a str>,
    /// The dataset's document (JSON text).
    pub data: &'a str,
}

/// Inserts (`is_new`) or replaces a dataset row.
pub async fn write_package_row(
    conn: &mut AnyConnection,
    row: &PackageWrite<'_>,
    is_new: bool,
) -> sqlx::Result<()> {
    let sql = if is_new {
        "INSERT INTO package (id, name, type, state, private, owner_org, creator_user_id, metadata_created, metadata_modified, data) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
    } else {
        "UPDATE package SET name = $2, type = $3, state = $4, private = $5, owner_org = $6, creator_user_id = $7, \
         metadata_created = $8, metadata_modified = $9, data = $10 WHERE id = $1"
    };
    sqlx::query(sql)
        .bind(row.id)
        .bind(row.name)
        .bind(row.dataset_type)
        .bind(row.state)
        .bind(row.private)
        .bind(row.owner_org)
        .bind(row.creator_user_id)
        .bind(row.metadata_created)
        .bind(row.metadata_modified)
        .bind(row.data)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Rewrites a dataset's document only (its columns unchanged): for changes that are not
/// edits of the dataset, such as a vocabulary tag deleted from under it. The search outbox
/// trigger queues the dataset for reindexing.
pub async fn set_package_data(conn: &mut AnyConnection, id: &str, data: &str) -> sqlx::Result<()> {
    sqlx::query("UPDATE package SET data = $2 WHERE id = $1")
        .bind(id)
        .bind(data)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// The stored document (JSON text) of a dataset.
pub async fn package_data(conn: &mut AnyConnection, id: &str) -> sqlx::Result<Option<String>> {
    let row: Option<(String,)> = sqlx::query_as("SELECT data FROM package WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(row.map(|(d,)| d))
}

/// Replaces a dataset's plugin data (CKAN's `plugin_data`, a JSON object as text).
pub async fn set_package_plugin_data(
    conn: &mut AnyConnection,
    id: &str,
    plugin_data: Option<&str>,
) -> sqlx::Result<()> {
    sqlx::query("UPDATE package SET plugin_data = $1 WHERE id = $2")
        .bind(plugin_data)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// A dataset's plugin data (JSON text), if any is stored.
pub async fn package_plugin_data(
    conn: &mut AnyConnection,
    id: &str,
) -> sqlx::Result<Option<String>> {
    let row: Option<(Option<String>,)> =
        sqlx::query_as("SELECT plugin_data FROM package WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
    Ok(row.and_then(|(d,)| d))
}

/// The dataset that holds a resource id, if any.
pub async fn resource_package_id(
    conn: &mut AnyConnection,
    resource_id: &str,
) -> sqlx::Result<Option<String>> {
    let row: Option<(String,)> = sqlx::query_as("SELECT package_id FROM resource WHERE id = $1")
        .bind(resource_id)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(row.map(|(p,)| p))
}

/// Makes the dataset's active resource rows exactly `resources` (`(id, name)` each); the
/// others are marked deleted. `is_new`: a dataset just inserted, which has no rows to mark.
pub async fn replace_resource_rows(
    conn: &mut AnyConnection,
    package_id: &str,
    resources: &[(Option<&str>, Option<&str>)],
    is_new: bool,
) -> sqlx::Result<()> {
    if !is_new {
        sqlx::query("UPDATE resource SET state = 'deleted' WHERE package_id = $1")
            .bind(package_id)
            .execute(&mut *conn)
            .await?;
    }
    for chunk in resources.chunks(super::ROW_BATCH) {
        let values: Vec<String> = (0..chunk.len())
            .map(|i| format!("(${}, $1, ${}, 'active')", 2 * i + 2, 2 * i + 3))
            .collect();
        let sql = format!(
            "INSERT INTO resource (id, package_id, name, state) VALUES {} \
             ON CONFLICT (id) DO UPDATE SET package_id = excluded.package_id, name = excluded.name, state = 'active'",
            values.join(", ")
        );
        let mut q = sqlx::query(&sql).bind(package_id);
        for (id, name) in chunk {
            q = q.bind(*id).bind(*name);
        }
        q.execute(&mut *conn).await?;
    }
    Ok(())
}

/// Makes the dataset's active tags exactly `tag_ids`; the others are marked deleted.
/// `is_new`: a dataset just inserted, which has no rows to mark.
pub async fn replace_package_tags(
    conn: &mut AnyConnection,
    package_id: &str,
    tag_ids: &[Option<&str>],
    is_new: bool,
) -> sqlx::Result<()> {
    if !is_new {
        sqlx::query("UPDATE package_tag SET state = 'deleted' WHERE package_id = $1")
            .bind(package_id)
            .execute(&mut *conn)
            .await?;
    }
    for chunk in tag_ids.chunks(super::ROW_BATCH) {
        let values: Vec<String> = (0..chunk.len())
            .map(|i| format!("($1, ${}, 'active')", i + 2))
            .collect();
        let sql = format!(
            "INSERT INTO package_tag (package_id, tag_id, state) VALUES {} \
             ON CONFLICT (package_id, tag_id) DO UPDATE SET state = 'active'",
            values.join(", ")
        );
        let mut q = sqlx::query(&sql).bind(package_id);
        for t in chunk {
            q = q.bind(*t);
        }
        q.execute(&mut *conn).await?;
    }
    Ok(())
}

/// Keeps the dataset's organization membership row as CKAN's `package_owner_org_update`
/// does: the row of `owner_org` active (created if absent), any other organization's deleted.
/// `is_new`: a dataset just inserted, which has no membership rows yet.
pub async fn set_package_organization(
    conn: &mut AnyConnection,
    package_id: &str,
    owner_org: Option<&str>,
    is_new: bool,
) -> sqlx::Result<()> {
    // One statement for an existing dataset: its other organizations' memberships deleted,
    // the owner's made active, and the owner's returned if it has one.
    let has_owner = !is_new && {
        let kept: Vec<(String,)> = sqlx::query_as(
            "UPDATE member SET state = CASE WHEN group_id = $2 THEN 'active' ELSE 'deleted' END \
             WHERE table_name = 'package' AND table_id = $1 AND capacity = 'organization' \
             AND (state <> 'deleted' OR group_id = $2) RETURNING group_id",
        )
        .bind(package_id)
        .bind(owner_org)
        .fetch_all(&mut *conn)
        .await?;
        kept.iter().any(|(g,)| Some(g.as_str()) == owner_org)
    };
    let Some(org) = owner_org else {
        return Ok(());
    };
    if !has_owner {
        sqlx::query(
            "INSERT INTO member (id, group_id, table_name, table_id, capacity, state) VALUES ($1, $2, 'package', $3, 'organization', 'active')",
        )
        .bind(super::new_id())
        .bind(org)
        .bind(package_id)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Marks the dataset's group memberships (not its organization's) deleted.
pub async fn clear_package_groups(conn: &mut AnyConnection, package_id: &str) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE member SET state = 'deleted' WHERE table_name = 'package' AND table_id = $1 AND capacity <> 'organization'",
    )
    .bind(package_id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The dataset holding a name: `(id, state)`.
pub async fn package_name_holder(
    conn: &mut AnyConnection,
    name: &str,
) -> sqlx::Result<Option<(String, String)>> {
    sqlx::query_as("SELECT id, state FROM package WHERE name = $1")
        .bind(name)
        .fetch_optional(&mut *conn)
        .await
}

/// Frees the name of a deleted dataset as CKAN does: the dataset takes its id as name, in its
/// row and in its document. False (and nothing changed) when another dataset is already named
/// by that id.
pub async fn rename_deleted_package_to_id(
    conn: &mut AnyConnection,
    id: &str,
) -> Result<bool, crate::error::CkanError> {
    if package_name_holder(&mut *conn, id).await?.is_some() {
        return Ok(false);
    }
    let data = package_data(&mut *conn, id)
        .await?
        .ok_or_else(|| crate::error::internal("the dataset vanished"))?;
    let mut doc: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&data)?;
    doc.insert("name".into(), serde_json::Value::String(id.to_string()));
    sqlx::query("UPDATE package SET name = id, data = $2 WHERE id = $1")
        .bind(id)
        .bind(serde_json::to_string(&doc)?)
        .execute(&mut *conn)
        .await?;
    Ok(true)
}

/// Marks a dataset deleted (row and document), with its memberships; its collaborators go.
pub async fn mark_package_deleted(
    conn: &mut AnyConnection,
    id: &str,
    metadata_modified: &str,
    data: &str,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE package SET state = 'deleted', metadata_modified = $2, data = $3 WHERE id = $1",
    )
    .bind(id)
    .bind(metadata_modified)
    .bind(data)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "UPDATE member SET state = 'deleted' WHERE table_name = 'package' AND table_id = $1",
    )
    .bind(id)
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM collaborator WHERE package_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Removes a dataset and every row that hangs off it; returns the ids of the resources removed
/// (deleted ones included), whose files the caller removes once the purge has committed.
pub async fn purge_package(conn: &mut AnyConnection, id: &str) -> sqlx::Result<Vec<String>> {
    let resources: Vec<(String,)> =
        sqlx::query_as("DELETE FROM resource WHERE package_id = $1 RETURNING id")
            .bind(id)
            .fetch_all(&mut *conn)
            .await?;
    for sql in [
        "DELETE FROM member WHERE table_name = 'package' AND table_id = $1",
        "DELETE FROM collaborator WHERE package_id = $1",
        "DELETE FROM package_tag WHERE package_id = $1",
        "DELETE FROM package_relationship WHERE subject_package_id = $1 OR object_package_id = $1",
        "DELETE FROM package WHERE id = $1",
    ] {
        sqlx::query(sql).bind(id).execute(&mut *conn).await?;
    }
    Ok(resources.into_iter().map(|(id,)| id).collect())
}

/// The ids of an organization's datasets that are not deleted.
pub async fn organization_package_ids(
    conn: &mut AnyConnection,
    org_id: &str,
) -> sqlx::Result<Vec<String>> {
    let rows: Vec<(String,)> =
        sqlx::query_as("SELECT id FROM package WHERE owner_org = $1 AND state <> 'deleted'")
            .bind(org_id)
            .fetch_all(&mut *conn)
            .await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

/// Takes a dataset out of its organization: no owner, public, with its new document.
pub async fn detach_package_from_organization(
    conn: &mut AnyConnection,
    id: &str,
    data: &str,
) -> sqlx::Result<()> {
    sqlx::query("UPDATE package SET owner_org = NULL, private = false, data = $2 WHERE id = $1")
        .bind(id)
        .bind(data)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Names of the active public datasets, by name, a page of them.
pub async fn public_package_names(
    conn: &mut AnyConnection,
    limit: i64,
    offset: i64,
) -> sqlx::Result<Vec<String>> {
    sqlx::query_scalar(
        "SELECT name FROM package WHERE state = 'active' AND private = false ORDER BY name LIMIT $1 OFFSET $2",
    )
    .bind(limit)
    .bind(offset)
    .fetch_all(&mut *conn)
    .await
}

/// Ids of active datasets, the most recently modified first, a page of them; private ones
/// only when `include_private`.
pub async fn recently_modified_package_ids(
    conn: &mut AnyConnection,
    include_private: bool,
    limit: i64,
    offset: i64,
) -> sqlx::Result<Vec<String>> {
    let private_clause = if include_private {
        ""
    } else {
        " AND private = false"
    };
    let sql = format!(
        "SELECT id FROM package WHERE state = 'active'{private_clause} ORDER BY metadata_modified DESC LIMIT $1 OFFSET $2"
    );
    sqlx::query_scalar(&sql)
        .bind(limit)
        .bind(offset)
        .fetch_all(&mut *conn)
        .await
}

/// Marks every membership of a dataset deleted (its organization's and its groups').
pub async fn clear_package_memberships(conn: &mut AnyConnection, id: &str) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE member SET state = 'deleted' WHERE table_name = 'package' AND table_id = $1",
    )
    .bind(id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Active datasets (with their documents) for an autocomplete, sorted by name; with `like`
/// (a lower-cased `LIKE` pattern, `\` escaping) only those whose name or lower-cased document
/// matches it.
pub async fn active_packages_like(
    conn: &mut AnyConnection,
    like: Option<&str>,
) -> sqlx::Result<Vec<PackageRow>> {
    let mut sql = format!("SELECT {PACKAGE_COLS} FROM package WHERE state = 'active'");
    if like.is_some() {
        sql.push_str(" AND (LOWER(name) LIKE $1 ESCAPE '\\' OR LOWER(data) LIKE $1 ESCAPE '\\')");
    }
    let mut query = sqlx::query(&sql);
    if let Some(like) = like {
        query = query.bind(like);
    }
    let mut rows: Vec<PackageRow> = query
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(PackageRow::from_row)
        .collect();
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(rows)
}

/// Which of the datasets a user created a count or list covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreatedScope {
    /// Every one not deleted: private ones and drafts too (what the user or a sysadmin sees).
    NotDeleted,
    /// Only the active public ones (what anyone else sees).
    ActivePublic,
}

impl CreatedScope {
    fn clause(self) -> &'static str {
        match self {
            CreatedScope::NotDeleted => "state <> 'deleted'",
            CreatedScope::ActivePublic => "state = 'active' AND private = false",
        }
    }
}

/// How many datasets a user created, of those `scope` covers.
pub async fn created_package_count(
    conn: &mut AnyConnection,
    creator_user_id: &str,
    scope: CreatedScope,
) -> sqlx::Result<i64> {
    let sql = format!(
        "SELECT COUNT(*) AS n FROM package WHERE creator_user_id = $1 AND {}",
        scope.clause()
    );
    Ok(sqlx::query(&sql)
        .bind(creator_user_id)
        .fetch_one(&mut *conn)
        .await?
        .i("n"))
}

/// The ids of the 50 most recently modified datasets a user created, of those `scope` covers.
pub async fn created_package_ids(
    conn: &mut AnyConnection,
    creator_user_id: &str,
    scope: CreatedScope,
) -> sqlx::Result<Vec<String>> {
    let sql = format!(
        "SELECT id FROM package WHERE creator_user_id = $1 AND {} ORDER BY metadata_modified DESC LIMIT 50",
        scope.clause()
    );
    sqlx::query_scalar(&sql)
        .bind(creator_user_id)
        .fetch_all(&mut *conn)
        .await
}

/// The dataset of an active resource, by the resource's id (preferred) or exact name.
pub async fn active_resource_package_id(
    conn: &mut AnyConnection,
    id_or_name: &str,
) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar(&format!(
        "SELECT package_id FROM resource WHERE {}",
        super::rows::id_or_name("resource", " AND state = 'active'")
    ))
    .bind(id_or_name)
    .fetch_optional(&mut *conn)
    .await
}

/// An active public dataset's document with what a resource search shows beside it.
#[derive(Debug, Clone)]
pub struct PublicPackageDocument {
    pub id: String,
    pub dataset_type: String,
    pub metadata_created: String,
    /// The dataset's document (JSON text).
    pub data: String,
}

/// Every active public dataset (of any type) with its document, in no order.
pub async fn public_package_documents(
    conn: &mut AnyConnection,
) -> sqlx::Result<Vec<PublicPackageDocument>> {
    let rows = sqlx::query(
        "SELECT id, type, metadata_created, data FROM package WHERE state = 'active' AND private = false",
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .iter()
        .map(|r| PublicPackageDocument {
            id: r.s("id"),
            dataset_type: r.s("type"),
            metadata_created: r.s("metadata_created"),
            data: r.s("data"),
        })
        .collect())
}

/// A dataset's row (for authorization) and its `package_show` dict, also serialized (what an
/// HTTP answer writes as it is, without cloning and serializing the dict again): what the
/// `package_show` cache keeps per dataset.
pub struct CachedPackage {
    pub row: PackageRow,
    pub dict: serde_json::Value,
    pub json: std::sync::Arc<str>,
}

impl CachedPackage {
    pub fn new(row: PackageRow, dict: serde_json::Value) -> CachedPackage {
        let json = crate::json::to_ckan_json_string(&dict).into();
        CachedPackage { row, dict, json }
    }
}
