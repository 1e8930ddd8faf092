//! The activity read actions: `package_activity_list`, `activity_show`, `activity_data_show`,
//! with CKAN 2.12's parameters, messages and checks (ckanext/activity/logic).

use catalog_framework::authz;
use catalog_framework::blocking::Lane;
use catalog_framework::params::dedup;
use catalog_framework::prelude::*;
use catalog_framework::typed::{Later, PyTruthy};

use crate::params::{read, HiddenFlag, ListLimit, StringList, Timestamp};
use crate::store::{self, ActivityRow, ListQuery};
use crate::ActivitySettings;

/// The parameters every activity list shares, as the params structs declare them.
pub(crate) struct ListInput {
    pub(crate) offset: Option<Natural>,
    pub(crate) limit: Later<ListLimit>,
    pub(crate) before: Later<Timestamp>,
    pub(crate) after: Later<Timestamp>,
    pub(crate) activity_types: Later<StringList>,
    pub(crate) exclude_activity_types: Later<StringList>,
    pub(crate) include_hidden_activity: Later<HiddenFlag>,
}

impl ListInput {
    /// The type filters and the hidden-activity flag not given (lists that have none).
    pub(crate) fn without_filters(
        offset: Option<Natural>,
        limit: Later<ListLimit>,
        before: Later<Timestamp>,
        after: Later<Timestamp>,
    ) -> ListInput {
        ListInput {
            offset,
            limit,
            before,
            after,
            activity_types: Later::new("activity_types", None),
            exclude_activity_types: Later::new("exclude_activity_types", None),
            include_hidden_activity: Later::new("include_hidden_activity", None),
        }
    }
}

/// The checked list parameters.
pub(crate) struct ListOptions {
    offset: i64,
    limit: Option<i64>,
    before: Option<String>,
    after: Option<String>,
    types: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
    /// Leave out the activities of `catalog.hide_activity_from_users` (unless a sysadmin asks
    /// for `include_hidden_activity` where CKAN allows it).
    hide_users: bool,
}

/// Checks the list parameters with CKAN's messages, all at once. `exclusive`: giving both
/// `activity_types` and `exclude_activity_types` is an error (`package_activity_list`).
pub(crate) fn list_options(
    ctx: &ActionContext,
    input: ListInput,
    exclusive: bool,
) -> CkanResult<ListOptions> {
    let settings = *ctx
        .app
        .extension::<ActivitySettings>()
        .ok_or_else(|| internal("the activity plugin was not configured"))?;
    let mut errs = ValidationBuilder::default();
    let limit = Some(match read(&input.limit, &mut errs) {
        None | Some(ListLimit(0)) => settings.list_limit,
        Some(ListLimit(n)) => n.min(settings.list_limit_max),
    });
    let before = read(&input.before, &mut errs).map(|t| t.0);
    let after = read(&input.after, &mut errs).map(|t| t.0);
    let types = read(&input.activity_types, &mut errs).map(|l| dedup(l.0));
    let exclude = read(&input.exclude_activity_types, &mut errs).map(|l| dedup(l.0));
    if exclusive && input.activity_types.is_present() && input.exclude_activity_types.is_present() {
        errs.push(
            "activity_types",
            "Cannot be used together with `exclude_activity_types",
        );
    }
    errs.finish()?;
    // CKAN's boolean_validator: a true-ish value asks for hidden activity; only a sysadmin gets
    // it (anyone else's request is ignored, as the parameter is documented).
    let include_hidden = input.include_hidden_activity.get()?.is_some_and(|h| h.0);
    Ok(ListOptions {
        offset: input.offset.map_or(0, |o| o.0),
        limit,
        before,
        after,
        types,
        exclude,
        hide_users: !(include_hidden && (ctx.is_sysadmin() || ctx.ignore_auth)),
    })
}

/// The caller's permission labels for the label filter, `None` for sysadmins.
pub(crate) async fn caller_labels(ctx: &mut ActionContext) -> CkanResult<Option<Vec<String>>> {
    if ctx.is_sysadmin() || ctx.ignore_auth {
        return Ok(None);
    }
    Ok(Some(authz::user_labels(ctx).await?))
}

