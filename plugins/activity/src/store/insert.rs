//! Writing an activity: its data as a patch against the object's previous activity where
//! that is smaller, with the last activities this node recorded kept whole.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use catalog_framework::heap_bytes;
use catalog_framework::params::equal_but_key;
use catalog_framework::prelude::*;
use catalog_framework::store::time::now_iso;
use catalog_framework::store::RowExt;
use sqlx::AnyConnection;

use super::{kind_pattern, rebuild};
use crate::patch::{self, SNAPSHOT_EVERY};

/// A new activity.
pub(crate) struct NewActivity<'a> {
    pub user_id: Option<&'a str>,
    pub object_id: &'a str,
    pub activity_type: &'a str,
    pub permission_labels: Option<&'a [String]>,
    pub data: &'a Value,
    /// The object was just created (no earlier activity of it is looked for: stored whole).
    pub new_object: bool,
}

/// The last activity this node recorded of an object (of one kind), with its data whole:
/// the next activity of the object is stored as a patch against it without reading the chain
/// of patches since the last whole copy and applying them again. It is used only while it is
/// still the object's last activity in the store, known by its id (a random UUID: an activity
/// of a rolled-back transaction, or one recorded by another node since, is never taken for it).
struct LastActivity {
    id: String,
    seq: i64,
    depth: i64,
    data: Arc<Value>,
    /// Its memory, as [`heap_bytes`] counts it.
    bytes: usize,
}

/// At most this many objects' last activities are kept…
const LAST_KEPT: usize = 128;
/// …holding at most this much memory in all…
const LAST_BYTES: usize = 32 << 20;
/// …each at most an eighth of it (a bigger one is read back from the store).
const LAST_ENTRY_BYTES: usize = LAST_BYTES / 8;

/// The last activities this node recorded (see [`LastActivity`]), by object id and kind
/// pattern, least recently used first; kept in the app by the plugin's setup.
#[derive(Default)]
pub(crate) struct LastActivities(Mutex<Vec<(String, LastActivity)>>);

impl LastActivities {
    fn get(&self, key: &str) -> Option<(String, i64, i64, Arc<Value>)> {
        let mut kept = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let i = kept.iter().position(|(k, _)| k == key)?;
        let entry = kept.remove(i);
        let l = &entry.1;
        let found = (l.id.clone(), l.seq, l.depth, l.data.clone());
        kept.push(entry);
        Some(found)
    }

    /// Keeps the activity just recorded as its object's last; one too big only drops the
    /// object's older one.
    fn put(&self, key: String, id: String, seq: i64, depth: i64, data: &Value, json_len: usize) {
        // JSON text is smaller than its parsed value: a text over the limit is not parsed
        // memory under it.
        let last = (json_len <= LAST_ENTRY_BYTES)
            .then(|| heap_bytes(data))
            .filter(|bytes| *bytes <= LAST_ENTRY_BYTES)
            .map(|bytes| LastActivity {
                id,
                seq,
                depth,
                data: Arc::new(data.clone()),
                bytes,
            });
        let mut kept = self.0.lock().unwrap_or_else(|p| p.into_inner());
        kept.retain(|(k, _)| *k != key);
        let Some(last) = last else {
            return;
        };
        let mut held: usize = kept.iter().map(|(_, l)| l.bytes).sum::<usize>() + last.bytes;
        while !kept.is_empty() && (kept.len() >= LAST_KEPT || held > LAST_BYTES) {
            held -= kept.remove(0).1.bytes;
        }
        kept.push((key, last));
    }
}

/// Writes an activity in the caller's transaction, unless `skip_if_same` and the previous
/// activity of the object has the same data but for the dataset's `metadata_modified` (an
/// update that changed nothing). Its data is stored as a patch against the previous activity
/// when that is smaller and the chain of patches since the last whole copy is shorter than
/// [`SNAPSHOT_EVERY`]. Returns whether it wrote.
pub(crate) async fn insert(
    conn: &mut AnyConnection,
    kept: &LastActivities,
    a: &NewActivity<'_>,
    skip_if_same: bool,
) -> CkanResult<bool> {
    let whole = serde_json::to_string(a.data)?;
    let pattern = kind_pattern(a.activity_type);
    let key = format!("{}\u{0}{pattern}", a.object_id);
    if a.new_object {
        let (id, seq) = insert_stored(conn, a, None, 0, &whole).await?;
        kept.put(key, id, seq, 0, a.data, whole.len());
        return Ok(true);
    }
    // The previous activity: the one this process recorded last, when it still is the last in
    // the store; else rebuilt from its chain since its last whole copy, read in one statement.
    // Among the object's activities of the same kind only (a dataset's `… package` activities
    // patch against each other, its `… resource view` activities against each other).
    let mut previous: Option<(i64, i64, Arc<Value>)> = None;
    if let Some((id, seq, depth, data)) = kept.get(&key) {
        let last: Option<String> = sqlx::query_scalar(
            "SELECT id FROM activity WHERE object_id = $1 AND activity_type LIKE $2 \
             ORDER BY seq DESC LIMIT 1",
        )
        .bind(a.object_id)
        .bind(&pattern)
        .fetch_optional(&mut *conn)
        .await?;
        if last.as_deref() == Some(id.as_str()) {
            previous = Some((seq, depth, data));
        }
    }
    if previous.is_none() {
        let chain = sqlx::query(
            "SELECT seq, base_seq, depth, data FROM activity WHERE object_id = $1 AND activity_type LIKE $2 \
             AND seq >= COALESCE((SELECT MAX(seq) FROM activity WHERE object_id = $1 \
             AND activity_type LIKE $2 AND base_seq IS NULL), 0) ORDER BY seq",
        )
        .bind(a.object_id)
        .bind(&pattern)
        .fetch_all(&mut *conn)
        .await?;
        if let Some(last) = chain.last() {
            let (seq, depth) = (last.i("seq"), last.i("depth"));
            let raw: HashMap<i64, (Option<i64>, String)> = chain
                .iter()
                .map(|r| (r.i("seq"), (r.oi("base_seq"), r.s("data"))))
                .collect();
            previous = Some((seq, depth, Arc::new(rebuild(seq, &raw, None)?)));
        }
    }
    let mut stored = (None, 0i64, whole.clone());
    if let Some((seq, depth, old)) = previous {
        if skip_if_same && same_but_modified(&old, a.data) {
            return Ok(false);
        }
        if depth + 1 < SNAPSHOT_EVERY {
            let p = patch::diff(&old, a.data).unwrap_or_else(|| json!({"~": {}}));
            let p = serde_json::to_string(&p)?;
            if p.len() < whole.len() {
                stored = (Some(seq), depth + 1, p);
            }
        }
    }
    let (base_seq, depth, data) = stored;
    let (id, seq) = insert_stored(conn, a, base_seq, depth, &data).await?;
    kept.put(key, id, seq, depth, a.data, whole.len());
    Ok(true)
}

