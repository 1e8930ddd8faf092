//! The activity actions of the older release, answered from the activity records:
//! `activity_detail_list` (what a change changed, derived from the data before and after it),
//! the `*_activity_list_html` variants (CKAN 2.8's activity stream snippet) and the revision
//! actions (`revision_list`, `revision_show`, `package_/group_/organization_revision_list`:
//! each activity is a revision).

use std::collections::HashMap;

use catalog_framework::params::opt_str;
use catalog_framework::prelude::*;
use catalog_framework::store::time::{format_iso, parse_iso};
use catalog_framework::typed::InDict;

use crate::actions::{caller_labels, check_activity_access, load};
use crate::store::{self, ActivityRow, ListQuery, Scope};
use crate::ActivitySettings;

// ---------------------------------------------------------------------------------------------
// Activity details
// ---------------------------------------------------------------------------------------------

/// The dataset fields whose change is a change of the dataset itself (not of its resources,
/// extras or tags, which get their own details, nor of what is computed).
fn own_field(key: &str) -> bool {
    !matches!(
        key,
        "resources"
            | "tags"
            | "extras"
            | "groups"
            | "organization"
            | "metadata_modified"
            | "num_resources"
            | "num_tags"
            | "relationships_as_subject"
            | "relationships_as_object"
    )
}

/// A stable id for the `n`th detail of an activity (details are derived on each read).
fn detail_id(activity_id: &str, n: usize) -> String {
    uuid::Uuid::new_v3(
        &uuid::Uuid::NAMESPACE_OID,
        format!("{activity_id}/detail/{n}").as_bytes(),
    )
    .to_string()
}

/// One detail, before its id: (object_id, object_type, activity_type, data).
type Detail = (String, &'static str, &'static str, Value);

/// Items of a list keyed by one of their fields: in their order, and by key.
struct Keyed<'a> {
    order: Vec<(String, &'a Value)>,
    by_key: HashMap<String, &'a Value>,
}

impl<'a> Keyed<'a> {
    fn of(v: Option<&'a Value>, key: &str) -> Keyed<'a> {
        let order: Vec<(String, &Value)> = v
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| Some((i.get(key)?.as_str()?.to_string(), i)))
                    .collect()
            })
            .unwrap_or_default();
        let by_key = order.iter().map(|(k, v)| (k.clone(), *v)).collect();
        Keyed { order, by_key }
    }

    fn get(&self, key: &str) -> Option<&&'a Value> {
        self.by_key.get(key)
    }

    fn contains_key(&self, key: &str) -> bool {
        self.by_key.contains_key(key)
    }

    fn iter(&self) -> impl Iterator<Item = (&String, &&'a Value)> {
        self.order.iter().map(|(k, v)| (k, v))
    }
}

