//! The `activity` table: writing an activity (its data as a patch where that is smaller) and
//! reading activities back with their data rebuilt.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use catalog_framework::heap_bytes;
use catalog_framework::params::equal_but_key;
use catalog_framework::prelude::*;
use catalog_framework::store::time::{format_iso, now_iso};
use catalog_framework::store::RowExt;
use catalog_framework::store::{placeholders, subquery};
use sqlx::any::AnyRow;
use sqlx::AnyConnection;

use crate::patch::{self, SNAPSHOT_EVERY};

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

/// The `LIKE` pattern of an activity type's kind: `new package` and `changed package` are of
/// kind `package`, `new resource view` of `resource view`. The kinds are the recorder's
/// words, free of `LIKE` wildcards.
fn kind_pattern(activity_type: &str) -> String {
    let kind = activity_type
        .split_once(' ')
        .map_or(activity_type, |(_, kind)| kind);
    format!("%{kind}")
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

/// Whose activities a list shows.
pub(crate) enum Scope<'a> {
    /// One object's (a dataset's).
    Object(&'a str),
    /// A group's own, and those of the public datasets that are its members now (active
    /// members of active datasets, or deleted memberships of deleted ones), as CKAN's
    /// `_group_activity_query`.
    Group(&'a str),
    /// An organization's own, and those of its public datasets.
    Organization(&'a str),
    /// A user's: by the user and about the user.
    User(&'a str),
    /// Every dataset activity (`recently_changed_packages_activity_list`).
    Packages,
    /// Every activity (`revision_list`).
    All,
    /// A user's dashboard: the user's own stream, and those of the users, datasets, groups and
    /// organizations the user follows.
    Dashboard(&'a str),
}

/// A page of activities, newest first, `offset` and `limit` applied, with CKAN's `before` /
/// `after` semantics: with `after` alone the oldest activities after it are taken (then shown
/// newest first).
pub(crate) struct ListQuery<'a> {
    pub scope: Scope<'a>,
    pub offset: i64,
    pub limit: Option<i64>,
    pub before: Option<String>,
    pub after: Option<String>,
    pub types: Option<&'a [String]>,
    pub exclude_types: Option<&'a [String]>,
    /// The caller's permission labels: dataset activities whose labels share none are left
    /// out (CKAN's `_filter_activities_by_permission_labels`); `None` for sysadmins.
    pub labels: Option<&'a [String]>,
    /// Only activities after this time, without changing the order (`revision_list`).
    pub since: Option<String>,
    /// Oldest first, whatever `before` and `after` (`revision_list`'s `time_asc`).
    pub oldest_first: bool,
    /// Leave out what these users did (`catalog.hide_activity_from_users`).
    pub exclude_users: Option<&'a [String]>,
}

pub(crate) async fn list(
    conn: &mut AnyConnection,
    q: &ListQuery<'_>,
) -> CkanResult<Vec<ActivityRow>> {
    let mut binds: Vec<String> = Vec::new();
    let bind = |v: &str, binds: &mut Vec<String>| {
        binds.push(v.to_string());
        format!("${}", binds.len())
    };
    let group_datasets = subquery::group_public_datasets;
    // Each scope is one or more conditions on `a`, the activity table: the activities of a
    // scope are those any condition selects.
    let branches: Vec<String> = match q.scope {
        Scope::Object(id) => vec![format!("a.object_id = {}", bind(id, &mut binds))],
        Scope::Group(id) => {
            let ph = bind(id, &mut binds);
            vec![
                format!("a.object_id = {ph}"),
                format!("a.object_id IN ({})", group_datasets(&format!("= {ph}"))),
            ]
        }
        Scope::Organization(id) => {
            let ph = bind(id, &mut binds);
            vec![
                format!("a.object_id = {ph}"),
                format!(
                    "a.object_id IN ({})",
                    subquery::organization_public_datasets(&format!("= {ph}"))
                ),
            ]
        }
        Scope::User(id) => {
            let ph = bind(id, &mut binds);
            vec![format!("a.user_id = {ph}"), format!("a.object_id = {ph}")]
        }
        Scope::Packages => vec!["a.activity_type LIKE '%package'".into()],
        Scope::All => vec!["1 = 1".into()],
        Scope::Dashboard(me) => {
            // What the user follows, read first: each condition then names its ids, so none
            // is left to the planner to guess (an empty or rare set guessed wrong makes
            // PostgreSQL walk the whole activity table in time order), and an empty one is
            // no condition at all.
            let followed = followees(conn, me).await?;
            let ph = bind(me, &mut binds);
            // Beyond MAX_NAMED_FOLLOWEES the ids stay a subquery (placeholders are limited).
            let many = followed.objects.len() > MAX_NAMED_FOLLOWEES;
            let list = |ids: &[String], kinds: &str, binds: &mut Vec<String>| {
                if many {
                    return format!(
                        "SELECT object_id FROM follower WHERE follower_id = {ph} AND object_type IN ({kinds})"
                    );
                }
                ids.iter()
                    .map(|id| bind(id, binds))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let mut branches = vec![format!("a.user_id = {ph}"), format!("a.object_id = {ph}")];
            if !followed.users.is_empty() {
                let users = list(&followed.users, "'user'", &mut binds);
                branches.push(format!("a.user_id IN ({users})"));
            }
            if !followed.objects.is_empty() {
                let objects = list(&followed.objects, "'user', 'dataset', 'group'", &mut binds);
                branches.push(format!("a.object_id IN ({objects})"));
            }
            if !followed.groups.is_empty() {
                let groups = list(&followed.groups, "'group'", &mut binds);
                branches.push(format!(
                    "a.object_id IN ({})",
                    group_datasets(&format!("IN ({groups})"))
                ));
                branches.push(format!(
                    "a.object_id IN ({})",
                    subquery::organization_public_datasets(&format!("IN ({groups})"))
                ));
            }
            branches
        }
    };
    let mut filters = String::new();
    if let Some(b) = &q.before {
        let ph = bind(b, &mut binds);
        filters.push_str(&format!(" AND a.timestamp < {ph}"));
    }
    for a in [&q.after, &q.since].into_iter().flatten() {
        let ph = bind(a, &mut binds);
        filters.push_str(&format!(" AND a.timestamp > {ph}"));
    }
    for (list, op) in [(q.types, "IN"), (q.exclude_types, "NOT IN")] {
        if let Some(list) = list.filter(|l| !l.is_empty()) {
            let phs: Vec<String> = list.iter().map(|t| bind(t, &mut binds)).collect();
            filters.push_str(&format!(" AND a.activity_type {op} ({})", phs.join(", ")));
        }
    }
    if let Some(users) = q.exclude_users.filter(|u| !u.is_empty()) {
        let phs: Vec<String> = users.iter().map(|u| bind(u, &mut binds)).collect();
        filters.push_str(&format!(
            " AND (a.user_id IS NULL OR a.user_id NOT IN ({}))",
            phs.join(", ")
        ));
    }
    if let Some(labels) = q.labels {
        // Labels are written by the framework (`public`, `member-<uuid>` …): no LIKE wildcard
        // can occur in them. Activities without labels (groups, users) are everyone's; those
        // with labels (a dataset's, its resource views') need one of the caller's.
        let mut any = vec!["a.permission_labels IS NULL".to_string()];
        for l in labels.iter().filter(|l| !l.contains(['%', '_', '"', '\\'])) {
            let ph = bind(&format!("%\"{l}\"%"), &mut binds);
            any.push(format!("a.permission_labels LIKE {ph}"));
        }
        filters.push_str(&format!(" AND ({})", any.join(" OR ")));
    }
    let ascending = q.oldest_first || (q.after.is_some() && q.before.is_none());
    let order = if ascending {
        " ORDER BY a.timestamp, a.seq"
    } else {
        " ORDER BY a.timestamp DESC, a.seq DESC"
    };
    // SQLite takes an OFFSET only after a LIMIT: the largest one, on both stores.
    let page = match (q.limit, q.offset) {
        (Some(limit), 0) => format!(" LIMIT {limit}"),
        (Some(limit), offset) => format!(" LIMIT {limit} OFFSET {offset}"),
        (None, 0) => String::new(),
        (None, offset) => format!(" LIMIT {} OFFSET {offset}", i64::MAX),
    };
    let sql = if branches.len() == 1 {
        format!(
            "SELECT {ACOLS} FROM activity a WHERE {}{filters}{order}{page}",
            branches[0]
        )
    } else {
        // One indexed query per condition, each cut to the page's end, then merged: no
        // condition ORed with another makes the database read every activity.
        let cut = q
            .limit
            .map(|l| format!(" LIMIT {}", l.saturating_add(q.offset)));
        let parts: Vec<String> = branches
            .iter()
            .map(|b| {
                format!(
                    "SELECT seq FROM (SELECT a.seq FROM activity a WHERE {b}{filters}{order}{}) s",
                    cut.as_deref().unwrap_or("")
                )
            })
            .collect();
        format!(
            "SELECT {ACOLS} FROM activity a WHERE a.seq IN ({}){order}{page}",
            parts.join(" UNION ")
        )
    };
    let mut query = sqlx::query(&sql);
    for b in &binds {
        query = query.bind(b);
    }
    let mut rows: Vec<ActivityRow> = query
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(ActivityRow::from_row)
        .collect();
    if ascending && !q.oldest_first {
        rows.reverse();
    }
    Ok(rows)
}

/// What a user follows, for the dashboard: users (their actions and their accounts), every
/// followed object (users, datasets, groups, organizations), and the groups and organizations
/// (their datasets).
/// The most followed objects the dashboard's query names one by one.
const MAX_NAMED_FOLLOWEES: usize = 5_000;

struct Followed {
    users: Vec<String>,
    objects: Vec<String>,
    groups: Vec<String>,
}

async fn followees(conn: &mut AnyConnection, me: &str) -> CkanResult<Followed> {
    let rows = sqlx::query(
        "SELECT object_id, object_type FROM follower WHERE follower_id = $1 ORDER BY object_id",
    )
    .bind(me)
    .fetch_all(&mut *conn)
    .await?;
    let mut f = Followed {
        users: Vec::new(),
        objects: Vec::new(),
        groups: Vec::new(),
    };
    for r in &rows {
        let id = r.s("object_id");
        match r.s("object_type").as_str() {
            "user" => f.users.push(id.clone()),
            "group" => f.groups.push(id.clone()),
            _ => {}
        }
        f.objects.push(id);
    }
    Ok(f)
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

/// Which activities a deletion removes: a condition on the `activity` table, written for a
/// given alias of it, and the values of its `$N` placeholders.
pub(crate) struct Selection {
    pub condition: fn(&str) -> String,
    pub binds: Vec<String>,
    /// Keep this many of each object's newest activities (`keep`), whatever the condition.
    pub keep: Option<i64>,
}

impl Selection {
    fn sql(&self, alias: &str) -> String {
        let mut sql = (self.condition)(alias);
        if let Some(keep) = self.keep {
            sql = format!(
                "({sql}) AND {alias}.seq IN (SELECT seq FROM (SELECT seq, ROW_NUMBER() OVER \
                 (PARTITION BY object_id ORDER BY timestamp DESC, seq DESC) AS n FROM activity) r \
                 WHERE r.n > {keep})"
            );
        }
        sql
    }

    fn bind<'q>(
        &'q self,
        mut q: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    ) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
        for b in &self.binds {
            q = q.bind(b);
        }
        q
    }
}

/// How many activities a selection holds.
pub(crate) async fn count(conn: &mut AnyConnection, s: &Selection) -> CkanResult<i64> {
    let sql = format!(
        "SELECT COUNT(*) AS n FROM activity WHERE {}",
        s.sql("activity")
    );
    Ok(s.bind(sqlx::query(&sql))
        .fetch_one(&mut *conn)
        .await?
        .i("n"))
}

/// Deletes the selected activities and returns how many. An activity that stays but whose data
/// is a patch against a deleted one is first rewritten as a whole copy, so every remaining
/// activity still reads back exactly.
pub(crate) async fn delete(conn: &mut AnyConnection, s: &Selection) -> CkanResult<u64> {
    let orphans = format!(
        "SELECT c.seq FROM activity c JOIN activity d ON d.seq = c.base_seq \
         WHERE {} AND NOT ({})",
        s.sql("d"),
        s.sql("c")
    );
    let seqs: Vec<i64> = s
        .bind(sqlx::query(&orphans))
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|r| r.i("seq"))
        .collect();
    for chunk in seqs.chunks(500) {
        let sql = format!(
            "SELECT {COLS} FROM activity WHERE seq IN ({})",
            placeholders(chunk.len())
        );
        let mut q = sqlx::query(&sql);
        for seq in chunk {
            q = q.bind(*seq);
        }
        let rows: Vec<ActivityRow> = q
            .fetch_all(&mut *conn)
            .await?
            .iter()
            .map(ActivityRow::from_row)
            .collect();
        let data = data_of(conn, rows).await?;
        for (seq, value) in data.iter().filter(|(seq, _)| chunk.contains(seq)) {
            sqlx::query("UPDATE activity SET base_seq = NULL, depth = 0, data = $1 WHERE seq = $2")
                .bind(serde_json::to_string(value)?)
                .bind(*seq)
                .execute(&mut *conn)
                .await?;
        }
    }
    let sql = format!("DELETE FROM activity WHERE {}", s.sql("activity"));
    Ok(s.bind(sqlx::query(&sql))
        .execute(&mut *conn)
        .await?
        .rows_affected())
}

/// How many activities are older than 1, 30 and 365 days, and how many there are.
pub(crate) async fn age_counts(
    conn: &mut AnyConnection,
    now: chrono::NaiveDateTime,
) -> CkanResult<[i64; 4]> {
    let ago = |days: i64| format_iso(now - chrono::Duration::days(days));
    let row = sqlx::query(
        "SELECT COUNT(CASE WHEN timestamp < $1 THEN 1 END) AS d1, \
         COUNT(CASE WHEN timestamp < $2 THEN 1 END) AS d30, \
         COUNT(CASE WHEN timestamp < $3 THEN 1 END) AS d365, COUNT(*) AS total FROM activity",
    )
    .bind(ago(1))
    .bind(ago(30))
    .bind(ago(365))
    .fetch_one(&mut *conn)
    .await?;
    Ok([row.i("d1"), row.i("d30"), row.i("d365"), row.i("total")])
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
