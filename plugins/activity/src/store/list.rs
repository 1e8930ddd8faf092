//! The pages of the list actions: whose activities ([`Scope`]), which of them, in which
//! order.

use catalog_framework::prelude::*;
use catalog_framework::store::subquery;
use catalog_framework::store::RowExt;
use sqlx::AnyConnection;

use super::{ActivityRow, ACOLS};

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
    let branches = scope_branches(conn, &q.scope, &mut binds).await?;
    let filters = filter_sql(q, &mut binds);
    let ascending = q.oldest_first || (q.after.is_some() && q.before.is_none());
    let sql = page_sql(q, &branches, &filters, ascending);
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

/// Adds a value to bind; returns its `$N` placeholder.
fn bind(v: &str, binds: &mut Vec<String>) -> String {
    binds.push(v.to_string());
    format!("${}", binds.len())
}

/// The conditions that select a scope's activities.
async fn scope_branches(
    conn: &mut AnyConnection,
    scope: &Scope<'_>,
    binds: &mut Vec<String>,
) -> CkanResult<Vec<String>> {
    let group_datasets = subquery::group_public_datasets;
    // Each scope is one or more conditions on `a`, the activity table: the activities of a
    // scope are those any condition selects.
    let branches: Vec<String> = match *scope {
        Scope::Object(id) => vec![format!("a.object_id = {}", bind(id, binds))],
        Scope::Group(id) => {
            let ph = bind(id, binds);
            vec![
                format!("a.object_id = {ph}"),
                format!("a.object_id IN ({})", group_datasets(&format!("= {ph}"))),
            ]
        }
        Scope::Organization(id) => {
            let ph = bind(id, binds);
            vec![
                format!("a.object_id = {ph}"),
                format!(
                    "a.object_id IN ({})",
                    subquery::organization_public_datasets(&format!("= {ph}"))
                ),
            ]
        }
        Scope::User(id) => {
            let ph = bind(id, binds);
            vec![format!("a.user_id = {ph}"), format!("a.object_id = {ph}")]
        }
        Scope::Packages => vec!["a.activity_type LIKE '%package'".into()],
        Scope::All => vec!["1 = 1".into()],
        Scope::Dashboard(me) => dashboard_branches(conn, me, binds).await?,
    };
    Ok(branches)
}

/// The conditions of a user's dashboard: the user's own stream, and those of what the user
/// follows.
async fn dashboard_branches(
    conn: &mut AnyConnection,
    me: &str,
    binds: &mut Vec<String>,
) -> CkanResult<Vec<String>> {
    let group_datasets = subquery::group_public_datasets;
    // What the user follows, read first: each condition then names its ids, so none
    // is left to the planner to guess (an empty or rare set guessed wrong makes
    // PostgreSQL walk the whole activity table in time order), and an empty one is
    // no condition at all.
    let followed = followees(conn, me).await?;
    let ph = bind(me, binds);
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
        let users = list(&followed.users, "'user'", binds);
        branches.push(format!("a.user_id IN ({users})"));
    }
    if !followed.objects.is_empty() {
        let objects = list(&followed.objects, "'user', 'dataset', 'group'", binds);
        branches.push(format!("a.object_id IN ({objects})"));
    }
    if !followed.groups.is_empty() {
        let groups = list(&followed.groups, "'group'", binds);
        branches.push(format!(
            "a.object_id IN ({})",
            group_datasets(&format!("IN ({groups})"))
        ));
        branches.push(format!(
            "a.object_id IN ({})",
            subquery::organization_public_datasets(&format!("IN ({groups})"))
        ));
    }
    Ok(branches)
}

/// The conditions every listed activity meets: its time, type, actor and labels.
fn filter_sql(q: &ListQuery<'_>, binds: &mut Vec<String>) -> String {
    let mut filters = String::new();
    if let Some(b) = &q.before {
        let ph = bind(b, binds);
        filters.push_str(&format!(" AND a.timestamp < {ph}"));
    }
    for a in [&q.after, &q.since].into_iter().flatten() {
        let ph = bind(a, binds);
        filters.push_str(&format!(" AND a.timestamp > {ph}"));
    }
    for (list, op) in [(q.types, "IN"), (q.exclude_types, "NOT IN")] {
        if let Some(list) = list.filter(|l| !l.is_empty()) {
            let phs: Vec<String> = list.iter().map(|t| bind(t, binds)).collect();
            filters.push_str(&format!(" AND a.activity_type {op} ({})", phs.join(", ")));
        }
    }
    if let Some(users) = q.exclude_users.filter(|u| !u.is_empty()) {
        let phs: Vec<String> = users.iter().map(|u| bind(u, binds)).collect();
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
            let ph = bind(&format!("%\"{l}\"%"), binds);
            any.push(format!("a.permission_labels LIKE {ph}"));
        }
        filters.push_str(&format!(" AND ({})", any.join(" OR ")));
    }
    filters
}

/// The statement of a page: one indexed query per scope condition, merged.
fn page_sql(q: &ListQuery<'_>, branches: &[String], filters: &str, ascending: bool) -> String {
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
    if branches.len() == 1 {
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
    }
}

/// The most followed objects the dashboard's query names one by one.
const MAX_NAMED_FOLLOWEES: usize = 5_000;

/// What a user follows, for the dashboard: users (their actions and their accounts), every
/// followed object (users, datasets, groups, organizations), and the groups and organizations
/// (their datasets).
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