/// What a `changed package` activity changed, as CKAN 2.8's activity details named it: the
/// dataset's own fields (`Package`), each resource (`Resource`), extra (`PackageExtra`) and tag
/// (`tag`) added, changed or removed.
fn package_changes(before: &Value, after: &Value) -> Vec<Detail> {
    let pkg_id = after["id"].as_str().unwrap_or_default().to_string();
    let mut out: Vec<Detail> = Vec::new();
    let (Some(b), Some(a)) = (before.as_object(), after.as_object()) else {
        return out;
    };
    let changed = a
        .iter()
        .filter(|(k, _)| own_field(k))
        .any(|(k, v)| b.get(k) != Some(v))
        || b.keys().any(|k| own_field(k) && !a.contains_key(k));
    if changed {
        out.push((
            pkg_id.clone(),
            "Package",
            "changed",
            json!({"package": after}),
        ));
    }
    let (old, new) = (
        Keyed::of(b.get("resources"), "id"),
        Keyed::of(a.get("resources"), "id"),
    );
    for (id, r) in new.iter() {
        match old.get(id) {
            None => out.push((id.clone(), "Resource", "new", json!({"resource": r}))),
            Some(o) if o != r => {
                out.push((id.clone(), "Resource", "changed", json!({"resource": r})))
            }
            Some(_) => {}
        }
    }
    for (id, r) in old.iter().filter(|(id, _)| !new.contains_key(id)) {
        out.push((id.clone(), "Resource", "deleted", json!({"resource": r})));
    }
    let (old, new) = (
        Keyed::of(b.get("extras"), "key"),
        Keyed::of(a.get("extras"), "key"),
    );
    let extra = |key: &str, e: &Value, state: &str| {
        let id = uuid::Uuid::new_v3(
            &uuid::Uuid::NAMESPACE_OID,
            format!("{pkg_id}/extra/{key}").as_bytes(),
        )
        .to_string();
        let data = json!({"package_extra": {
            "id": id, "key": key, "value": e.get("value"), "package_id": pkg_id, "state": state,
        }});
        (id, data)
    };
    for (key, e) in new.iter() {
        let kind = match old.get(key) {
            None => "new",
            Some(o) if o != e => "changed",
            Some(_) => continue,
        };
        let (id, data) = extra(key, e, "active");
        out.push((id, "PackageExtra", kind, data));
    }
    for (key, e) in old.iter().filter(|(k, _)| !new.contains_key(k)) {
        let (id, data) = extra(key, e, "deleted");
        out.push((id, "PackageExtra", "deleted", data));
    }
    let (old, new) = (
        Keyed::of(b.get("tags"), "name"),
        Keyed::of(a.get("tags"), "name"),
    );
    let tag = |t: &Value, id: &str| -> Detail {
        let tid = t["id"].as_str().unwrap_or(id).to_string();
        (tid, "tag", "", json!({"tag": t, "package": after}))
    };
    for (name, t) in new.iter().filter(|(n, _)| !old.contains_key(n)) {
        let mut d = tag(t, name);
        d.2 = "added";
        out.push(d);
    }
    for (name, t) in old.iter().filter(|(n, _)| !new.contains_key(n)) {
        let mut d = tag(t, name);
        d.2 = "removed";
        out.push(d);
    }
    if out.is_empty() {
        out.push((pkg_id, "Package", "changed", json!({"package": after})));
    }
    out
}

/// The details of an activity as CKAN's `activity_detail_dictize` shows them.
async fn details(ctx: &mut ActionContext, a: &ActivityRow, data: &Value) -> CkanResult<Vec<Value>> {
    let pkg = &data["package"];
    let found: Vec<Detail> = match a.activity_type.as_str() {
        "new package" | "deleted package" => {
            let kind = if a.activity_type == "new package" {
                "new"
            } else {
                "deleted"
            };
            vec![(
                a.object_id.clone(),
                "Package",
                kind,
                json!({"package": pkg}),
            )]
        }
        "changed package" => {
            let conn = ctx.db().await?;
            let before = match store::previous(conn, a).await? {
                Some(p) => {
                    let seq = p.seq;
                    store::data_of(conn, vec![p]).await?.remove(&seq)
                }
                None => None,
            };
            match before {
                Some(b) => package_changes(&b["package"], pkg),
                None => vec![(
                    a.object_id.clone(),
                    "Package",
                    "changed",
                    json!({"package": pkg}),
                )],
            }
        }
        _ => Vec::new(),
    };
    Ok(found
        .into_iter()
        .enumerate()
        .map(|(n, (object_id, object_type, activity_type, data))| {
            json!({
                "id": detail_id(&a.id, n),
                "activity_id": a.id,
                "object_id": object_id,
                "object_type": object_type,
                "activity_type": activity_type,
                "data": data,
            })
        })
        .collect())
}

/// The data of one activity, rebuilt.
async fn data_of_one(ctx: &mut ActionContext, a: ActivityRow) -> CkanResult<Value> {
    let seq = a.seq;
    Ok(store::data_of(ctx.db().await?, vec![a])
        .await?
        .remove(&seq)
        .unwrap_or(Value::Null))
}

action_params! {
    /// Return what an activity changed, as a list of activity details (the older release's
    /// detail records, derived from the data before and after the change): the dataset's own
    /// fields (`Package`), each resource (`Resource`), extra (`PackageExtra`) and tag (`tag`)
    /// added, changed or removed. Whoever may see the activity may list its details.
    pub struct ActivityDetailListParams {
        /// the id of the activity
        id: String,
    }
}

