//! The `activity` table: writing an activity (its data as a patch where that is smaller) and
//! reading activities back with their data rebuilt.
//!
//! Here: the row, one activity by id, the one before another, and the data of activities
//! rebuilt from their chains. Writing is in `insert.rs`, the pages of the list actions in
//! `list.rs`, removing old activities in `delete.rs`.

mod delete;
mod insert;
mod list;

use std::collections::HashMap;

use catalog_framework::prelude::*;
use catalog_framework::store::placeholders;
use catalog_framework::store::RowExt;
use sqlx::any::AnyRow;
use sqlx::AnyConnection;

use crate::patch::{self, SNAPSHOT_EVERY};

pub(crate) use delete::{age_counts, count, delete, Selection};
pub(crate) use insert::{insert, LastActivities, NewActivity};
pub(crate) use list::{list, ListQuery, Scope};

/// An activity as it is stored.
#[derive(Clone)]
pub(crate) struct ActivityRow {
    pub seq: i64,
    pub id: String,
    pub timestamp: String,
    pub user_id: Option<String>,
    pub object_id: String,
    pub activity_type: String,
    pub permission_labels: Option<Vec<String>>,
    base_seq: Option<i64>,
    data: String,
}

const COLS: &str =
    "seq, id, timestamp, user_id, object_id, activity_type, permission_labels, base_seq, data";

/// [`COLS`] of the activity table aliased `a`.
const ACOLS: &str = "a.seq, a.id, a.timestamp, a.user_id, a.object_id, a.activity_type, \
    a.permission_labels, a.base_seq, a.data";

impl ActivityRow {
    fn from_row(r: &AnyRow) -> ActivityRow {
        ActivityRow {
            seq: r.i("seq"),
            id: r.s("id"),
            timestamp: r.s("timestamp"),
            user_id: r.os("user_id"),
            object_id: r.s("object_id"),
            activity_type: r.s("activity_type"),
            permission_labels: r
                .os("permission_labels")
                .and_then(|l| serde_json::from_str(&l).ok()),
            base_seq: r.oi("base_seq"),
            data: r.s("data"),
        }
    }

    /// CKAN's activity dict, in CKAN's key order.
    pub(crate) fn to_dict(&self, data: Value) -> Value {
        json!({
            "id": self.id,
            "timestamp": self.timestamp,
            "user_id": self.user_id,
            "object_id": self.object_id,
            "activity_type": self.activity_type,
            "data": data,
            "permission_labels": self.permission_labels,
        })
    }
}

/// The `LIKE` pattern of an activity type's kind: `new package` and `changed package` are of
/// kind `package`, `new resource view` of `resource view`. The kinds are the recorder's
/// words, free of `LIKE` wildcards.
fn kind_pattern(activity_type: &str) -> String {
    let kind = activity_type
        .split_once(' ')
        .map_or(activity_type, |(_, kind)| kind);
    format!("%{kind}")
}

/// One activity by id.
pub(crate) async fn activity_by_id(
    conn: &mut AnyConnection,
    id: &str,
) -> CkanResult<Option<ActivityRow>> {
    Ok(
        sqlx::query(&format!("SELECT {COLS} FROM activity WHERE id = $1"))
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?
            .as_ref()
            .map(ActivityRow::from_row),
    )
}

/// The activity of the same object and kind (a dataset's package activities, its resource
/// view activities) just before `a`, if any.
pub(crate) async fn previous(
    conn: &mut AnyConnection,
    a: &ActivityRow,
) -> CkanResult<Option<ActivityRow>> {
    Ok(sqlx::query(&format!(
        "SELECT {COLS} FROM activity WHERE object_id = $1 AND seq < $2 AND activity_type LIKE $3 \
         ORDER BY seq DESC LIMIT 1"
    ))
    .bind(&a.object_id)
    .bind(a.seq)
    .bind(kind_pattern(&a.activity_type))
    .fetch_optional(&mut *conn)
    .await?
    .as_ref()
    .map(ActivityRow::from_row))
}

/// The data of each activity, rebuilt from the whole copies and patches of its chain: one
/// statement per round of missing ancestors (at most [`SNAPSHOT_EVERY`] rounds).
pub(crate) async fn data_of(
    conn: &mut AnyConnection,
    rows: Vec<ActivityRow>,
) -> CkanResult<HashMap<i64, Value>> {
    let wanted: Vec<i64> = rows.iter().map(|r| r.seq).collect();
    let mut raw: HashMap<i64, (Option<i64>, String)> = rows
        .into_iter()
        .map(|r| (r.seq, (r.base_seq, r.data)))
        .collect();
    for _ in 0..=SNAPSHOT_EVERY {
        let missing: Vec<i64> = raw
            .values()
            .filter_map(|(base, _)| *base)
            .filter(|b| !raw.contains_key(b))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        if missing.is_empty() {
            break;
        }
        for chunk in missing.chunks(500) {
            let sql = format!(
                "SELECT seq, base_seq, data FROM activity WHERE seq IN ({})",
                placeholders(chunk.len())
            );
            let mut q = sqlx::query(&sql);
            for s in chunk {
                q = q.bind(*s);
            }
            for r in q.fetch_all(&mut *conn).await? {
                raw.insert(r.i("seq"), (r.oi("base_seq"), r.s("data")));
            }
        }
    }
    let mut done: HashMap<i64, Value> = HashMap::new();
    for seq in wanted {
        let value = rebuild(seq, &raw, Some(&mut done))?;
        done.insert(seq, value);
    }
    Ok(done)
}

/// The data of `seq`: its whole copy, or its base's data with its patch applied.
/// `done`: data already rebuilt, which the chain stops at, and which keeps each step's data
/// (for a caller that rebuilds several activities of the same chain).
fn rebuild(
    seq: i64,
    raw: &HashMap<i64, (Option<i64>, String)>,
    mut done: Option<&mut HashMap<i64, Value>>,
) -> CkanResult<Value> {
    // The chain from `seq` back to a whole copy (or to data already rebuilt).
    let mut chain = Vec::new();
    let mut cur = seq;
    let mut value = loop {
        if let Some(v) = done.as_ref().and_then(|d| d.get(&cur)) {
            break v.clone();
        }
        let (base, data) = raw
            .get(&cur)
            .ok_or_else(|| internal(format!("activity data {cur} is missing")))?;
        match base {
            None => break serde_json::from_str(data)?,
            Some(b) => {
                chain.push(cur);
                cur = *b;
            }
        }
    };
    for s in chain.into_iter().rev() {
        let p: Value = serde_json::from_str(&raw[&s].1)?;
        value = patch::apply(value, &p)
            .ok_or_else(|| internal(format!("activity data {s} does not fit its base")))?;
        if let Some(d) = done.as_mut() {
            d.insert(s, value.clone());
        }
    }
    Ok(value)
}
