//! Groups and organizations: the `group_*` and `organization_*` actions, one implementation
//! for both kinds (`is_org`), the twins in one file. What they share: loading a group of the
//! right kind, the group dict, its datasets and counts (spec/ckan-read-api.md §4.2, §3.4: from
//! package_search and facet queries, as CKAN computes them, not SQL counts), the written
//! fields, domain events.

use std::collections::HashMap;

use catalog_framework::authz;
use catalog_framework::prelude::*;
use catalog_framework::search::{Query, SearchRequest};
use catalog_framework::store::{self as q, GroupRow};

use crate::dictize::{extras_list, group_base, sorted, user_dict};
use crate::membership::{add_member, remove_members_not_in};
use crate::search::{self, SearchOptions};

pub(crate) mod autocomplete;
pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod list;
pub(crate) mod list_authz;
pub(crate) mod list_for_user;
pub(crate) mod package_show;
pub(crate) mod show;
pub(crate) mod update;

/// [`dict_params!`](crate::dict_params) with the keys of a group or organization dict.
macro_rules! group_dict_params {
    ($($t:tt)*) => {
        crate::dict_params! {
            [
                /// the name: 2 to 100 lowercase alphanumeric characters, `-` and `_`
                name: crate::InDict<String>,
                /// the title
                title: crate::InDict<String>,
                /// a description
                description: crate::InDict<String>,
                /// the URL of its image
                image_url: crate::InDict<String>,
                /// the group type
                group_type: crate::InDict<String> as "type",
                /// the state (`active`, `deleted` …)
                state: crate::InDict<String>,
                /// the extras: a list of `{"key": …, "value": …}` dicts
                extras: crate::InDict<Value>,
                /// its datasets: a list of dicts with the `id` or `name` of each (groups only)
                packages: crate::InDict<Value>,
                /// its child groups: a list of dicts with the `name` of each (and a `capacity`)
                groups: crate::InDict<Value>,
                /// its users: a list of dicts with the `name` of each (and a `capacity`)
                users: crate::InDict<Value>,
            ]
            $($t)*
        }
    };
}
pub(crate) use group_dict_params;

/// `organization` or `group`: the prefix of the kind's action names, its default type.
pub(crate) fn kind(is_org: bool) -> &'static str {
    if is_org {
        "organization"
    } else {
        "group"
    }
}

/// The group of the right kind (groups and organizations don't answer for each other), or 404.
async fn load_group(ctx: &mut ActionContext, r: &str, is_org: bool) -> CkanResult<GroupRow> {
    // Locked in a write call: every writer of a group (and of its user and parent
    // memberships) loads it here or through `group_for_update`.
    ctx.group_for_update(r)
        .await?
        .filter(|g| g.is_organization == is_org)
        .ok_or_else(|| {
            not_found(if is_org {
                "Organization was not found."
            } else {
                "Group was not found."
            })
        })
}

async fn group_users(ctx: &mut ActionContext, g: &GroupRow) -> CkanResult<Vec<Value>> {
    let mut out = Vec::new();
    for (u, capacity) in q::group_user_members(ctx.db().await?, &g.id).await? {
        let mut d = user_dict(&u, 0, false);
        d.insert("capacity".into(), json!(capacity));
        out.push(Value::Object(sorted(d)));
    }
    Ok(out)
}

struct ShowOpts<'a> {
    datasets: bool,
    dataset_count: bool,
    extras: bool,
    users: bool,
    groups: bool,
    /// Counts computed once for a whole list (`group_list` with `all_fields`).
    counts: Option<&'a DatasetCounts>,
    /// The dict answered by the write that made it.
    after_write: bool,
}

impl ShowOpts<'static> {
    /// What group_create and group_update return: everything but the datasets.
    const AFTER_WRITE: ShowOpts<'static> = ShowOpts {
        datasets: false,
        dataset_count: true,
        extras: true,
        users: true,
        groups: true,
        counts: None,
        after_write: true,
    };
}

/// The repository's row of a group write's checked fields.
fn group_write<'a>(
    name: &'a str,
    title: &'a Option<String>,
    description: &'a Option<String>,
    image_url: &'a Option<String>,
    extras: &'a Map<String, Value>,
) -> q::GroupWrite<'a> {
    q::GroupWrite {
        name,
        title: title.as_deref(),
        description: description.as_deref(),
        image_url: image_url.as_deref(),
        extras,
    }
}

