//! Default views (CKAN's `ckan.lib.datapreview.add_views_to_resource`) and the event
//! subscriber that keeps views in step with resources: a created resource (by
//! `resource_create` or `package_create`) or one whose format changed (`resource_update`)
//! gets the default views that suit it, in the changing call's transaction; a resource that
//! goes (deleted, dropped from its dataset, its dataset purged) takes its views with it.

use std::collections::HashSet;

use catalog_framework::prelude::*;

use crate::store;

/// Creates the default views of a resource that it does not have yet and that suit it
/// (`can_view`), each through `resource_view_create` without an auth check, in the order
/// `catalog.views.default_views` names them. Only the types that need the DataStore when
/// `datastore`, only the others when not. Returns the views created.
pub(crate) async fn add_views_to_resource(
    ctx: &mut ActionContext,
    resource: &Map<String, Value>,
    package: &Map<String, Value>,
    datastore: bool,
) -> CkanResult<Vec<Value>> {
    let app = ctx.app.clone();
    let Some(views) = app.extension::<crate::Views>() else {
        return Err(internal("the views plugin was not configured"));
    };
    // The view types that would show this resource, before asking the store which it has.
    let candidates: Vec<(&String, &dyn crate::view_type::ResourceView)> = views
        .default_views
        .iter()
        .filter_map(|n| views.view_type(n).map(|t| (n, &***t)))
        .filter(|(_, t)| t.info().requires_datastore == datastore)
        .filter(|(_, t)| t.can_view(resource, package, &views.context))
        .collect();
    let Some(resource_id) = resource.get("id").and_then(Value::as_str) else {
        return Ok(Vec::new());
    };
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let existing: HashSet<String> = store::of_resource(ctx.db().await?, resource_id)
        .await?
        .into_iter()
        .map(|v| v.view_type)
        .collect();
    let mut created = Vec::new();
    for (name, t) in candidates {
        if existing.contains(name) {
            continue;
        }
        let mut p = Params::new();
        p.insert("resource_id".into(), json!(resource_id));
        p.insert("view_type".into(), json!(name));
        p.insert("title".into(), json!(t.info().default_title));
        p.insert("description".into(), json!(""));
        created.push(ctx.call_ignoring_auth("resource_view_create", p).await?);
    }
    Ok(created)
}

/// The ids of a dataset document's resources.
fn resource_ids(doc: Option<&Value>) -> Vec<String> {
    doc.and_then(|d| d.get("resources"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("id").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// The event subscriber: default views for new resources, no views for gone ones.
pub(crate) struct DefaultViews;

#[async_trait]
impl EventSubscriber for DefaultViews {
    async fn on_event(&self, ctx: &mut ActionContext, event: &DomainEvent) -> CkanResult<()> {
        let object = |v: Option<&Value>| v.and_then(Value::as_object).cloned();
        match (event.entity, event.change) {
            (Entity::Resource, Change::Created) => {
                let Some(resource) = object(event.after.as_ref()) else {
                    return Ok(());
                };
                let package = package_of(ctx, &resource, &event.id).await?;
                add_views_to_resource(ctx, &resource, &package, false).await?;
            }
            // As CKAN, only a change of format brings default views to an existing resource.
            (Entity::Resource, Change::Updated) => {
                let format = |v: Option<&Value>| v.and_then(|r| r.get("format")).cloned();
                let (Some(_), Some(resource)) =
                    (event.before.as_ref(), object(event.after.as_ref()))
                else {
                    return Ok(());
                };
                if format(event.before.as_ref()) == format(event.after.as_ref()) {
                    return Ok(());
                }
                let package = package_of(ctx, &resource, &event.id).await?;
                add_views_to_resource(ctx, &resource, &package, false).await?;
            }
            (Entity::Resource, Change::Deleted | Change::Purged) => {
                store::delete_of_resources(ctx.db().await?, std::slice::from_ref(&event.id))
                    .await?;
            }
            (Entity::Package, Change::Created) => {
                let Some(doc) = object(event.after.as_ref()) else {
                    return Ok(());
                };
                for r in crate::resources::resources_of(&doc) {
                    add_views_to_resource(ctx, &r, &doc, false).await?;
                }
            }
            // A resource dropped from its dataset (package_update, resource_delete) or purged
            // with it.
            (Entity::Package, Change::Updated | Change::Deleted | Change::Purged) => {
                let kept: HashSet<String> =
                    resource_ids(event.after.as_ref()).into_iter().collect();
                let gone: Vec<String> = resource_ids(event.before.as_ref())
                    .into_iter()
                    .filter(|id| !kept.contains(id))
                    .collect();
                if !gone.is_empty() {
                    store::delete_of_resources(ctx.db().await?, &gone).await?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// The stored document of a resource's dataset (empty when the resource is gone).
async fn package_of(
    ctx: &mut ActionContext,
    resource: &Map<String, Value>,
    resource_id: &str,
) -> CkanResult<Map<String, Value>> {
    // The resource dict names its dataset; else the store says which has the resource.
    let package_id = match resource.get("package_id").and_then(Value::as_str) {
        Some(p) => p.to_string(),
        None => match crate::resources::find_resource(ctx, resource_id, false).await? {
            Some((p, _)) => p,
            None => return Ok(Map::new()),
        },
    };
    let Some(row) = ctx.package_row(&package_id).await? else {
        return Ok(Map::new());
    };
    Ok(serde_json::from_str(&row.data)?)
}
