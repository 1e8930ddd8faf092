//! The `resource_view_*` actions and the default-view actions, with CKAN 2.12's parameters,
//! order of checks, messages and shapes (ckan/logic/action/{create,update,delete,get}.py).

use std::borrow::Cow;
use std::collections::HashSet;

use catalog_framework::prelude::*;
use catalog_framework::typed::{AsBool, Later, ParamType, PyStr};

use crate::auth::{CreateAuth, DeleteAuth, EditAuth, PackageEditAuth, ReadAuth, SysadminAuth};
use crate::defaults;
use crate::resources::{find_resource, resources_of};
use crate::store::{self, ViewRow};
use crate::validate::{self, is_empty, text};

/// What the auth functions get: the resource and its dataset.
fn auth_data(resource_id: &str, package_id: &str) -> Params {
    let mut p = Params::new();
    p.insert("resource_id".into(), json!(resource_id));
    p.insert("package_id".into(), json!(package_id));
    p
}

fn uuid_text(s: &str) -> bool {
    uuid::Uuid::parse_str(s).is_ok_and(|u| u.hyphenated().to_string() == s.to_lowercase())
}

/// `resource_view_reorder`'s `order`: a list of view ids (each item as `str()` writes it);
/// anything else is refused with CKAN's message as a plain string, not a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ViewOrder(pub(crate) Vec<String>);

impl ParamType for ViewOrder {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match v {
            Value::Array(items) => Ok(ViewOrder(items.iter().map(text).collect())),
            _ => Err("Must supply order as a list".into()),
        }
    }
    fn schema() -> Value {
        json!({"type": "array", "items": {"type": "string"}})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
    fn refusal(key: &str, message: Cow<'static, str>) -> CkanError {
        order_error_at(key, &message)
    }
}

/// `{key: message}`: CKAN's `order` errors are plain strings, not lists.
fn order_error_at(key: &str, message: &str) -> CkanError {
    let mut b = ValidationBuilder::default();
    b.set(key, json!(message));
    b.build()
}

fn order_error(message: &str) -> CkanError {
    order_error_at("order", message)
}

/// `resource_view_clear`'s `view_types`: one string (one type) or a list of strings; a list
/// with anything but strings is `Must be a list of strings` (numbers too), any other value
/// `Not a list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StrList(pub(crate) Vec<String>);

