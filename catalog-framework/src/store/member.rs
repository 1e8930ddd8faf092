//! Memberships (`member`): users, datasets and groups in groups and organizations.

use sqlx::AnyConnection;

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
