//! Recording: one activity per committed change, from the domain events, in the changing
//! call's transaction (spec/ckan-write-auth-legacy.md §5; CKAN's `ckanext/activity/subscriptions.py`).

use catalog_framework::authz;
use catalog_framework::prelude::*;

use crate::store::{self, NewActivity};

/// The event subscriber that writes the activities.
pub(crate) struct RecordActivity;

/// The activity of an event: its type, its data and, for datasets, its permission labels.
struct Recorded {
    /// An update whose data equals the previous activity's (but for the modification time)
    /// records nothing: CKAN records no activity for an update that changed nothing.
    skip_if_same: bool,
    /// The object was just created: it has no earlier activity to store this one as a patch
    /// against, so none is looked for.
    new_object: bool,
    activity_type: String,
    object_id: String,
    user_id: Option<String>,
    data: Value,
    labels: Option<Vec<String>>,
}

/// `package_show` of the dataset as the change left it, whoever made the change.
async fn package_dict(ctx: &mut ActionContext, id: &str) -> CkanResult<Value> {
    let mut p = Params::new();
    p.insert("id".into(), json!(id));
    ctx.call_ignoring_auth("package_show", p).await
}

async fn package_activity(
    ctx: &mut ActionContext,
    event: &DomainEvent,
) -> CkanResult<Option<Recorded>> {
    let state = |v: Option<&Value>| {
        v.and_then(|d| d.get("state"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let verb = match event.change {
        Change::Purged => return Ok(None),
        Change::Created => "new",
        Change::Deleted => "deleted",
        Change::Updated if state(event.after.as_ref()).as_deref() == Some("deleted") => "deleted",
        Change::Updated => "changed",
    };
    // The bundle, not the row alone: the `package_show` just after finds the dataset in it
    // (ActionContext::package_bundle), so the dataset is read once.
    let Some(bundle) = ctx.package_bundle(&event.id).await? else {
        return Ok(None);
    };
    let row = bundle.row.clone();
    let collaborators = ctx.config().catalog.auth.allow_dataset_collaborators;
    let labels = authz::dataset_labels(&row, collaborators);
    let package = package_dict(ctx, &row.id).await?;
    Ok(Some(Recorded {
        skip_if_same: verb == "changed",
        new_object: verb == "new",
        activity_type: format!("{verb} package"),
        object_id: row.id,
        user_id: event.actor.clone(),
        data: json!({"package": package, "actor": ctx.user_name()}),
        labels: Some(labels),
    }))
}

async fn group_activity(
    ctx: &mut ActionContext,
    event: &DomainEvent,
    kind: &str,
) -> CkanResult<Option<Recorded>> {
    let verb = match event.change {
        Change::Purged => return Ok(None),
        Change::Created => "new",
        Change::Updated => "changed",
        Change::Deleted => "deleted",
    };
    let Some(g) = ctx.group_row(&event.id).await? else {
        return Ok(None);
    };
    let verb = if g.state == "deleted" {
        "deleted"
    } else {
        verb
    };
    let group = json!({
        "id": g.id,
        "name": g.name,
        "title": g.title,
        "type": g.group_type,
        "description": g.description,
        "image_url": g.image_url,
        "created": g.created,
        "is_organization": g.is_organization,
        "approval_status": g.approval_status,
        "state": g.state,
        "extras": g.extras,
    });
    Ok(Some(Recorded {
        skip_if_same: verb == "changed",
        new_object: verb == "new",
        activity_type: format!("{verb} {kind}"),
        object_id: g.id.clone(),
        user_id: event.actor.clone(),
        data: json!({ "group": group }),
        labels: None,
    }))
}

fn user_activity(event: &DomainEvent) -> Option<Recorded> {
    let verb = match event.change {
        Change::Created => "new",
        Change::Updated => "changed",
        // CKAN records nothing when a user is deleted or purged.
        Change::Deleted | Change::Purged => return None,
    };
    Some(Recorded {
        skip_if_same: false,
        new_object: false,
        activity_type: format!("{verb} user"),
        object_id: event.id.clone(),
        // A user's activities are their own, whoever made the change (CKAN's `user_id` is the
        // user, also when a sysadmin created the account).
        user_id: Some(event.id.clone()),
        data: json!({}),
        labels: None,
    })
}

/// A resource view created or changed (the views plugin's events): an activity of its
/// dataset whose data is the view's row (CKAN records none for a deleted view). Unlike CKAN,
/// whose view activities have no permission labels (and so show a private dataset's view
/// changes in everyone's user and dashboard streams), they carry the dataset's labels.
async fn view_activity(
    ctx: &mut ActionContext,
    event: &DomainEvent,
) -> CkanResult<Option<Recorded>> {
    let verb = match event.change {
        Change::Created => "new",
        Change::Updated => "changed",
        Change::Deleted | Change::Purged => return Ok(None),
    };
    let Some(data) = event.after.clone() else {
        return Ok(None);
    };
    let Some(package_id) = data.get("package_id").and_then(Value::as_str) else {
        return Ok(None);
    };
    let Some(row) = ctx.package_row(package_id).await? else {
        return Ok(None);
    };
    let collaborators = ctx.config().catalog.auth.allow_dataset_collaborators;
    Ok(Some(Recorded {
        skip_if_same: false,
        new_object: false,
        activity_type: format!("{verb} resource view"),
        object_id: row.id.clone(),
        user_id: event.actor.clone(),
        data,
        labels: Some(authz::dataset_labels(&row, collaborators)),
    }))
}

#[async_trait]
impl EventSubscriber for RecordActivity {
    async fn on_event(&self, ctx: &mut ActionContext, event: &DomainEvent) -> CkanResult<()> {
        let recorded = match event.entity {
            Entity::Package => package_activity(ctx, event).await?,
            Entity::Group => group_activity(ctx, event, "group").await?,
            Entity::Organization => group_activity(ctx, event, "organization").await?,
            Entity::User => user_activity(event),
            Entity::ResourceView => view_activity(ctx, event).await?,
            // A resource's change arrives as its dataset's change too; memberships make no
            // activity in CKAN.
            Entity::Resource | Entity::Member => None,
        };
        let Some(r) = recorded else {
            return Ok(());
        };
        let app = ctx.app.clone();
        let kept = app
            .extension::<store::LastActivities>()
            .ok_or_else(|| internal("the activity plugin was not set up"))?;
        store::insert(
            ctx.db().await?,
            kept,
            &NewActivity {
                user_id: r.user_id.as_deref(),
                object_id: &r.object_id,
                activity_type: &r.activity_type,
                permission_labels: r.labels.as_deref(),
                data: &r.data,
                new_object: r.new_object,
            },
            r.skip_if_same,
        )
        .await?;
        Ok(())
    }
}
