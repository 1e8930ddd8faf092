//! CKAN's authorization model: roles, permissions on groups (with cascading), and dataset
//! permission labels (spec/ckan-write-auth-legacy.md §7).

/// Credentials: passwords and API tokens.
pub use crate::identity::{hash_password, hash_token, new_token, token_id, verify_password};

use std::collections::{HashMap, HashSet};

use crate::context::ActionContext;
use crate::error::CkanResult;
use crate::store::{self as q, PackageRow};

/// Whether a membership role grants a permission. `admin` grants everything.
pub fn role_has(role: &str, perm: &str) -> bool {
    match role {
        "admin" => true,
        "editor" => matches!(
            perm,
            "read" | "delete_dataset" | "create_dataset" | "update_dataset" | "manage_group"
        ),
        "member" => matches!(perm, "read" | "manage_group"),
        _ => false,
    }
}

/// Every group below `root` in the hierarchy (children, grandchildren …).
fn descendants(edges: &[(String, String)], root: &str) -> Vec<String> {
    let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
    for (child, parent) in edges {
        children
            .entry(parent.as_str())
            .or_default()
            .push(child.as_str());
    }
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut stack = vec![root];
    while let Some(g) = stack.pop() {
        for c in children.get(g).into_iter().flatten() {
            if seen.insert(*c) {
                out.push(c.to_string());
                stack.push(c);
            }
        }
    }
    out
}

/// The groups where a user holds a role granting `perm`, cascading roles applied: `group → role`.
pub async fn groups_with_permission(
    ctx: &mut ActionContext,
    user_id: &str,
    perm: &str,
) -> CkanResult<HashMap<String, String>> {
    let cascade = ctx
        .config()
        .catalog
        .auth
        .roles_that_cascade_to_sub_groups
        .clone();
    let conn = ctx.db().await?;
    let memberships = q::user_memberships(conn, user_id).await?;
    let mut out: HashMap<String, String> = HashMap::new();
    let needs_edges = memberships
        .iter()
        .any(|(_, role)| cascade.contains(role) && role_has(role, perm));
    let edges = if needs_edges {
        q::hierarchy_edges(conn).await?
    } else {
        Vec::new()
    };
    for (gid, role) in memberships {
        if !role_has(&role, perm) {
            continue;
        }
        if cascade.contains(&role) {
            for d in descendants(&edges, &gid) {
                out.entry(d).or_insert_with(|| role.clone());
            }
        }
        out.insert(gid, role);
    }
    Ok(out)
}

/// CKAN's `has_user_permission_for_group_or_org`.
pub async fn has_permission(
    ctx: &mut ActionContext,
    group_id: &str,
    perm: &str,
) -> CkanResult<bool> {
    if ctx.is_sysadmin() {
        return Ok(true);
    }
    let Some(uid) = ctx.user_id().map(str::to_string) else {
        return Ok(false);
    };
    Ok(groups_with_permission(ctx, &uid, perm)
        .await?
        .contains_key(group_id))
}

/// CKAN's `has_user_permission_for_some_org`.
pub async fn has_permission_for_some_org(ctx: &mut ActionContext, perm: &str) -> CkanResult<bool> {
    let Some(uid) = ctx.user_id().map(str::to_string) else {
        return Ok(false);
    };
    let groups = groups_with_permission(ctx, &uid, perm).await?;
    if groups.is_empty() {
        return Ok(false);
    }
    let ids: Vec<String> = groups.into_keys().collect();
    let rows = q::groups_by_ids(ctx.db().await?, &ids).await?;
    Ok(rows
        .iter()
        .any(|g| g.is_organization && g.state == "active"))
}

/// The labels of a dataset (CKAN's `DefaultPermissionLabels`), except for drafts.
///
/// A draft is still being created: CKAN's `package_show` wants edit rights for it, so its
/// labels name only those who may edit it (`editor-<org>`: the organization's editors and
/// admins; `collaborator-editor-<id>`: editor and admin collaborators; `creator-<id>` for an
/// unowned draft), not every reader of the organization as CKAN's search labels do.
pub fn dataset_labels(pkg: &PackageRow, collaborators: bool) -> Vec<String> {
    if pkg.state == "active" && !pkg.private {
        return vec!["public".into()];
    }
    let mut labels = Vec::new();
    if pkg.state.starts_with("draft") {
        if collaborators {
            labels.push(format!("collaborator-editor-{}", pkg.id));
        }
        labels.push(match &pkg.owner_org {
            Some(org) => format!("editor-{org}"),
            None => format!(
                "creator-{}",
                pkg.creator_user_id.clone().unwrap_or_default()
            ),
        });
        return labels;
    }
    if collaborators {
        labels.push(format!("collaborator-{}", pkg.id));
    }
    match &pkg.owner_org {
        Some(org) => labels.push(format!("member-{org}")),
        None => labels.push(format!(
            "creator-{}",
            pkg.creator_user_id.clone().unwrap_or_default()
        )),
    }
    labels
}

/// The labels of the caller.
pub async fn user_labels(ctx: &mut ActionContext) -> CkanResult<Vec<String>> {
    let mut labels = vec!["public".to_string()];
    let Some(uid) = ctx.user_id().map(str::to_string) else {
        return Ok(labels);
    };
    labels.push(format!("creator-{uid}"));
    for (org, role) in groups_with_permission(ctx, &uid, "read").await? {
        if role_has(&role, "update_dataset") {
            labels.push(format!("editor-{org}"));
        }
        labels.push(format!("member-{org}"));
    }
    if ctx.config().catalog.auth.allow_dataset_collaborators {
        for (pkg, capacity) in q::user_collaborations(ctx.db().await?, &uid).await? {
            if capacity == "editor" || capacity == "admin" {
                labels.push(format!("collaborator-editor-{pkg}"));
            }
            labels.push(format!("collaborator-{pkg}"));
        }
    }
    Ok(labels)
}

