//! The `*_activity_list_html` variants of the older release: CKAN 2.8's activity stream
//! snippet, rendered from the plain list action's answer.

use std::collections::HashMap;

use catalog_framework::escape;
use catalog_framework::params::opt_str;
use catalog_framework::prelude::*;
use catalog_framework::store::time::parse_iso;
use catalog_framework::typed::InDict;

use crate::actions::load;
use crate::details::details;
use crate::ActivitySettings;

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
    format!(
        "<a href=\"{}\">{}</a>",
        escape::jinja(href),
        escape::jinja(text)
    )
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
        None => escape::jinja(id),
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
                escape::jinja(
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
        ("{object}", escape::jinja(&oid)),
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
        escape::jinja(&activity_type.replace(' ', "-").to_lowercase()),
        icon(&activity_type),
        escape::jinja(&long),
        escape::jinja(&short),
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
            escape::jinja(&s.path)
        )
    };
    let mut html = format!(
        "<ul class=\"activity\" data-module=\"activity-stream\" data-module-more=\"{}\" data-module-context=\"{}\" data-module-id=\"{}\" data-module-offset=\"{}\">",
        if has_more { "True" } else { "False" },
        s.context,
        escape::jinja(&s.id),
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