pub(crate) async fn activity_detail_list(
    ctx: &mut ActionContext,
    p: ActivityDetailListParams,
) -> CkanResult<Value> {
    let a = load(ctx, &p.id).await?;
    if !a.activity_type.ends_with("package") {
        return Ok(json!([]));
    }
    check_activity_access(ctx, &a, false).await?;
    let head = a.clone();
    let data = data_of_one(ctx, a).await?;
    Ok(Value::Array(details(ctx, &head, &data).await?))
}

// ---------------------------------------------------------------------------------------------
// The HTML snippets
// ---------------------------------------------------------------------------------------------

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A path segment or query value, percent-encoded.
fn url_part(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn link(href: &str, text: &str) -> String {
    format!("<a href=\"{}\">{}</a>", escape(href), escape(text))
}

/// CKAN's sentence for each activity type, with its placeholders.
fn sentence(activity_type: &str) -> Option<&'static str> {
    Some(match activity_type {
        "added tag" => "{actor} added the tag {tag} to the dataset {dataset}",
        "changed group" => "{actor} updated the group {group}",
        "changed organization" => "{actor} updated the organization {organization}",
        "changed package" => "{actor} updated the dataset {dataset}",
        "changed package_extra" => "{actor} changed the extra {extra} of the dataset {dataset}",
        "changed resource" => "{actor} updated the resource {resource} in the dataset {dataset}",
        "changed user" => "{actor} updated their profile",
        "deleted group" => "{actor} deleted the group {group}",
        "deleted organization" => "{actor} deleted the organization {organization}",
        "deleted package" => "{actor} deleted the dataset {dataset}",
        "deleted package_extra" => "{actor} deleted the extra {extra} from the dataset {dataset}",
        "deleted resource" => "{actor} deleted the resource {resource} from the dataset {dataset}",
        "new group" => "{actor} created the group {group}",
        "new organization" => "{actor} created the organization {organization}",
        "new package" => "{actor} created the dataset {dataset}",
        "new package_extra" => "{actor} added the extra {extra} to the dataset {dataset}",
        "new resource" => "{actor} added the resource {resource} to the dataset {dataset}",
        "new user" => "{actor} signed up",
        "removed tag" => "{actor} removed the tag {tag} from the dataset {dataset}",
        "new resource view" => "{actor} added a view to the dataset {dataset}",
        "changed resource view" => "{actor} updated a view of the dataset {dataset}",
        "deleted resource view" => "{actor} deleted a view of the dataset {dataset}",
        _ => return None,
    })
}

/// CKAN's icon for each activity type.
fn icon(activity_type: &str) -> &'static str {
    match activity_type {
        "added tag" | "removed tag" => "tag",
        "changed group" | "deleted group" | "new group" => "users",
        "changed package" | "deleted package" | "new package" => "sitemap",
        "changed package_extra" | "deleted package_extra" | "new package_extra" => {
            "pencil-square-o"
        }
        "changed resource" | "deleted resource" | "new resource" => "file",
        "changed user" | "new user" => "user",
        "changed organization" | "deleted organization" | "new organization" => "briefcase",
        _ => "certificate",
    }
}

/// `November 24, 2026, 14:31 (UTC)` (CKAN's `render_datetime` with hours) and the date alone.
fn dates(timestamp: &str) -> (String, String) {
    match parse_iso(timestamp) {
        Some(t) => (
            t.format("%B %-d, %Y, %H:%M (UTC)").to_string(),
            t.format("%B %-d, %Y").to_string(),
        ),
        None => (timestamp.to_string(), timestamp.to_string()),
    }
}

/// Which stream a snippet shows: CKAN's `controller` / `id` / `offset` (they make its
/// "Load more" and "Load less" links).
struct Stream {
    context: &'static str,
    path: String,
    id: String,
    offset: i64,
}