/// Runs a list query and returns CKAN's activity dicts.
pub(crate) async fn run_list(
    ctx: &mut ActionContext,
    scope: store::Scope<'_>,
    o: &ListOptions,
    labels: Option<&[String]>,
) -> CkanResult<Value> {
    let hidden = if o.hide_users {
        hidden_user_ids(ctx).await?
    } else {
        Vec::new()
    };
    let rows = store::list(
        ctx.db().await?,
        &ListQuery {
            scope,
            offset: o.offset,
            limit: o.limit,
            before: o.before.clone(),
            after: o.after.clone(),
            types: o.types.as_deref(),
            exclude_types: o.exclude.as_deref(),
            labels,
            since: None,
            oldest_first: false,
            exclude_users: Some(&hidden).filter(|h| !h.is_empty()).map(Vec::as_slice),
        },
    )
    .await?;
    with_data(ctx, rows).await
}

/// The ids of the users named by `catalog.hide_activity_from_users`.
async fn hidden_user_ids(ctx: &mut ActionContext) -> CkanResult<Vec<String>> {
    let names = ctx
        .app
        .extension::<crate::HiddenUsers>()
        .map(|h| h.0.clone())
        .unwrap_or_default();
    let mut ids = Vec::with_capacity(names.len());
    for name in names {
        if let Some(u) = ctx.user_row(&name).await? {
            ids.push(u.id);
        }
    }
    Ok(ids)
}