async fn group_dict(ctx: &mut ActionContext, g: &GroupRow, o: &ShowOpts<'_>) -> CkanResult<Value> {
    let site = ctx.config().site_url().to_string();
    let mut m = group_base(&site, g);
    // CKAN counts (and lists) a group's datasets with package_search.
    if o.datasets {
        let (n, pkgs) = group_packages(ctx, g, true).await?;
        m.insert("package_count".into(), json!(n));
        m.insert("packages".into(), Value::Array(pkgs));
    } else if o.dataset_count {
        let n = match o.counts {
            Some(c) => c.of(g),
            // A group's write may have changed its datasets, which the search index learns
            // only after the commit: counted from the memberships (for anyone, as a search
            // of `groups:<name>` counts). An organization's datasets are not changed by its
            // writes.
            None if o.after_write && !g.is_organization => {
                q::group_public_dataset_count(ctx.db().await?, &g.id).await? as u64
            }
            None => group_packages(ctx, g, false).await?.0,
        };
        m.insert("package_count".into(), json!(n));
    }
    if o.extras {
        m.insert("extras".into(), extras_list(&g.extras));
    }
    if o.groups {
        let rows = q::group_children(ctx.db().await?, &g.id).await?;
        m.insert(
            "groups".into(),
            json!(rows
                .iter()
                .map(|(name, capacity)| json!({"name": name, "capacity": capacity}))
                .collect::<Vec<_>>()),
        );
    }
    if o.users {
        let users = group_users(ctx, g).await?;
        m.insert("users".into(), Value::Array(users));
    }
    Ok(Value::Object(sorted(m)))
}

fn extras_map(p: &Params, errs: &mut ValidationBuilder, is_sysadmin: bool) -> Map<String, Value> {
    let mut m = Map::new();
    match p.get("extras") {
        Some(Value::Array(items)) => {
            // An extra's `id` is CKAN's per-item error: one dict per extra.
            let id_errors: Vec<Value> = items
                .iter()
                .map(
                    |e| match catalog_framework::validators::extra_id_error(e, is_sysadmin) {
                        Some(msg) => json!({"id": [msg]}),
                        None => json!({}),
                    },
                )
                .collect();
            if id_errors.iter().any(|e| e != &json!({})) {
                errs.set("extras", Value::Array(id_errors));
                return m;
            }
            for e in items {
                match (e.get("key").and_then(Value::as_str), e.get("value")) {
                    (Some(k), Some(v)) if !k.is_empty() => {
                        m.insert(
                            k.into(),
                            v.as_str()
                                .map(|s| json!(s))
                                .unwrap_or_else(|| json!(v.to_string())),
                        );
                    }
                    _ => errs.push("extras", "Missing value"),
                }
            }
        }
        None | Some(Value::Null) => {}
        Some(_) => errs.push("extras", "Not a list"),
    }
    m
}