/// A user's id with their name and display name (looked up once per snippet).
async fn user_of(
    ctx: &mut ActionContext,
    id: Option<&str>,
    names: &mut HashMap<String, Option<(String, String)>>,
) -> CkanResult<(String, Option<(String, String)>)> {
    let id = id.unwrap_or_default().to_string();
    if let Some(found) = names.get(&id) {
        return Ok((id, found.clone()));
    }
    let found = match id.as_str() {
        "" => None,
        id => ctx
            .user_row(id)
            .await?
            .map(|u| (u.name.clone(), u.display_name().to_string())),
    };
    names.insert(id.clone(), found.clone());
    Ok((id, found))
}

/// Renders one activity: its sentence with each placeholder linked, whether it is new, its date.
async fn item(
    ctx: &mut ActionContext,
    a: &Value,
    names: &mut HashMap<String, Option<(String, String)>>,
) -> CkanResult<String> {
    let mut activity_type = a["activity_type"].as_str().unwrap_or_default().to_string();
    let data = &a["data"];
    let mut detail = Value::Null;
    // A change with exactly one detail is shown as that detail (CKAN 2.8).
    if activity_type == "changed package" {
        if let Some(id) = a["id"].as_str() {
            let row = load(ctx, id).await?;
            let found = details(ctx, &row, data).await?;
            if let [one] = found.as_slice() {
                let object_type = match one["object_type"].as_str().unwrap_or_default() {
                    "PackageExtra" => "package_extra".to_string(),
                    t => t.to_lowercase(),
                };
                let t = format!(
                    "{} {object_type}",
                    one["activity_type"].as_str().unwrap_or_default()
                );
                if sentence(&t).is_some() {
                    activity_type = t;
                    detail = one.clone();
                }
            }
        }
    }
    let template = sentence(&activity_type).unwrap_or("{actor} changed {object}");
    let (aid, actor) = user_of(ctx, a["user_id"].as_str(), names).await?;
    let (oid, object_user) = user_of(ctx, a["object_id"].as_str(), names).await?;
    let user_html = |who: &Option<(String, String)>, id: &str| match who {
        Some((name, display)) => link(&format!("/user/{}", url_part(name)), display),
        None => escape(id),
    };
    let pkg = data.get("package").or_else(|| data.get("dataset"));
    let group = data.get("group");
    let title = |d: &Value| {
        ["title", "display_name", "name"]
            .iter()
            .find_map(|k| d.get(*k).and_then(Value::as_str).filter(|s| !s.is_empty()))
            .unwrap_or_default()
            .to_string()
    };
    let name = |d: &Value| d["name"].as_str().unwrap_or_default().to_string();
    let mut out = template.to_string();
    let replacements: Vec<(&str, String)> = vec![
        (
            "{actor}",
            format!("<span class=\"actor\">{}</span>", user_html(&actor, &aid)),
        ),
        (
            "{user}",
            format!("<span>{}</span>", user_html(&object_user, &oid)),
        ),
        (
            "{dataset}",
            format!(
                "<span>{}</span>",
                pkg.map(|p| link(&format!("/dataset/{}", url_part(&name(p))), &title(p)))
                    .unwrap_or_default()
            ),
        ),
        (
            "{group}",
            format!(
                "<span>{}</span>",
                group
                    .map(|g| link(&format!("/group/{}", url_part(&name(g))), &title(g)))
                    .unwrap_or_default()
            ),
        ),
        (
            "{organization}",
            group
                .map(|g| link(&format!("/organization/{}", url_part(&name(g))), &title(g)))
                .unwrap_or_default(),
        ),
        (
            "{tag}",
            detail["data"]["tag"]["name"]
                .as_str()
                .map(|t| link(&format!("/dataset/?tags={}", url_part(t)), t))
                .unwrap_or_default(),
        ),
        (
            "{extra}",
            format!(
                "&#34;{}&#34;",
                escape(
                    detail["data"]["package_extra"]["key"]
                        .as_str()
                        .unwrap_or_default()
                )
            ),
        ),
        ("{resource}", {
            let r = &detail["data"]["resource"];
            let pid = pkg.and_then(|p| p["id"].as_str()).unwrap_or_default();
            let text = r["name"]
                .as_str()
                .filter(|s| !s.is_empty())
                .unwrap_or("Unnamed resource");
            link(
                &format!(
                    "/dataset/{}/resource/{}",
                    url_part(pid),
                    url_part(r["id"].as_str().unwrap_or_default())
                ),
                text,
            )
        }),
        ("{object}", escape(&oid)),
    ];
    for (placeholder, html) in replacements {
        if out.contains(placeholder) {
            out = out.replace(placeholder, &html);
        }
    }
    let (long, short) = dates(a["timestamp"].as_str().unwrap_or_default());
    let new = if a["is_new"] == json!(true) {
        "<span class=\"new\" title=\"New activity item\">New activity item</span>"
    } else {
        ""
    };
    Ok(format!(
        "<li class=\"item {}\">{new}<i class=\"fa icon fa-{}\"></i><p>{out} <span class=\"date\" title=\"{}\">{}</span></p></li>",
        escape(&activity_type.replace(' ', "-").to_lowercase()),
        icon(&activity_type),
        escape(&long),
        escape(&short),
    ))
}

