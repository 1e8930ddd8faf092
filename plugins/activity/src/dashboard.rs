//! The dashboard (ckanext/activity's dashboard actions): the caller's own activity stream
//! with those of what the caller follows, which of it is new since the caller last marked it
//! seen, and marking it seen.

use catalog_framework::prelude::*;
use catalog_framework::store::time::now_iso;
use catalog_framework::typed::Later;

use crate::actions::{caller_labels, list_options, run_list, ListInput};
use crate::params::{ListLimit, Timestamp};
use crate::store::Scope;

action_params! {
    /// Return your dashboard: your own activity and that of the users, datasets, groups and
    /// organizations you follow, newest first, each with `is_new` (newer than your last
    /// `dashboard_mark_activities_old`, and not yours).
    pub struct DashboardActivityListParams {
        /// where to start (default 0)
        offset: Option<Natural>,
        /// how many activities (default catalog.activity_list_limit, at most
        /// catalog.activity_list_limit_max)
        limit: Later<ListLimit>,
        /// seconds since the epoch: only activities before it
        before: Later<Timestamp>,
        /// seconds since the epoch: only activities after it
        after: Later<Timestamp>,
    }
}

action_params! {
    /// Return how many of your dashboard's activities are new: counted over the page that
    /// `dashboard_activity_list` returns for the same parameters (CKAN counts so).
    pub struct DashboardNewActivitiesCountParams {
        /// where to start (default 0)
        offset: Option<Natural>,
        /// how many activities to count over (default catalog.activity_list_limit)
        limit: Later<ListLimit>,
        /// seconds since the epoch: only activities before it
        before: Later<Timestamp>,
        /// seconds since the epoch: only activities after it
        after: Later<Timestamp>,
    }
}

action_params! {
    /// Mark every activity of your dashboard as seen.
    pub struct DashboardMarkActivitiesOldParams {}
}

/// The dashboard's list parameters: no type filters (CKAN's dashboard schema has none).
macro_rules! list_input {
    ($($params:ty),*) => {$(
        impl From<$params> for (ListInput, Params) {
            fn from(p: $params) -> (ListInput, Params) {
                let input = ListInput::without_filters(p.offset, p.limit, p.before, p.after);
                (input, p.__extras)
            }
        }
    )*};
}

list_input!(
    DashboardActivityListParams,
    DashboardNewActivitiesCountParams
);

/// When the caller last marked the dashboard seen: the stored time, else the account's
/// creation (CKAN sets it when the account is created).
async fn last_viewed(ctx: &mut ActionContext, me: &str) -> CkanResult<String> {
    let stored: Option<String> =
        sqlx::query_scalar("SELECT activity_stream_last_viewed FROM dashboard WHERE user_id = $1")
            .bind(me)
            .fetch_optional(ctx.db().await?)
            .await?;
    match stored {
        Some(t) => Ok(t),
        None => Ok(ctx
            .user_row(me)
            .await?
            .map(|u| u.created)
            .unwrap_or_default()),
    }
}

/// The dashboard page with `is_new` on each activity.
async fn dashboard(
    ctx: &mut ActionContext,
    input: ListInput,
    extras: &Params,
    action: &str,
) -> CkanResult<Vec<Value>> {
    let o = list_options(ctx, input, false)?;
    ctx.check_access(action, extras).await?;
    let me = ctx
        .user_id()
        .map(str::to_string)
        .ok_or_else(|| not_authorized("You must be logged in to access your dashboard."))?;
    let seen = last_viewed(ctx, &me).await?;
    let labels = caller_labels(ctx).await?;
    let Value::Array(list) = run_list(ctx, Scope::Dashboard(&me), &o, labels.as_deref()).await?
    else {
        return Err(internal("an activity list is a list"));
    };
    Ok(list
        .into_iter()
        .map(|mut a| {
            let mine = a["user_id"].as_str() == Some(me.as_str());
            let newer = a["timestamp"].as_str().is_some_and(|t| t > seen.as_str());
            if let Some(m) = a.as_object_mut() {
                m.insert("is_new".into(), json!(!mine && newer));
            }
            a
        })
        .collect())
}

pub(crate) async fn dashboard_activity_list(
    ctx: &mut ActionContext,
    p: DashboardActivityListParams,
) -> CkanResult<Value> {
    let (input, extras) = p.into();
    Ok(Value::Array(
        dashboard(ctx, input, &extras, "dashboard_activity_list").await?,
    ))
}

pub(crate) async fn dashboard_new_activities_count(
    ctx: &mut ActionContext,
    p: DashboardNewActivitiesCountParams,
) -> CkanResult<Value> {
    let (input, extras) = p.into();
    let list = dashboard(ctx, input, &extras, "dashboard_new_activities_count").await?;
    Ok(json!(list.iter().filter(|a| a["is_new"] == true).count()))
}

pub(crate) async fn dashboard_mark_activities_old(
    ctx: &mut ActionContext,
    p: DashboardMarkActivitiesOldParams,
) -> CkanResult<Value> {
    ctx.check_access("dashboard_mark_activities_old", &p.__extras)
        .await?;
    let me = ctx
        .user_id()
        .map(str::to_string)
        .ok_or_else(|| not_authorized("You must be logged in to access your dashboard."))?;
    sqlx::query(
        "INSERT INTO dashboard (user_id, activity_stream_last_viewed) VALUES ($1, $2) \
         ON CONFLICT (user_id) DO UPDATE SET activity_stream_last_viewed = excluded.activity_stream_last_viewed",
    )
    .bind(&me)
    .bind(now_iso())
    .execute(ctx.db().await?)
    .await?;
    Ok(Value::Null)
}

/// The dashboard actions: logged-in users only, with CKAN's message.
pub(crate) struct DashboardAuth;

#[async_trait]
impl AuthFunction for DashboardAuth {
    fn allow_anonymous(&self) -> bool {
        true
    }
    async fn check(&self, ctx: &mut ActionContext, _data: &Params) -> CkanResult<()> {
        match ctx.user_id() {
            Some(_) => Ok(()),
            None => Err(not_authorized(
                "You must be logged in to access your dashboard.",
            )),
        }
    }
}

register_typed_actions! {
    read dashboard_activity_list(DashboardActivityListParams) => dashboard_activity_list, auth = DashboardAuth;
    read dashboard_new_activities_count(DashboardNewActivitiesCountParams) => dashboard_new_activities_count, auth = DashboardAuth;
    write dashboard_mark_activities_old(DashboardMarkActivitiesOldParams) => dashboard_mark_activities_old, auth = DashboardAuth;
}