async fn apply_users_and_parents(
    ctx: &mut ActionContext,
    g: &GroupRow,
    p: &Params,
) -> CkanResult<()> {
    // A list given replaces the members of its kind (users, datasets, child groups): those
    // left out stop being members, as CKAN's group_member_save does. Absent, they stay.
    if let Some(Value::Array(users)) = p.get("users") {
        let mut listed = Vec::with_capacity(users.len());
        for u in users {
            let name = u
                .get("name")
                .or_else(|| u.get("id"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let cap = u
                .get("capacity")
                .and_then(Value::as_str)
                .unwrap_or("public");
            let Some(user) = ctx.user_row(name).await? else {
                return Err(validation().field("users", "User not found").build());
            };
            add_member(ctx, &g.id, "user", &user.id, cap).await?;
            listed.push(user.id);
        }
        remove_members_not_in(ctx, &g.id, "user", &listed).await?;
    }
    if let Some(Value::Array(parents)) = p.get("groups") {
        let conn = ctx.db().await?;
        q::clear_group_parents(&mut *conn, &g.id).await?;
        for parent in parents {
            let name = parent
                .get("name")
                .or_else(|| parent.get("id"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let Some(pg) = ctx.group_row(name).await? else {
                return Err(validation().field("groups", "Group not found").build());
            };
            if pg.id == g.id {
                return Err(validation()
                    .field("groups", "This parent would create a loop in the hierarchy")
                    .build());
            }
            add_member(ctx, &g.id, "group", &pg.id, "parent").await?;
        }
    }
    // Organizations own their datasets through `owner_org`: `packages` is ignored for them
    // (CKAN's organization_update does the same).
    if let (false, Some(Value::Array(pkgs))) = (g.is_organization, p.get("packages")) {
        let mut listed = Vec::with_capacity(pkgs.len());
        for pk in pkgs {
            let r = pk
                .get("id")
                .or_else(|| pk.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let Some(row) = ctx.package_for_update(r).await? else {
                return Err(validation().field("packages", "Dataset not found").build());
            };
            add_member(ctx, &g.id, "package", &row.id, "public").await?;
            listed.push(row.id);
        }
        remove_members_not_in(ctx, &g.id, "package", &listed).await?;
    }
    Ok(())
}

/// A group's or organization's domain event, with its stored records before and after.
fn emit_group(
    ctx: &mut ActionContext,
    change: Change,
    before: Option<&GroupRow>,
    after: Option<&GroupRow>,
) {
    let Some(g) = after.or(before) else { return };
    let entity = if g.is_organization {
        Entity::Organization
    } else {
        Entity::Group
    };
    let id = g.id.clone();
    let record = |g: Option<&GroupRow>| g.and_then(|g| serde_json::to_value(g).ok());
    ctx.emit(entity, change, &id, record(before), record(after));
}

/// Raw group dict plus `capacity`, as `organization_list_for_user` and `group_list_authz` give.
fn raw_group(site: &str, g: &GroupRow) -> Map<String, Value> {
    let mut m = group_base(site, g);
    m.remove("num_followers");
    m.insert("title".into(), json!(g.title));
    m.insert("description".into(), json!(g.description));
    m.insert("image_url".into(), json!(g.image_url));
    m
}

/// Runs package_search as another action would call it.
async fn package_search_with(ctx: &mut ActionContext, p: Params) -> CkanResult<(u64, Vec<Value>)> {
    let opts = SearchOptions::parse(ctx, &p)?;
    let r = search::run(ctx, opts).await?;
    let results = r["results"].as_array().cloned().unwrap_or_default();
    Ok((r["count"].as_u64().unwrap_or(0), results))
}

/// CKAN's `get_packages_for_this_group`: a package_search for `+owner_org:"<id>"`
/// (organizations: private datasets included for callers with `read` on it, or for everyone
/// when collaborators are enabled; the caller's labels still apply) or `+groups:"<name>"`.
/// With `datasets`, the first page (default rows) is returned with the count.
async fn group_packages(
    ctx: &mut ActionContext,
    g: &GroupRow,
    datasets: bool,
) -> CkanResult<(u64, Vec<Value>)> {
    let mut p = Params::new();
    p.insert("facet".into(), json!("false"));
    if !datasets {
        p.insert("rows".into(), json!(0));
    }
    if g.is_organization {
        p.insert("fq".into(), json!(format!("+owner_org:\"{}\"", g.id)));
        let private = (ctx.user.is_some() && authz::has_permission(ctx, &g.id, "read").await?)
            || ctx.config().catalog.auth.allow_dataset_collaborators;
        if private {
            p.insert("include_private".into(), json!(true));
        }
    } else {
        p.insert("fq".into(), json!(format!("+groups:\"{}\"", g.name)));
    }
    package_search_with(ctx, p).await
}

/// Active dataset counts per group name and per organization id, from one facet query
/// (CKAN's `get_group_dataset_counts`).
#[derive(Debug, Default)]
struct DatasetCounts {
    groups: HashMap<String, u64>,
    orgs: HashMap<String, u64>,
}

impl DatasetCounts {
    fn of(&self, g: &GroupRow) -> u64 {
        let n = if g.is_organization {
            self.orgs.get(&g.id)
        } else {
            self.groups.get(&g.name)
        };
        n.copied().unwrap_or(0)
    }
}

/// Which datasets [`dataset_counts`] counts.
enum CountScope {
    /// `group_list`/`organization_list` with `all_fields`: every dataset type, the caller's
    /// permission labels applied (`fq=entity_type:package`).
    VisibleToCaller,
    /// `organization_list_for_user`/`group_list_authz`: datasets of type `dataset`, no labels
    /// (private ones included), as `group_list_dictize` asks.
    AllOfTypeDataset,
}

async fn dataset_counts(ctx: &mut ActionContext, scope: CountScope) -> CkanResult<DatasetCounts> {
    let mut filters = vec![Query::term("state", "active")];
    match scope {
        CountScope::VisibleToCaller => {
            filters.push(Query::term("entity_type", "package"));
            filters.extend(authz::label_filter(ctx).await?);
        }
        CountScope::AllOfTypeDataset => filters.push(Query::term("dataset_type", "dataset")),
    }
    let req = SearchRequest {
        query: Query::All,
        filters,
        sort: Vec::new(),
        start: 0,
        rows: 0,
        facet_fields: vec!["groups".into(), "owner_org".into()],
        facet_limit: None,
        facet_mincount: 1,
    };
    let hits = ctx.search(&req).await?;
    let mut counts = DatasetCounts::default();
    for (field, values) in hits.facets {
        let target = match field.as_str() {
            "groups" => &mut counts.groups,
            "owner_org" => &mut counts.orgs,
            _ => continue,
        };
        target.extend(values);
    }
    Ok(counts)
}