/// Declares the params struct of an activity list: its own fields, then the shared ones.
macro_rules! list_params {
    ($(#[doc = $doc:literal])* $name:ident { $($(#[doc = $fdoc:literal])* $field:ident: $ty:ty,)* }) => {
        action_params! {
            $(#[doc = $doc])*
            pub struct $name {
                $($(#[doc = $fdoc])* $field: $ty,)*
                /// where to start (default 0)
                offset: Option<Natural>,
                /// how many activities (default catalog.activity_list_limit, at most
                /// catalog.activity_list_limit_max)
                limit: Later<ListLimit>,
                /// seconds since the epoch: only activities before it
                before: Later<Timestamp>,
                /// seconds since the epoch: only activities after it
                after: Later<Timestamp>,
                /// only activities of these types (a list)
                activity_types: Later<StringList>,
                /// no activities of these types (a list)
                exclude_activity_types: Later<StringList>,
                /// include the activity of the users catalog.hide_activity_from_users names
                /// (sysadmins only; the user, dashboard and recently-changed lists always
                /// leave it out, as in CKAN)
                include_hidden_activity: Later<HiddenFlag>,
            }
        }

        impl $name {
            fn list_input(&mut self) -> ListInput {
                use std::mem::replace;
                ListInput {
                    offset: self.offset.take(),
                    limit: replace(&mut self.limit, Later::new("limit", None)),
                    before: replace(&mut self.before, Later::new("before", None)),
                    after: replace(&mut self.after, Later::new("after", None)),
                    activity_types: replace(
                        &mut self.activity_types,
                        Later::new("activity_types", None),
                    ),
                    exclude_activity_types: replace(
                        &mut self.exclude_activity_types,
                        Later::new("exclude_activity_types", None),
                    ),
                    include_hidden_activity: replace(
                        &mut self.include_hidden_activity,
                        Later::new("include_hidden_activity", None),
                    ),
                }
            }
        }
    };
}

list_params! {
    /// Return a dataset's activity stream, newest first.
    PackageActivityListParams {
        /// the id or name of the dataset
        id: String,
    }
}

pub(crate) async fn package_activity_list(
    ctx: &mut ActionContext,
    mut p: PackageActivityListParams,
) -> CkanResult<Value> {
    let o = list_options(ctx, p.list_input(), true)?;
    let row = ctx.package_row(&p.id).await?.ok_or_else(|| not_found(""))?;
    let mut auth = p.__extras;
    // What the caller sent: a refusal names it, not the dataset's id.
    auth.insert("id".into(), json!(p.id));
    ctx.check_access("package_activity_list", &auth).await?;
    // Activities recorded while the dataset was private or a draft carry its labels of then:
    // only those who hold one see them (CKAN 2.10+).
    let labels = caller_labels(ctx).await?;
    run_list(ctx, store::Scope::Object(&row.id), &o, labels.as_deref()).await
}

list_params! {
    /// Return a group's activity stream, newest first: the group's own activities and those
    /// of its public datasets. `exclude_activity_types` is ignored, as in CKAN.
    GroupActivityListParams {
        /// the id or name of the group
        id: String,
    }
}

list_params! {
    /// Return an organization's activity stream, newest first: the organization's own
    /// activities and those of its public datasets. `exclude_activity_types` is ignored, as in
    /// CKAN.
    OrganizationActivityListParams {
        /// the id or name of the organization
        id: String,
    }
}

/// A group's or organization's list: CKAN looks the id up with `group_show` /
/// `organization_show`, so the wrong kind is not found.
async fn group_list(
    ctx: &mut ActionContext,
    id: &str,
    input: ListInput,
    extras: Params,
    is_org: bool,
) -> CkanResult<Value> {
    let mut o = list_options(ctx, input, false)?;
    o.exclude = None;
    let g = ctx
        .group_row(id)
        .await?
        .filter(|g| g.is_organization == is_org && g.state != "deleted")
        .ok_or_else(|| not_found(""))?;
    let (action, scope) = if is_org {
        (
            "organization_activity_list",
            store::Scope::Organization(&g.id),
        )
    } else {
        ("group_activity_list", store::Scope::Group(&g.id))
    };
    let mut auth = extras;
    auth.insert("id".into(), json!(g.id));
    ctx.check_access(action, &auth).await?;
    // The datasets' activities that the caller may not see (private, draft) are left out.
    let labels = caller_labels(ctx).await?;
    run_list(ctx, scope, &o, labels.as_deref()).await
}

pub(crate) async fn group_activity_list(
    ctx: &mut ActionContext,
    mut p: GroupActivityListParams,
) -> CkanResult<Value> {
    let input = p.list_input();
    group_list(ctx, &p.id, input, p.__extras, false).await
}

pub(crate) async fn organization_activity_list(
    ctx: &mut ActionContext,
    mut p: OrganizationActivityListParams,
) -> CkanResult<Value> {
    let input = p.list_input();
    group_list(ctx, &p.id, input, p.__extras, true).await
}

list_params! {
    /// Return a user's activity stream, newest first: what the user did and what was done to
    /// the user's account. Dataset activities the caller may not see are left out.
    /// `activity_types` is ignored, as in CKAN.
    UserActivityListParams {
        /// the id or name of the user
        id: String,
    }
}

pub(crate) async fn user_activity_list(
    ctx: &mut ActionContext,
    mut p: UserActivityListParams,
) -> CkanResult<Value> {
    let mut o = list_options(ctx, p.list_input(), false)?;
    o.types = None;
    o.exclude = None;
    o.hide_users = true;
    let u = ctx.user_row(&p.id).await?.ok_or_else(|| not_found(""))?;
    let mut auth = p.__extras;
    auth.insert("id".into(), json!(u.id));
    ctx.check_access("user_activity_list", &auth).await?;
    let labels = caller_labels(ctx).await?;
    run_list(ctx, store::Scope::User(&u.id), &o, labels.as_deref()).await
}

list_params! {
    /// Return the site's recent dataset activities, newest first, those the caller may see.
    /// `before`, `after` and the type filters are checked but not applied, as in CKAN.
    RecentlyChangedPackagesActivityListParams {}
}

pub(crate) async fn recently_changed_packages_activity_list(
    ctx: &mut ActionContext,
    mut p: RecentlyChangedPackagesActivityListParams,
) -> CkanResult<Value> {
    let mut o = list_options(ctx, p.list_input(), false)?;
    (o.before, o.after, o.types, o.exclude) = (None, None, None, None);
    o.hide_users = true;
    ctx.check_access("recently_changed_packages_activity_list", &p.__extras)
        .await?;
    let labels = caller_labels(ctx).await?;
    run_list(ctx, store::Scope::Packages, &o, labels.as_deref()).await
}

/// The activities as CKAN's dicts, each with its data rebuilt.
pub(crate) async fn with_data(
    ctx: &mut ActionContext,
    rows: Vec<ActivityRow>,
) -> CkanResult<Value> {
    let heads: Vec<(i64, Value)> = rows
        .iter()
        .map(|r| (r.seq, r.to_dict(Value::Null)))
        .collect();
    let mut data = store::data_of(ctx.db().await?, rows).await?;
    let mut out = Vec::with_capacity(heads.len());
    for (seq, mut d) in heads {
        let mut item = data.remove(&seq).unwrap_or(Value::Null);
        hide_unreadable_relationships(ctx, &mut item).await?;
        d["data"] = item;
        out.push(d);
    }
    Ok(Value::Array(out))
}

/// An activity's dataset as it was shows its relationships only with datasets the caller may
/// read now (as package_show does).
async fn hide_unreadable_relationships(
    ctx: &mut ActionContext,
    data: &mut Value,
) -> CkanResult<()> {
    if let Some(pkg) = data.get_mut("package") {
        authz::hide_unreadable_relationships(ctx, pkg).await?;
    }
    Ok(())
}

/// The activity an `id` names, or CKAN's 404.
pub(crate) async fn load(ctx: &mut ActionContext, id: &str) -> CkanResult<ActivityRow> {
    store::activity_by_id(ctx.db().await?, id)
        .await?
        .ok_or_else(|| not_found(""))
}

/// CKAN's `activity_show` auth for a caller who is not a sysadmin: a dataset activity whose
/// labels the caller holds, then reading (`include_data` false) or editing (true) the dataset.
pub(crate) async fn check_activity_access(
    ctx: &mut ActionContext,
    a: &ActivityRow,
    include_data: bool,
) -> CkanResult<()> {
    if ctx.is_sysadmin() || ctx.ignore_auth {
        return Ok(());
    }
    if !a.activity_type.contains("package") {
        return Err(not_authorized("object_type not recognized"));
    }
    let mine = authz::user_labels(ctx).await?;
    let theirs = a.permission_labels.clone().unwrap_or_default();
    if !theirs.iter().any(|l| mine.contains(l)) {
        return Err(not_authorized("Unauthorized to view activity data"));
    }
    let mut p = Params::new();
    p.insert("id".into(), json!(a.object_id));
    // With `catalog.auth.public_activity_stream_detail` the data is as public as the dataset.
    let detail_public = ctx.config().catalog.auth.public_activity_stream_detail;
    let action = if include_data && !detail_public {
        "package_update"
    } else {
        "package_show"
    };
    ctx.check_access(action, &p).await
}

action_params! {
    /// Return one activity, with its data.
    ///
    /// :param id: the id of the activity
    /// :param include_data: whether the caller wants the data: then, unless a sysadmin, they
    ///     must be allowed to edit the dataset
    /// :rtype: dictionary
    pub struct ActivityShowParams {
        /// the id of the activity
        id: String,
        /// when true, the caller must be allowed to edit the dataset
        include_data: Option<PyTruthy>,
    }
}

pub(crate) async fn activity_show(
    ctx: &mut ActionContext,
    p: ActivityShowParams,
) -> CkanResult<Value> {
    let a = load(ctx, &p.id).await?;
    let include_data = p.include_data.is_some_and(|t| t.0);
    check_activity_access(ctx, &a, include_data).await?;
    let seq = a.seq;
    let head = a.to_dict(Value::Null);
    let mut data = store::data_of(ctx.db().await?, vec![a]).await?;
    let mut out = head;
    out["data"] = data.remove(&seq).unwrap_or(Value::Null);
    hide_unreadable_relationships(ctx, &mut out["data"]).await?;
    Ok(out)
}

action_params! {
    /// Return the data of one activity: the object as it was after the change.
    ///
    /// :param id: the id of the activity
    /// :param object_type: `package`, `group` …: only that part of the data
    /// :rtype: dictionary
    pub struct ActivityDataShowParams {
        /// the id of the activity
        id: String,
        /// only this part of the data (`package`, `group`)
        object_type: Option<String>,
    }
}

pub(crate) async fn activity_data_show(
    ctx: &mut ActionContext,
    p: ActivityDataShowParams,
) -> CkanResult<Value> {
    let a = load(ctx, &p.id).await?;
    check_activity_access(ctx, &a, true).await?;
    let seq = a.seq;
    let mut data = store::data_of(ctx.db().await?, vec![a])
        .await?
        .remove(&seq)
        .unwrap_or(Value::Null);
    hide_unreadable_relationships(ctx, &mut data).await?;
    match p.object_type {
        None => Ok(data),
        Some(t) => data
            .get_mut(&t)
            .map(Value::take)
            .ok_or_else(|| not_found("Could not find that object_type in the activity")),
    }
}

action_params! {
    /// Return the difference an activity made: the object's data before it (the previous
    /// activity of the same object) and after it, as text, with both activities.
    ///
    /// :param id: the id of the activity
    /// :param object_type: `package`, `group`, `organization` or `user`: the part of the
    ///     data to compare
    /// :param diff_type: `unified` (default), `context` or `html`
    /// :rtype: dictionary with `diff` and `activities`
    pub struct ActivityDiffParams {
        /// the id of the activity
        id: String,
        /// the part of the data to compare (`package`, `group` …)
        object_type: String,
        /// `unified` (default), `context` or `html`
        diff_type: Option<String>,
    }
}

/// The most characters (of both versions' JSON together) an html diff compares. The diff's
/// intraline work is bounded by characters too (`difflib::MAX_FANCY_WORK`); this bounds the
/// rest (the line matching and the table), which grows with the text.
const MAX_HTML_DIFF_CHARS: usize = 2_000_000;

/// Diffs run on the blocking pool in a lane of their own: a burst of them waits for its own
/// slots and does not hold up other heavy work (DCAT documents).
static DIFFS: Lane = Lane::new("activity_diff");

/// The anchor counter of Python's `HtmlDiff`: each HTML diff of the process numbers its
/// anchors with the next value, as CKAN's do.
static HTML_DIFFS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

pub(crate) async fn activity_diff(
    ctx: &mut ActionContext,
    p: ActivityDiffParams,
) -> CkanResult<Value> {
    let a = load(ctx, &p.id).await?;
    check_activity_access(ctx, &a, true).await?;
    let prev = store::previous(ctx.db().await?, &a)
        .await?
        .ok_or_else(|| not_found("Previous activity for this object not found"))?;
    let (prev_seq, seq) = (prev.seq, a.seq);
    let heads = [prev.to_dict(Value::Null), a.to_dict(Value::Null)];
    let mut data = store::data_of(ctx.db().await?, vec![prev, a]).await?;
    let (before, after) = (
        data.remove(&prev_seq).unwrap_or(Value::Null),
        data.remove(&seq).unwrap_or(Value::Null),
    );
    let missing = || not_found("Could not find object in the activity data");
    let (Some(old), Some(new)) = (before.get(&p.object_type), after.get(&p.object_type)) else {
        return Err(missing());
    };
    let diff_type = p.diff_type.as_deref().unwrap_or("unified");
    let index = if diff_type == "html" {
        HTML_DIFFS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    } else {
        0
    };
    let (old, new, kind) = (old.clone(), new.clone(), diff_type.to_string());
    // Diffing two large datasets is CPU work: off the async workers.
    let diff = DIFFS
        .run(move || {
            let chars = |v: &Value| -> usize {
                crate::difflib::json_lines(v)
                    .iter()
                    .map(|l| l.chars().count() + 1)
                    .sum()
            };
            if kind == "html" && chars(&old) + chars(&new) > MAX_HTML_DIFF_CHARS {
                return Err(validation_message(format!(
                    "The objects are too large for an html diff (more than {MAX_HTML_DIFF_CHARS} characters): use diff_type unified or context"
                )));
            }
            Ok(crate::difflib::activity_diff(&old, &new, &kind, index))
        })
        .await??
        .ok_or_else(|| validation_message("diff_type not recognized"))?;
    let [mut prev_dict, mut this_dict] = heads;
    prev_dict["data"] = before;
    this_dict["data"] = after;
    Ok(json!({"diff": diff, "activities": [prev_dict, this_dict]}))
}

/// An object's activity list: whoever may see the object (`package_show`, `group_show`,
/// `organization_show`, `user_show` decide).
pub(crate) struct ShowAuth(pub(crate) &'static str);

#[async_trait]
impl AuthFunction for ShowAuth {
    fn allow_anonymous(&self) -> bool {
        true
    }
    async fn check(&self, ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
        ctx.check_access(self.0, data).await
    }
}

/// `activity_show` and `activity_data_show` check inside the action (their rules need the
/// activity): the registered auth function lets everyone reach them.
pub(crate) struct ActivityShowAuth;

#[async_trait]
impl AuthFunction for ActivityShowAuth {
    fn allow_anonymous(&self) -> bool {
        true
    }
    async fn check(&self, _ctx: &mut ActionContext, _data: &Params) -> CkanResult<()> {
        Ok(())
    }
}

register_typed_actions! {
    read package_activity_list(PackageActivityListParams) => package_activity_list;
    read activity_show(ActivityShowParams) => activity_show;
    read activity_data_show(ActivityDataShowParams) => activity_data_show;
    read activity_diff(ActivityDiffParams) => activity_diff;
    read group_activity_list(GroupActivityListParams) => group_activity_list;
    read organization_activity_list(OrganizationActivityListParams) => organization_activity_list;
    read user_activity_list(UserActivityListParams) => user_activity_list;
    read recently_changed_packages_activity_list(RecentlyChangedPackagesActivityListParams) => recently_changed_packages_activity_list;
}

register_auth!("package_activity_list", ShowAuth("package_show"));
register_auth!("activity_show", ActivityShowAuth);
register_auth!("activity_data_show", ActivityShowAuth);
register_auth!("activity_diff", ActivityShowAuth);
register_auth!("group_activity_list", ShowAuth("group_show"));
register_auth!("organization_activity_list", ShowAuth("organization_show"));
register_auth!("user_activity_list", ShowAuth("user_show"));
register_auth!("recently_changed_packages_activity_list", ActivityShowAuth);