/// CKAN 2.8's `activity_stream_items.html`: the list with "Load less" / "Load more" links, or
/// its empty-stream paragraph.
async fn render(ctx: &mut ActionContext, list: &Value, s: Stream) -> CkanResult<Value> {
    let items = list.as_array().cloned().unwrap_or_default();
    if items.is_empty() {
        return Ok(json!(
            "<p class=\"empty\">No activities are within this activity stream</p>"
        ));
    }
    let limit = ctx
        .app
        .extension::<ActivitySettings>()
        .map_or(31, |s| s.list_limit)
        .max(0);
    let has_more = items.len() as i64 > limit;
    let more_link = |offset: i64, text: &str, class: &str| {
        format!(
            "<li class=\"{class}\"><a href=\"{}?offset={offset}\" class=\"btn btn-default btn-rounded\">{text}</a></li>",
            escape(&s.path)
        )
    };
    let mut html = format!(
        "<ul class=\"activity\" data-module=\"activity-stream\" data-module-more=\"{}\" data-module-context=\"{}\" data-module-id=\"{}\" data-module-offset=\"{}\">",
        if has_more { "True" } else { "False" },
        s.context,
        escape(&s.id),
        s.offset
    );
    if s.offset > 0 {
        html.push_str(&more_link((s.offset - 30).max(0), "Load less", "load-less"));
    }
    let mut names = HashMap::new();
    for a in items
        .iter()
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
    {
        html.push_str(&item(ctx, a, &mut names).await?);
    }
    if has_more {
        html.push_str(&more_link(s.offset + 30, "Load more", "load-more"));
    }
    html.push_str("</ul>");
    Ok(Value::String(html))
}

/// One `_html` variant: the plain action's list, rendered.
struct HtmlVariant {
    plain: &'static str,
    context: &'static str,
    path: &'static str,
}

/// Runs an `_html` variant on its parameters, which go to the plain action as sent (its params
/// struct leaves them all in `__extras`: the plain action checks them).
async fn html_variant(
    ctx: &mut ActionContext,
    mut p: Params,
    variant: HtmlVariant,
) -> CkanResult<Value> {
    let offset = match p.get("offset") {
        // The plain action checks it; this only places the snippet's links.
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0).max(0),
        Some(Value::String(t)) => t.trim().parse::<i64>().unwrap_or(0).max(0),
        _ => 0,
    };
    let id = match variant.context {
        "dashboard" => {
            // CKAN takes the dashboard's user from the login, not from `id`.
            p.remove("id");
            ctx.user_name().to_string()
        }
        _ => opt_str(&p, "id").unwrap_or_default(),
    };
    let list = ctx.call(variant.plain, p).await?;
    let path = if variant.path.contains("{id}") {
        variant.path.replace("{id}", &url_part(&id))
    } else {
        variant.path.to_string()
    };
    render(
        ctx,
        &list,
        Stream {
            context: variant.context,
            path,
            id,
            offset,
        },
    )
    .await
}