impl ParamType for StrList {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match v {
            Value::String(s) => Ok(StrList(vec![s.clone()])),
            Value::Array(items) => items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .map(StrList)
                .ok_or_else(|| "Must be a list of strings".into()),
            _ => Err("Not a list".into()),
        }
    }
    fn schema() -> Value {
        json!({"oneOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// A resource or dataset dict of the default-view actions, of which only its `id` counts:
/// the id as `str()` writes it, `None` when the value is no dict or its id is missing or
/// falsy (`""`, `0`, `false` …). Never refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DictId(pub(crate) Option<String>);

impl ParamType for DictId {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        Ok(DictId(
            v.get("id").filter(|id| !is_empty(Some(id))).map(text),
        ))
    }
    fn schema() -> Value {
        json!({"type": "object", "properties": {"id": {"type": "string"}}})
    }
    fn to_value(&self) -> Value {
        self.0
            .as_ref()
            .map_or(Value::Null, |id| json!({ "id": id }))
    }
}

action_params! {
    /// Create a new resource view.
    ///
    /// The view type's own config keys are parameters too (`image_url` of `image_view`,
    /// `page_url` of `webpage_view`, `responsive`, `ellipsis_length`, `date_format`,
    /// `show_fields`, `filterable`, `filter_fields` and `filter_values` of
    /// `datatables_view`); any other key is refused. Returns the view.
    pub struct ResourceViewCreateParams {
        /// id of the resource
        resource_id: Option<PyStr>,
        /// name of the view type (`image_view`, `text_view`, `webpage_view`, `datatables_view`)
        view_type: Option<PyStr>,
        /// title of the view
        title: Option<PyStr>,
        /// description of the view
        description: Option<PyStr>,
        /// the view's id (sysadmins only; a UUID)
        id: Option<PyStr>,
    }
}

pub(crate) async fn resource_view_create(
    ctx: &mut ActionContext,
    p: ResourceViewCreateParams,
) -> CkanResult<Value> {
    let Some(resource_id) = p.resource_id else {
        return Err(missing("resource_id"));
    };
    let Some(view_type) = p.view_type else {
        return Err(missing("view_type"));
    };
    let view_type = view_type.text;
    let app = ctx.app.clone();
    let views = views_of(&app)?;
    let Some(vt) = views.view_type(&view_type) else {
        return Err(no_plugin(&view_type));
    };
    let mut errs = ValidationBuilder::default();
    let mut id = None;
    if let Some(PyStr { text: given, .. }) = p.id.filter(|id| !id.falsy) {
        if !(ctx.is_sysadmin() || ctx.ignore_auth) {
            errs.push("id", "The input field id was not expected.");
        } else if !uuid_text(&given) {
            errs.push("id", "Invalid id provided");
        } else if store::get(ctx.db().await?, &given).await?.is_some() {
            errs.push("id", "ResourceView id already exists");
        } else {
            id = Some(given);
        }
    }
    let mut resource = None;
    if resource_id.falsy {
        errs.push("resource_id", "Missing value");
    } else {
        let rid = resource_id.text;
        match find_resource(ctx, &rid, true).await? {
            Some((pkg, _)) => resource = Some((rid, pkg)),
            None => errs.push("resource_id", format!("Resource not found: {rid}")),
        }
    }
    let title = match p.title {
        Some(t) if !t.falsy => Some(t.text),
        _ => {
            errs.push("title", "Missing value");
            None
        }
    };
    let description = p.description.map(|d| d.text);
    let config = validate::config(views, &view_type, &***vt, p.__extras, &mut errs);
    errs.finish()?;
    let Some((resource_id, package_id)) = resource else {
        return Err(internal("a resource view without its resource"));
    };
    ctx.check_access(
        "resource_view_create",
        &auth_data(&resource_id, &package_id),
    )
    .await?;
    let order = store::max_order(ctx.db().await?, &resource_id)
        .await?
        .map_or(0, |m| m + 1);
    let row = ViewRow {
        id: id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
        resource_id,
        title,
        description,
        view_type,
        order,
        config,
    };
    store::insert(ctx.db().await?, &row).await?;
    ctx.emit(
        Entity::ResourceView,
        Change::Created,
        &row.id,
        None,
        Some(row.to_activity_data(&package_id)),
    );
    Ok(row.to_dict(&package_id))
}

fn views_of(app: &AppState) -> CkanResult<&crate::Views> {
    app.extension::<crate::Views>()
        .ok_or_else(|| internal("the views plugin was not configured"))
}

fn no_plugin(view_type: &str) -> CkanError {
    let mut b = ValidationBuilder::default();
    b.set(
        "view_type",
        json!(format!("No plugin found for view_type {view_type}")),
    );
    b.build()
}

action_params! {
    /// Update a resource view. Columns not given keep their values; the view type's config is
    /// replaced by the config keys given (its defaults applied again). The view type cannot
    /// change. Returns the view.
    pub struct ResourceViewUpdateParams {
        /// id of the view
        id: Option<PyStr>,
        /// id of the resource (another resource moves the view there)
        resource_id: Option<PyStr>,
        /// title of the view
        title: Option<PyStr>,
        /// description of the view
        description: Option<PyStr>,
        /// ignored: a view's type cannot change
        view_type: Option<PyStr>,
        /// ignored, so that a dict from `resource_view_show` can be sent back
        package_id: Option<PyStr>,
    }
}

pub(crate) async fn resource_view_update(
    ctx: &mut ActionContext,
    p: ResourceViewUpdateParams,
) -> CkanResult<Value> {
    let Some(PyStr { text: id, .. }) = p.id else {
        return Err(missing("id"));
    };
    let Some(old) = store::get(ctx.db().await?, &id).await? else {
        return Err(not_found("Resource view was not found."));
    };
    let app = ctx.app.clone();
    let views = views_of(&app)?;
    let Some(vt) = views.view_type(&old.view_type) else {
        return Err(no_plugin(&old.view_type));
    };
    let mut errs = ValidationBuilder::default();
    let mut moved_to = None;
    if let Some(PyStr { text: rid, .. }) = p.resource_id {
        match find_resource(ctx, &rid, true).await? {
            Some((pkg, _)) => moved_to = Some((rid, pkg)),
            None => errs.push("resource_id", format!("Resource not found: {rid}")),
        }
    }
    let config = validate::config(views, &old.view_type, &***vt, p.__extras, &mut errs);
    errs.finish()?;
    let Some((package_id, _)) = find_resource(ctx, &old.resource_id, true).await? else {
        return Err(not_found("Resource was not found."));
    };
    // CKAN checks only the resource named in the request (and fails with a 500 when there
    // is none): the view's own resource is checked, and the one it moves to as well.
    ctx.check_access(
        "resource_view_update",
        &auth_data(&old.resource_id, &package_id),
    )
    .await?;
    let mut new_package_id = package_id.clone();
    if let Some((rid, pkg)) = &moved_to {
        if *rid != old.resource_id {
            ctx.check_access("resource_view_update", &auth_data(rid, pkg))
                .await?;
        }
        new_package_id.clone_from(pkg);
    }
    let row = ViewRow {
        resource_id: moved_to.map_or_else(|| old.resource_id.clone(), |(rid, _)| rid),
        title: p.title.map(|t| t.text).or_else(|| old.title.clone()),
        description: p
            .description
            .map(|d| d.text)
            .or_else(|| old.description.clone()),
        config,
        ..old
    };
    store::update(ctx.db().await?, &row).await?;
    ctx.emit(
        Entity::ResourceView,
        Change::Updated,
        &row.id,
        None,
        Some(row.to_activity_data(&new_package_id)),
    );
    Ok(row.to_dict(&new_package_id))
}

action_params! {
    /// Return a resource view.
    pub struct ResourceViewShowParams {
        /// id of the view
        id: Option<PyStr>,
    }
}

pub(crate) async fn resource_view_show(
    ctx: &mut ActionContext,
    p: ResourceViewShowParams,
) -> CkanResult<Value> {
    let Some(PyStr { text: id, .. }) = p.id else {
        return Err(missing("id"));
    };
    let Some(row) = store::get(ctx.db().await?, &id).await? else {
        // CKAN's auth function raises the message; sysadmins skip it and get a bare one.
        return Err(if ctx.is_sysadmin() || ctx.ignore_auth {
            not_found("")
        } else {
            not_found("Resource view not found, cannot check auth.")
        });
    };
    let package_id = find_resource(ctx, &row.resource_id, false)
        .await?
        .map(|(pkg, _)| pkg)
        .unwrap_or_default();
    ctx.check_access(
        "resource_view_show",
        &auth_data(&row.resource_id, &package_id),
    )
    .await?;
    if package_id.is_empty() {
        return Err(not_found("Resource was not found."));
    }
    Ok(row.to_dict(&package_id))
}

action_params! {
    /// Return the views of a resource, in their order (views of types no enabled plugin
    /// registers are left out).
    pub struct ResourceViewListParams {
        /// id of the resource
        id: Option<PyStr>,
    }
}

pub(crate) async fn resource_view_list(
    ctx: &mut ActionContext,
    p: ResourceViewListParams,
) -> CkanResult<Value> {
    let Some(PyStr { text: id, .. }) = p.id else {
        return Err(missing("id"));
    };
    let Some((package_id, _)) = find_resource(ctx, &id, false).await? else {
        return Err(not_found(""));
    };
    ctx.check_access("resource_view_list", &auth_data(&id, &package_id))
        .await?;
    let rows = store::of_resource(ctx.db().await?, &id).await?;
    let app = ctx.app.clone();
    let views = views_of(&app)?;
    Ok(Value::Array(
        rows.iter()
            .filter(|r| views.view_type(&r.view_type).is_some())
            .map(|r| r.to_dict(&package_id))
            .collect(),
    ))
}

action_params! {
    /// Reorder the views of a resource: the views listed come first, in the order given, the
    /// others after them in their current order. Returns the resource's id and every view id
    /// in the new order.
    pub struct ResourceViewReorderParams {
        /// id of the resource
        id: Option<PyStr>,
        /// a list of view ids
        order: Later<ViewOrder>,
    }
}

pub(crate) async fn resource_view_reorder(
    ctx: &mut ActionContext,
    p: ResourceViewReorderParams,
) -> CkanResult<Value> {
    let mut errs = ValidationBuilder::default();
    if p.id.is_none() {
        errs.push("id", "Missing value");
    }
    if !p.order.is_present() {
        errs.push("order", "Missing value");
    }
    errs.finish()?;
    let (Some(PyStr { text: id, .. }), Some(ViewOrder(order))) = (p.id, p.order.get()?) else {
        return Err(internal("reorder parameters"));
    };
    let distinct: HashSet<&String> = order.iter().collect();
    if distinct.len() != order.len() {
        return Err(order_error("No duplicates allowed in order"));
    }
    let Some((package_id, _)) = find_resource(ctx, &id, true).await? else {
        return Err(not_found("Resource was not found."));
    };
    ctx.check_access("resource_view_reorder", &auth_data(&id, &package_id))
        .await?;
    let mut rest: Vec<String> = store::of_resource(ctx.db().await?, &id)
        .await?
        .into_iter()
        .map(|r| r.id)
        .collect();
    let mut new_order = Vec::with_capacity(rest.len());
    for view in order {
        match rest.iter().position(|r| *r == view) {
            Some(i) => {
                rest.remove(i);
                new_order.push(view);
            }
            None => return Err(order_error(&format!("View {view} does not exist"))),
        }
    }
    new_order.extend(rest);
    store::set_order(ctx.db().await?, &new_order, 1).await?;
    Ok(json!({"id": id, "order": new_order}))
}

action_params! {
    /// Delete a resource view. Returns the id of its resource.
    pub struct ResourceViewDeleteParams {
        /// id of the view
        id: Option<PyStr>,
    }
}

pub(crate) async fn resource_view_delete(
    ctx: &mut ActionContext,
    p: ResourceViewDeleteParams,
) -> CkanResult<Value> {
    let Some(PyStr { text: id, .. }) = p.id else {
        return Err(missing("id"));
    };
    let Some(row) = store::get(ctx.db().await?, &id).await? else {
        return Err(not_found(""));
    };
    let package_id = find_resource(ctx, &row.resource_id, true)
        .await?
        .map(|(pkg, _)| pkg)
        .unwrap_or_default();
    ctx.check_access(
        "resource_view_delete",
        &auth_data(&row.resource_id, &package_id),
    )
    .await?;
    store::delete(ctx.db().await?, &row.id).await?;
    Ok(json!({"resource_id": row.resource_id}))
}

action_params! {
    /// Delete every resource view of the given types on the whole site, or every view when
    /// no type is given. Sysadmins only. Returns null.
    pub struct ResourceViewClearParams {
        /// the view types whose views go (default: all)
        view_types: Later<StrList>,
    }
}

pub(crate) async fn resource_view_clear(
    ctx: &mut ActionContext,
    p: ResourceViewClearParams,
) -> CkanResult<Value> {
    ctx.check_access("resource_view_clear", &p.to_params())
        .await?;
    let types = p.view_types.get()?.map(|t| t.0).unwrap_or_default();
    store::clear(ctx.db().await?, &types).await?;
    Ok(Value::Null)
}

/// `{key: {"id": ["Missing value"]}}`: a dict parameter without its id.
fn missing_id(key: &str) -> CkanError {
    let mut b = ValidationBuilder::default();
    b.set(key, json!({"id": ["Missing value"]}));
    b.build()
}

action_params! {
    /// Create the default views of one resource (`catalog.views.default_views`) that it does
    /// not have yet and that suit it. Returns the views created.
    pub struct ResourceCreateDefaultResourceViewsParams {
        /// the resource dict (its `id` names the stored resource whose views are made)
        resource: Later<DictId>,
        /// the dataset dict (unused: the stored dataset is used)
        package: Later<DictId>,
        /// make the views that need the DataStore instead of the others (default false)
        create_datastore_views: Later<AsBool>,
    }
}

pub(crate) async fn resource_create_default_resource_views(
    ctx: &mut ActionContext,
    p: ResourceCreateDefaultResourceViewsParams,
) -> CkanResult<Value> {
    let Some(DictId(id)) = p.resource.get()? else {
        return Err(missing("resource"));
    };
    let Some(id) = id else {
        return Err(missing_id("resource"));
    };
    let Some((package_id, stored)) = find_resource(ctx, &id, true).await? else {
        return Err(not_found("Resource was not found."));
    };
    ctx.check_access(
        "resource_create_default_resource_views",
        &auth_data(&id, &package_id),
    )
    .await?;
    let datastore = p.create_datastore_views.or(false)?;
    let package = dataset_doc(ctx, &package_id).await?;
    let created = defaults::add_views_to_resource(ctx, &stored, &package, datastore).await?;
    Ok(Value::Array(created))
}

/// A dataset's stored document.
async fn dataset_doc(ctx: &mut ActionContext, id: &str) -> CkanResult<Map<String, Value>> {
    let Some(row) = ctx.package_row(id).await? else {
        return Err(not_found("Dataset was not found"));
    };
    Ok(serde_json::from_str(&row.data)?)
}

action_params! {
    /// Create the default views (`catalog.views.default_views`) of every resource of a
    /// dataset that does not have them yet and that they suit. Returns the views created.
    pub struct PackageCreateDefaultResourceViewsParams {
        /// the dataset dict (its `id` names the stored dataset whose resources get views)
        package: Later<DictId>,
        /// make the views that need the DataStore instead of the others (default false)
        create_datastore_views: Later<AsBool>,
    }
}

pub(crate) async fn package_create_default_resource_views(
    ctx: &mut ActionContext,
    p: PackageCreateDefaultResourceViewsParams,
) -> CkanResult<Value> {
    let Some(DictId(id)) = p.package.get()? else {
        return Err(missing("package"));
    };
    let Some(id) = id else {
        return Err(missing_id("package"));
    };
    let Some(row) = ctx.package_for_update(&id).await? else {
        return Err(not_found("Dataset was not found"));
    };
    let mut auth = Params::new();
    auth.insert("package_id".into(), json!(row.id));
    ctx.check_access("package_create_default_resource_views", &auth)
        .await?;
    let datastore = p.create_datastore_views.or(false)?;
    let doc: Map<String, Value> = serde_json::from_str(&row.data)?;
    let mut created = Vec::new();
    for r in resources_of(&doc) {
        created.extend(defaults::add_views_to_resource(ctx, &r, &doc, datastore).await?);
    }
    Ok(Value::Array(created))
}

register_typed_actions! {
    write resource_view_create(ResourceViewCreateParams) => resource_view_create, auth = CreateAuth;
    write resource_view_update(ResourceViewUpdateParams) => resource_view_update, auth = EditAuth;
    read resource_view_show(ResourceViewShowParams) => resource_view_show, auth = ReadAuth;
    read resource_view_list(ResourceViewListParams) => resource_view_list, auth = ReadAuth;
    write resource_view_reorder(ResourceViewReorderParams) => resource_view_reorder, auth = EditAuth;
    write resource_view_delete(ResourceViewDeleteParams) => resource_view_delete, auth = DeleteAuth;
    write resource_view_clear(ResourceViewClearParams) => resource_view_clear, auth = SysadminAuth;
    write resource_create_default_resource_views(ResourceCreateDefaultResourceViewsParams) => resource_create_default_resource_views, auth = CreateAuth;
    write package_create_default_resource_views(PackageCreateDefaultResourceViewsParams) => package_create_default_resource_views, auth = PackageEditAuth;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode<T: ParamType>(v: Value) -> Result<T, Cow<'static, str>> {
        T::decode(&v)
    }

    #[test]
    fn the_parameter_types_read_as_the_actions_did() {
        assert_eq!(
            decode::<ViewOrder>(json!(["a", 1, true])),
            Ok(ViewOrder(vec!["a".into(), "1".into(), "True".into()]))
        );
        assert_eq!(
            ViewOrder::refusal("order", decode::<ViewOrder>(json!("a")).unwrap_err())
                .to_error_object(),
            json!({"__type": "Validation Error", "order": "Must supply order as a list"})
        );
        assert_eq!(decode::<StrList>(json!("x")), Ok(StrList(vec!["x".into()])));
        assert_eq!(
            decode::<StrList>(json!(["x", "y"])),
            Ok(StrList(vec!["x".into(), "y".into()]))
        );
        assert_eq!(
            decode::<StrList>(json!(["x", 1])),
            Err("Must be a list of strings".into())
        );
        assert_eq!(decode::<StrList>(json!(1)), Err("Not a list".into()));
        assert_eq!(
            decode::<DictId>(json!({"id": 5})),
            Ok(DictId(Some("5".into())))
        );
        assert_eq!(decode::<DictId>(json!({"id": ""})), Ok(DictId(None)));
        assert_eq!(decode::<DictId>(json!({"id": 0})), Ok(DictId(None)));
        assert_eq!(decode::<DictId>(json!({})), Ok(DictId(None)));
        assert_eq!(decode::<DictId>(json!(["id"])), Ok(DictId(None)));
        assert_eq!(decode::<DictId>(json!("abc")), Ok(DictId(None)));
    }

    #[test]
    fn ids_are_uuids_in_their_text_form() {
        assert!(uuid_text("368be57f-9f0b-44f5-a827-6d906317b13a"));
        assert!(!uuid_text("368be57f9f0b44f5a8276d906317b13a"));
        assert!(!uuid_text("not-a-uuid"));
    }
}