/// The search filter of the datasets the caller may read: any of the caller's labels; `None`
/// for sysadmins and internal (`ignore_auth`) callers, who read everything.
pub async fn label_filter(ctx: &mut ActionContext) -> CkanResult<Option<crate::search::Query>> {
    use crate::search::Query;
    if ctx.is_sysadmin() || ctx.ignore_auth {
        return Ok(None);
    }
    let labels = user_labels(ctx).await?;
    Ok(Some(Query::or(
        labels
            .iter()
            .map(|l| Query::term("permission_labels", l))
            .collect(),
    )))
}

/// Whether the caller may read a dataset (labels intersect; sysadmins always).
pub async fn can_read_package(ctx: &mut ActionContext, pkg: &PackageRow) -> CkanResult<bool> {
    if ctx.is_sysadmin() || ctx.ignore_auth {
        return Ok(true);
    }
    let ds = dataset_labels(pkg, ctx.config().catalog.auth.allow_dataset_collaborators);
    if ds.iter().any(|l| l == "public") {
        return Ok(true);
    }
    let mine = user_labels(ctx).await?;
    Ok(ds.iter().any(|l| mine.contains(l)))
}

/// The keys of a dataset dict that name other datasets: its relationships, each with the ids
/// of both ends in `__extras` (`subject_package_id`, `object_package_id`).
const RELATIONSHIP_KEYS: [(&str, &str); 2] = [
    ("relationships_as_subject", "object_package_id"),
    ("relationships_as_object", "subject_package_id"),
];

/// True when a dataset dict lists a relationship: what the dict shows then depends on who
/// asks (see [`hide_unreadable_relationships`]).
pub fn has_relationships(dict: &serde_json::Value) -> bool {
    RELATIONSHIP_KEYS.iter().any(|(key, _)| {
        dict.get(key)
            .and_then(serde_json::Value::as_array)
            .is_some_and(|a| !a.is_empty())
    })
}

/// Removes from a dataset dict the relationships whose other dataset the caller may not read
/// (private, draft or deleted ones of others): their ids and comments are not the caller's to
/// see (CKAN shows them; docs/API-COMPAT.md). Sysadmins see every one.
pub async fn hide_unreadable_relationships(
    ctx: &mut ActionContext,
    dict: &mut serde_json::Value,
) -> CkanResult<()> {
    if ctx.is_sysadmin() || ctx.ignore_auth || !has_relationships(dict) {
        return Ok(());
    }
    let mut readable: HashMap<String, bool> = HashMap::new();
    for (key, other_end) in RELATIONSHIP_KEYS {
        let Some(list) = dict.get(key).and_then(serde_json::Value::as_array) else {
            continue;
        };
        let mut kept = Vec::with_capacity(list.len());
        for r in list {
            let other = r
                .pointer(&format!("/__extras/{other_end}"))
                .or_else(|| r.get(other_end))
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_string();
            if may_read_dataset(ctx, &other, &mut readable).await? {
                kept.push(r.clone());
            }
        }
        dict[key] = serde_json::Value::Array(kept);
    }
    Ok(())
}

/// Whether the caller may read the dataset `id` (an unknown one: no), remembered in `seen`.
pub async fn may_read_dataset(
    ctx: &mut ActionContext,
    id: &str,
    seen: &mut HashMap<String, bool>,
) -> CkanResult<bool> {
    if let Some(known) = seen.get(id) {
        return Ok(*known);
    }
    let ok = may_read_package(ctx, id).await?;
    seen.insert(id.to_string(), ok);
    Ok(ok)
}

/// Whether the caller may read the dataset an id or name names (an unknown one: no).
pub async fn may_read_package(ctx: &mut ActionContext, id: &str) -> CkanResult<bool> {
    match ctx.package_row(id).await? {
        Some(row) => can_read_package(ctx, &row).await,
        None => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(state: &str, owner_org: Option<&str>) -> PackageRow {
        PackageRow {
            id: "d".into(),
            name: "n".into(),
            dataset_type: "dataset".into(),
            state: state.into(),
            private: false,
            owner_org: owner_org.map(str::to_string),
            creator_user_id: Some("u".into()),
            metadata_modified: String::new(),
            data: String::new(),
        }
    }

    #[test]
    fn drafts_are_labelled_for_their_editors_only() {
        assert_eq!(dataset_labels(&row("active", Some("o")), true), ["public"]);
        assert_eq!(
            dataset_labels(&row("deleted", Some("o")), true),
            ["collaborator-d", "member-o"]
        );
        assert_eq!(
            dataset_labels(&row("draft", Some("o")), true),
            ["collaborator-editor-d", "editor-o"]
        );
        assert_eq!(dataset_labels(&row("draft", None), false), ["creator-u"]);
    }

    #[test]
    fn roles_and_cascade() {
        assert!(role_has("admin", "anything"));
        assert!(role_has("editor", "update_dataset"));
        assert!(!role_has("member", "update_dataset"));
        assert!(!role_has("public", "read"));
        let edges = vec![
            ("child".to_string(), "root".to_string()),
            ("grand".to_string(), "child".to_string()),
        ];
        let mut d = descendants(&edges, "root");
        d.sort();
        assert_eq!(d, vec!["child", "grand"]);
    }
}