/// Declares each `_html` variant: its params struct (the plain action's parameters it
/// documents, left in `__extras`), a module named after it with its fn, and its registration.
macro_rules! html_variants {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident($params:ident) => $plain:literal, $context:literal, $path:literal { $($fields:tt)* }
    )*) => {
        $(
            action_params! {
                $(#[doc = $doc])*
                pub struct $params {
                    $($fields)*
                    /// where the plain action's list starts (the snippet's links follow it)
                    offset: InDict<Natural>,
                    /// how many activities (as the plain action takes it)
                    limit: InDict<Natural>,
                }
            }

            mod $name {
                use super::*;

                pub(super) async fn run(ctx: &mut ActionContext, p: $params) -> CkanResult<Value> {
                    let variant = HtmlVariant {
                        plain: $plain,
                        context: $context,
                        path: $path,
                    };
                    html_variant(ctx, p.__extras, variant).await
                }
            }
        )*

        register_typed_actions! {
            $( read $name($params) => $name::run, auth = crate::actions::ActivityShowAuth; )*
        }
    };
}

html_variants! {
    #[doc = "Return a dataset's activity stream as HTML: a snippet to include in a page, \
             without header or footer (CKAN 2.8's activity stream items). Takes the parameters \
             of package_activity_list, which decides who may see it.\n\n:rtype: string"]
    package_activity_list_html(PackageActivityListHtmlParams) => "package_activity_list", "package", "/dataset/activity/{id}" {
        /// the id or name of the dataset
        id: InDict<String>,
    }
    #[doc = "Return a group's activity stream as HTML: a snippet to include in a page, \
             without header or footer (CKAN 2.8's activity stream items). Takes the parameters \
             of group_activity_list, which decides who may see it.\n\n:rtype: string"]
    group_activity_list_html(GroupActivityListHtmlParams) => "group_activity_list", "group", "/group/activity/{id}" {
        /// the id or name of the group
        id: InDict<String>,
    }
    #[doc = "Return an organization's activity stream as HTML: a snippet to include in a \
             page, without header or footer (CKAN 2.8's activity stream items). Takes the \
             parameters of organization_activity_list, which decides who may see it.\n\n\
             :rtype: string"]
    organization_activity_list_html(OrganizationActivityListHtmlParams) => "organization_activity_list", "organization", "/organization/activity/{id}" {
        /// the id or name of the organization
        id: InDict<String>,
    }
    #[doc = "Return a user's activity stream as HTML: a snippet to include in a page, without \
             header or footer (CKAN 2.8's activity stream items). Takes the parameters of \
             user_activity_list, which decides who may see it.\n\n:rtype: string"]
    user_activity_list_html(UserActivityListHtmlParams) => "user_activity_list", "user", "/user/activity/{id}" {
        /// the id or name of the user
        id: InDict<String>,
    }
    #[doc = "Return the site's recent dataset activity as HTML: a snippet to include in a \
             page, without header or footer (CKAN 2.8's activity stream items). Takes the \
             parameters of recently_changed_packages_activity_list, which decides who may see \
             it.\n\n:rtype: string"]
    recently_changed_packages_activity_list_html(RecentlyChangedPackagesActivityListHtmlParams) => "recently_changed_packages_activity_list", "package", "/dataset/activity" {}
    #[doc = "Return your dashboard's activity stream as HTML: a snippet to include in a page, \
             without header or footer (CKAN 2.8's activity stream items). Takes the parameters \
             of dashboard_activity_list, which decides who may see it.\n\n:rtype: string"]
    dashboard_activity_list_html(DashboardActivityListHtmlParams) => "dashboard_activity_list", "dashboard", "/dashboard" {}
}

// ---------------------------------------------------------------------------------------------
// Revisions
// ---------------------------------------------------------------------------------------------

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
    read activity_detail_list(ActivityDetailListParams) => activity_detail_list;
    read revision_list(RevisionListParams) => revision_list;
    read revision_show(RevisionShowParams) => revision_show;
    read package_revision_list(PackageRevisionListParams) => package_revision_list;
    read group_revision_list(GroupRevisionListParams) => group_revision_list;
    read organization_revision_list(OrganizationRevisionListParams) => organization_revision_list;
}

register_auth!("activity_detail_list", crate::actions::ActivityShowAuth);
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
