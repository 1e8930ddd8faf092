//! `member` rows: `upsert_member` adds a membership or revives it with a new capacity, for
//! groups and organizations (their users, parents and datasets), `member_create` and the
//! dataset writes (a dataset's groups); `remove_member` ends one (`member_delete`, and the
//! group writes that replace a group's members with a list).

use catalog_framework::prelude::*;

use catalog_framework::store;

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
    let m = store::upsert_member(conn, group_id, table, table_id, capacity).await?;
    Ok(Upserted {
        record: member_record(&m.id, group_id, table, table_id, capacity),
        previous: m
            .previous_capacity
            .map(|cap| member_record(&m.id, group_id, table, table_id, &cap)),
    })
}

/// Ends an object's active membership of a group, with its domain event (none when it was not
/// a member).
pub(crate) async fn remove_member(
    ctx: &mut ActionContext,
    group_id: &str,
    table: &str,
    table_id: &str,
) -> CkanResult<()> {
    let active = store::delete_active_member(ctx.db().await?, group_id, table, table_id).await?;
    if let Some((id, capacity)) = active {
        let before = member_record(&id, group_id, table, table_id, &capacity);
        let mut after = before.clone();
        after["state"] = json!("deleted");
        ctx.emit(
            Entity::Member,
            Change::Deleted,
            group_id,
            Some(before),
            Some(after),
        );
    }
    Ok(())
}

/// Makes the group's active members of one kind (`user`, `package`) exactly `keep` (their ids):
/// the others' memberships end (CKAN's `group_member_save`, for a group write given the list).
pub(crate) async fn remove_members_not_in(
    ctx: &mut ActionContext,
    group_id: &str,
    table: &str,
    keep: &[String],
) -> CkanResult<()> {
    let current = store::group_memberships(ctx.db().await?, group_id).await?;
    for m in current {
        if m.table_name == table && !keep.contains(&m.table_id) {
            remove_member(ctx, group_id, table, &m.table_id).await?;
        }
    }
    Ok(())
}
