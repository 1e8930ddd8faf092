//! Memberships (`member`): users, datasets and groups in groups and organizations.

use sqlx::AnyConnection;

use super::rows::RowExt;

/// What [`upsert_member`] found before it wrote: the row's id and capacity, when it was active.
pub struct MemberUpsert {
    pub id: String,
    /// The capacity of the membership when it was already active.
    pub previous_capacity: Option<String>,
}

/// Adds a membership, or revives it (deleted) or changes its capacity (active): one row per
/// group, table and object.
pub async fn upsert_member(
    conn: &mut AnyConnection,
    group_id: &str,
    table: &str,
    table_id: &str,
    capacity: &str,
) -> sqlx::Result<MemberUpsert> {
    let existing: Option<(String, String, String)> = sqlx::query_as(
        "SELECT id, capacity, state FROM member WHERE group_id = $1 AND table_name = $2 AND table_id = $3 ORDER BY state LIMIT 1",
    )
    .bind(group_id)
    .bind(table)
    .bind(table_id)
    .fetch_optional(&mut *conn)
    .await?;
    match existing {
        Some((id, previous, state)) => {
            sqlx::query("UPDATE member SET capacity = $2, state = 'active' WHERE id = $1")
                .bind(&id)
                .bind(capacity)
                .execute(&mut *conn)
                .await?;
            Ok(MemberUpsert {
                id,
                previous_capacity: (state == "active").then_some(previous),
            })
        }
        None => {
            let id = super::new_id();
            sqlx::query(
                "INSERT INTO member (id, group_id, table_name, table_id, capacity, state) VALUES ($1, $2, $3, $4, $5, 'active')",
            )
            .bind(&id)
            .bind(group_id)
            .bind(table)
            .bind(table_id)
            .bind(capacity)
            .execute(&mut *conn)
            .await?;
            Ok(MemberUpsert {
                id,
                previous_capacity: None,
            })
        }
    }
}

/// Ends an object's active membership of a group (marks it deleted); returns what it was,
/// `(id, capacity)`, when there was one.
pub async fn delete_active_member(
    conn: &mut AnyConnection,
    group_id: &str,
    table: &str,
    table_id: &str,
) -> sqlx::Result<Option<(String, String)>> {
    let active: Option<(String, String)> = sqlx::query_as(
        "SELECT id, capacity FROM member WHERE group_id = $1 AND table_name = $2 AND table_id = $3 AND state = 'active'",
    )
    .bind(group_id)
    .bind(table)
    .bind(table_id)
    .fetch_optional(&mut *conn)
    .await?;
    sqlx::query("UPDATE member SET state = 'deleted' WHERE group_id = $1 AND table_name = $2 AND table_id = $3 AND state = 'active'")
        .bind(group_id)
        .bind(table)
        .bind(table_id)
        .execute(&mut *conn)
        .await?;
    Ok(active)
}

/// An active membership of a group, seen from the group: what is a member, and as what.
#[derive(Debug, Clone)]
pub struct GroupMembership {
    /// `user`, `package` or `group`.
    pub table_name: String,
    pub table_id: String,
    pub capacity: String,
}

/// The active memberships of a group (users, datasets and groups in it), by table name, then id.
pub async fn group_memberships(
    conn: &mut AnyConnection,
    group_id: &str,
) -> sqlx::Result<Vec<GroupMembership>> {
    let rows = sqlx::query("SELECT table_id, table_name, capacity FROM member WHERE group_id = $1 AND state = 'active' ORDER BY table_name, table_id")
        .bind(group_id)
        .fetch_all(&mut *conn)
        .await?;
    Ok(rows
        .iter()
        .map(|r| GroupMembership {
            table_name: r.s("table_name"),
            table_id: r.s("table_id"),
            capacity: r.s("capacity"),
        })
        .collect())
}

/// Per group, how many dataset membership rows (of any state) point to active datasets
/// (private ones included), as CKAN counts a group's datasets to sort `group_list`; groups
/// without any are absent.
pub async fn package_member_counts(
    conn: &mut AnyConnection,
) -> sqlx::Result<std::collections::HashMap<String, i64>> {
    let rows = sqlx::query(
        "SELECT m.group_id AS gid, COUNT(*) AS n FROM member m JOIN package p ON p.id = m.table_id \
         WHERE m.table_name = 'package' AND p.state = 'active' GROUP BY m.group_id",
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.iter().map(|r| (r.s("gid"), r.i("n"))).collect())
}
