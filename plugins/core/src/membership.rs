//! `member` rows: `upsert_member` adds a membership or revives it with a new capacity, for
//! groups and organizations (their users, parents and datasets), `member_create` and the
//! dataset writes (a dataset's groups).

use catalog_framework::prelude::*;

use crate::ids::new_id;

/// A membership as `upsert_member` left it, and as it was when it was active before.
pub(crate) struct Upserted {
    pub record: Value,
    pub previous: Option<Value>,
}

fn member_record(id: &str, group_id: &str, table: &str, table_id: &str, capacity: &str) -> Value {
    json!({"id": id, "table_name": table, "table_id": table_id, "group_id": group_id, "capacity": capacity, "state": "active"})
}

/// `upsert_member` with its domain event: a member created, or updated when it was active
/// with another capacity (none when nothing changed). Returns the membership's record.
pub(crate) async fn add_member(
    ctx: &mut ActionContext,
    group_id: &str,
    table: &str,
    table_id: &str,
    capacity: &str,
) -> CkanResult<Value> {
    let m = upsert_member(ctx.db().await?, group_id, table, table_id, capacity).await?;
    if m.previous.as_ref() != Some(&m.record) {
        let change = if m.previous.is_some() {
            Change::Updated
        } else {
            Change::Created
        };
        ctx.emit(
            Entity::Member,
            change,
            group_id,
            m.previous,
            Some(m.record.clone()),
        );
    }
    Ok(m.record)
}

pub(crate) async fn upsert_member(
    conn: &mut sqlx::AnyConnection,
    group_id: &str,
    table: &str,
    table_id: &str,
    capacity: &str,
) -> CkanResult<Upserted> {
    let existing: Option<(String, String, String)> =
        sqlx::query_as("SELECT id, capacity, state FROM member WHERE group_id = $1 AND table_name = $2 AND table_id = $3 ORDER BY state LIMIT 1")
            .bind(group_id)
            .bind(table)
            .bind(table_id)
            .fetch_optional(&mut *conn)
            .await?;
    let previous = existing
        .as_ref()
        .filter(|(_, _, state)| state == "active")
        .map(|(id, cap, _)| member_record(id, group_id, table, table_id, cap));
    let id = match existing {
        Some((id, _, _)) => {
            sqlx::query("UPDATE member SET capacity = $2, state = 'active' WHERE id = $1")
                .bind(&id)
                .bind(capacity)
                .execute(&mut *conn)
                .await?;
            id
        }
        None => {
            let id = new_id();
            sqlx::query("INSERT INTO member (id, group_id, table_name, table_id, capacity, state) VALUES ($1, $2, $3, $4, $5, 'active')")
                .bind(&id)
                .bind(group_id)
                .bind(table)
                .bind(table_id)
                .bind(capacity)
                .execute(&mut *conn)
                .await?;
            id
        }
    };
    Ok(Upserted {
        record: member_record(&id, group_id, table, table_id, capacity),
        previous,
    })
}
