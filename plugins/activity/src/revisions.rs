//! The revision actions of the older release (`revision_list`, `revision_show`,
//! `package_/group_/organization_revision_list`): each activity is a revision.

use catalog_framework::prelude::*;
use catalog_framework::store::time::{format_iso, parse_iso};

use crate::actions::{caller_labels, load};
use crate::details::data_of_one;
use crate::store::{self, ActivityRow, ListQuery, Scope};

/// The most `revision_list` returns.
const REVISION_PAGE: i64 = 50;

/// A revision as CKAN's `revision_as_dict` shows it, from an activity: its id, time and author
/// (the actor's name); no log message. With `objects`, the names of its public dataset or its
/// group.
async fn revision_dict(
    ctx: &mut ActionContext,
    a: &ActivityRow,
    objects: Option<&Value>,
) -> CkanResult<Value> {
    let author = match &a.user_id {
        Some(id) => ctx.user_row(id).await?.map(|u| u.name),
        None => None,
    };
    let mut d = json!({
        "id": a.id,
        "timestamp": a.timestamp,
        "message": "",
        "author": author,
        "approved_timestamp": null,
    });
    if let Some(data) = objects {
        let public = a
            .permission_labels
            .as_ref()
            .is_some_and(|l| l.iter().any(|l| l == "public"));
        let packages: Vec<&Value> = data
            .get("package")
            .filter(|_| public)
            .and_then(|p| p.get("name"))
            .into_iter()
            .collect();
        let groups: Vec<&Value> = data
            .get("group")
            .and_then(|g| g.get("name"))
            .into_iter()
            .collect();
        d["packages"] = json!(packages);
        d["groups"] = json!(groups);
    }
    Ok(d)
}

action_params! {
    /// Return the ids of the site's revisions (each activity is one), newest first, at most
    /// 50; page with `since_id` or `since_time`. Dataset activities the caller may not see are
    /// left out.
    pub struct RevisionListParams {
        /// only revisions after this one
        since_id: Option<String>,
        /// only revisions after this time (ISO 8601)
        since_time: Option<String>,
        /// `time_desc` (default) or `time_asc`
        sort: Option<String>,
    }
}

pub(crate) async fn revision_list(
    ctx: &mut ActionContext,
    p: RevisionListParams,
) -> CkanResult<Value> {
    ctx.check_access("revision_list", &p.__extras).await?;
    let since = match (
        p.since_id.filter(|s| !s.is_empty()),
        p.since_time.filter(|s| !s.is_empty()),
    ) {
        (Some(id), _) => Some(load(ctx, &id).await?.timestamp),
        (None, Some(t)) => {
            Some(format_iso(parse_iso(&t).ok_or_else(|| {
                validation_message("Timestamp did not parse")
            })?))
        }
        (None, None) => None,
    };
    let oldest_first = match p.sort.as_deref() {
        None | Some("") | Some("time_desc") => false,
        Some("time_asc") => true,
        Some(_) => {
            return Err(validation_message(
                "Invalid sort value. Allowable values: ['time_asc', 'time_desc']",
            ))
        }
    };
    let labels = caller_labels(ctx).await?;
    let rows = store::list(
        ctx.db().await?,
        &ListQuery {
            scope: Scope::All,
            offset: 0,
            limit: Some(REVISION_PAGE),
            before: None,
            after: None,
            since,
            types: None,
            exclude_types: None,
            labels: labels.as_deref(),
            oldest_first,
            exclude_users: None,
        },
    )
    .await?;
    Ok(json!(rows
        .iter()
        .map(|r| r.id.as_str())
        .collect::<Vec<_>>()))
}

action_params! {
    /// Return a revision (an activity): its id, time, author and the dataset or group it
    /// changed (by name; a private dataset is not named).
    pub struct RevisionShowParams {
        /// the id of the revision
        id: String,
    }
}

pub(crate) async fn revision_show(
    ctx: &mut ActionContext,
    p: RevisionShowParams,
) -> CkanResult<Value> {
    let a = load(ctx, &p.id).await?;
    let head = a.clone();
    let data = data_of_one(ctx, a).await?;
    revision_dict(ctx, &head, Some(&data)).await
}

/// Every activity of one object that the caller may see (see `package_activity_list`),
/// newest first, as revisions without their objects.
async fn object_revisions(ctx: &mut ActionContext, object_id: &str) -> CkanResult<Value> {
    let labels = caller_labels(ctx).await?;
    let rows = store::list(
        ctx.db().await?,
        &ListQuery {
            scope: Scope::Object(object_id),
            offset: 0,
            limit: None,
            before: None,
            after: None,
            since: None,
            types: None,
            exclude_types: None,
            labels: labels.as_deref(),
            oldest_first: false,
            exclude_users: None,
        },
    )
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        out.push(revision_dict(ctx, r, None).await?);
    }
    Ok(Value::Array(out))
}

action_params! {
    /// Return a dataset's revisions (its activities), newest first.
    pub struct PackageRevisionListParams {
        /// the id or name of the dataset
        id: String,
    }
}

pub(crate) async fn package_revision_list(
    ctx: &mut ActionContext,
    p: PackageRevisionListParams,
) -> CkanResult<Value> {
    let row = ctx.package_row(&p.id).await?.ok_or_else(|| not_found(""))?;
    let mut auth = p.__extras;
    // What the caller sent: a refusal names it, not the dataset's id.
    auth.insert("id".into(), json!(p.id));
    ctx.check_access("package_revision_list", &auth).await?;
    object_revisions(ctx, &row.id).await
}

action_params! {
    /// Return a group's revisions (its activities), newest first.
    pub struct GroupRevisionListParams {
        /// the id or name of the group
        id: String,
    }
}

action_params! {
    /// Return an organization's revisions (its activities), newest first.
    pub struct OrganizationRevisionListParams {
        /// the id or name of the organization
        id: String,
    }
}

async fn group_revisions(
    ctx: &mut ActionContext,
    id: &str,
    mut auth: Params,
    action: &str,
) -> CkanResult<Value> {
    let g = ctx.group_row(id).await?.ok_or_else(|| not_found(""))?;
    auth.insert("id".into(), json!(g.id));
    ctx.check_access(action, &auth).await?;
    object_revisions(ctx, &g.id).await
}

pub(crate) async fn group_revision_list(
    ctx: &mut ActionContext,
    p: GroupRevisionListParams,
) -> CkanResult<Value> {
    group_revisions(ctx, &p.id, p.__extras, "group_revision_list").await
}

pub(crate) async fn organization_revision_list(
    ctx: &mut ActionContext,
    p: OrganizationRevisionListParams,
) -> CkanResult<Value> {
    group_revisions(ctx, &p.id, p.__extras, "organization_revision_list").await
}

register_typed_actions! {
    read revision_list(RevisionListParams) => revision_list;
    read revision_show(RevisionShowParams) => revision_show;
    read package_revision_list(PackageRevisionListParams) => package_revision_list;
    read group_revision_list(GroupRevisionListParams) => group_revision_list;
    read organization_revision_list(OrganizationRevisionListParams) => organization_revision_list;
}

register_auth!("revision_list", crate::actions::ActivityShowAuth);
register_auth!("revision_show", crate::actions::ActivityShowAuth);
register_auth!(
    "package_revision_list",
    crate::actions::ShowAuth("package_show")
);
register_auth!(
    "group_revision_list",
    crate::actions::ShowAuth("group_show")
);
register_auth!(
    "organization_revision_list",
    crate::actions::ShowAuth("organization_show")
);