/// Writes an activity row whose data is stored as given (whole, or a patch against
/// `base_seq`); returns its id and sequence number.
async fn insert_stored(
    conn: &mut AnyConnection,
    a: &NewActivity<'_>,
    base_seq: Option<i64>,
    depth: i64,
    data: &str,
) -> CkanResult<(String, i64)> {
    let labels = a.permission_labels.map(serde_json::to_string).transpose()?;
    let id = uuid::Uuid::new_v4().to_string();
    let seq: i64 = sqlx::query_scalar(
        "INSERT INTO activity (id, timestamp, user_id, object_id, activity_type, permission_labels, base_seq, depth, data) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING seq",
    )
    .bind(&id)
    .bind(now_iso())
    .bind(a.user_id)
    .bind(a.object_id)
    .bind(a.activity_type)
    .bind(labels)
    .bind(base_seq)
    .bind(depth)
    .bind(data)
    .fetch_one(&mut *conn)
    .await?;
    Ok((id, seq))
}

/// Equal but for `package.metadata_modified` (compared in place: the data of a dataset with
/// many resources is large).
fn same_but_modified(a: &Value, b: &Value) -> bool {
    match (a.as_object(), b.as_object()) {
        (Some(a), Some(b)) => {
            equal_but_key(a, b, "package")
                && match (a.get("package"), b.get("package")) {
                    (Some(Value::Object(pa)), Some(Value::Object(pb))) => {
                        equal_but_key(pa, pb, "metadata_modified")
                    }
                    (pa, pb) => pa == pb,
                }
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_but_modified_ignores_only_the_datasets_modification_time() {
        let a =
            json!({"package": {"id": "x", "metadata_modified": "1", "notes": "n"}, "actor": "u"});
        let later =
            json!({"package": {"id": "x", "metadata_modified": "2", "notes": "n"}, "actor": "u"});
        assert!(same_but_modified(&a, &later));
        let without = json!({"package": {"id": "x", "notes": "n"}, "actor": "u"});
        assert!(same_but_modified(&a, &without));
        assert!(same_but_modified(&without, &a));
        let changed =
            json!({"package": {"id": "x", "metadata_modified": "1", "notes": "m"}, "actor": "u"});
        assert!(!same_but_modified(&a, &changed));
        let more = json!({"package": {"id": "x", "metadata_modified": "1", "notes": "n", "title": "t"}, "actor": "u"});
        assert!(!same_but_modified(&a, &more));
        assert!(!same_but_modified(&more, &a));
        let other_actor =
            json!({"package": {"id": "x", "metadata_modified": "1", "notes": "n"}, "actor": "v"});
        assert!(!same_but_modified(&a, &other_actor));
        let no_package = json!({"actor": "u", "other": 1});
        assert!(!same_but_modified(&a, &no_package));
        // Elsewhere than in the dataset, the key counts.
        let top = json!({"metadata_modified": "1"});
        assert!(!same_but_modified(&top, &json!({"metadata_modified": "2"})));
    }

    #[test]
    fn the_last_activities_kept_are_bounded_in_number_and_memory() {
        let kept = LastActivities::default();
        let held = |kept: &LastActivities| {
            let k = kept.0.lock().unwrap();
            (k.len(), k.iter().map(|(_, l)| l.bytes).sum::<usize>())
        };
        let small = json!({"package": {"title": "t"}});
        for i in 0..300 {
            kept.put(format!("o{i}"), format!("a{i}"), i, 0, &small, 30);
        }
        assert_eq!(held(&kept).0, LAST_KEPT);
        // The most recent are kept; a read makes an entry recent.
        assert!(kept.get("o0").is_none());
        assert_eq!(kept.get("o299").map(|l| l.0), Some("a299".to_string()));
        // Big values: no more memory than the budget in all.
        let big = json!({"notes": "x".repeat(LAST_ENTRY_BYTES / 2)});
        for i in 0..40 {
            kept.put(
                format!("b{i}"),
                format!("c{i}"),
                i,
                0,
                &big,
                LAST_ENTRY_BYTES / 2,
            );
            assert!(held(&kept).1 <= LAST_BYTES, "{:?}", held(&kept));
        }
        assert!(kept.get("b39").is_some());
        // One over an entry's limit is not kept, and the object's older one goes.
        let huge = json!({"notes": "x".repeat(LAST_ENTRY_BYTES)});
        kept.put("b39".into(), "d".into(), 99, 0, &huge, 10);
        assert!(kept.get("b39").is_none());
    }
}
