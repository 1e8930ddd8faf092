use catalog_framework::params::{bool_value, decode, text};
use catalog_framework::prelude::*;
use catalog_framework::store::{self as q, GroupRow};

use super::{dataset_counts, group_dict, kind, CountScope, ShowOpts};

/// The parameters of `group_list` and `organization_list`, read one at a time in CKAN's order
/// (the access check comes after most of them).
struct ListArgs {
    auth: Params,
    all_fields: Option<Value>,
    limit: Option<Value>,
    offset: Option<Value>,
    sort: Option<Value>,
    order_by: Option<Value>,
    group_type: Option<Value>,
    names: Option<Value>,
    q: Option<Value>,
    include_dataset_count: Option<Value>,
    include_extras: Option<Value>,
    include_users: Option<Value>,
    include_groups: Option<Value>,
}

async fn list(ctx: &mut ActionContext, p: ListArgs, is_org: bool) -> CkanResult<Value> {
    let all_fields = bool_value(p.all_fields.as_ref(), false)?;
    let cfg = &ctx.config().catalog;
    let cap = if all_fields {
        cfg.group_and_organization_list_all_fields_max
    } else {
        cfg.group_and_organization_list_max
    };
    let limit = decode::<Option<Natural>>("limit", p.limit.as_ref())?
        .map(|l| l.0.min(cap))
        .unwrap_or(cap);
    let offset = decode::<Option<Natural>>("offset", p.offset.as_ref())?.map_or(0, |n| n.0);
    let sort_raw = text(p.sort.as_ref())
        .or_else(|| text(p.order_by.as_ref()))
        .unwrap_or_else(|| "title".into());
    let parts: Vec<&str> = sort_raw
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if parts.len() > 1 {
        return Err(validation_message(
            "Too many sort criteria provided only 1 allowed",
        ));
    }
    let mut words = parts.first().copied().unwrap_or("title").split_whitespace();
    let field = words.next().unwrap_or("title");
    let (field, default_dir) = match field {
        "name" | "title" => (field, "asc"),
        "package_count" | "packages" => ("package_count", "desc"),
        other => {
            return Err(validation_message(format!(
                "Cannot sort by field `{other}`"
            )))
        }
    };
    let dir = words.next().unwrap_or(default_dir).to_ascii_lowercase();
    if dir != "asc" && dir != "desc" {
        return Err(validation_message(format!(
            "Invalid sort direction `{dir}`"
        )));
    }
    let group_type = text(p.group_type.as_ref()).unwrap_or_else(|| kind(is_org).to_string());
    let names_key = if is_org { "organizations" } else { "groups" };
    let only: Option<Vec<String>> = match &p.names {
        Some(Value::String(s)) => Some(
            s.split(',')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect(),
        ),
        Some(v) => decode(names_key, Some(v))?,
        None => None,
    };
    let q_text = text(p.q.as_ref()).map(|s| s.to_lowercase());
    ctx.check_access(&format!("{}_list", kind(is_org)), &p.auth)
        .await?;
    let mut groups = q::active_groups_of_type(ctx.db().await?, &group_type, is_org).await?;
    if let Some(only) = only {
        let only: std::collections::HashSet<String> = only.into_iter().collect();
        groups.retain(|g| only.contains(&g.name));
    }
    if let Some(qt) = &q_text {
        groups.retain(|g| {
            g.name.to_lowercase().contains(qt)
                || g.title.as_deref().unwrap_or("").to_lowercase().contains(qt)
                || g.description
                    .as_deref()
                    .unwrap_or("")
                    .to_lowercase()
                    .contains(qt)
        });
    }
    let sort_counts = if field == "package_count" {
        // CKAN counts member rows (of any state) pointing to active datasets, private ones
        // included; groups without any are left out of the list.
        q::package_member_counts(ctx.db().await?).await?
    } else {
        Default::default()
    };
    let mut counted: Vec<(GroupRow, i64)> = groups
        .into_iter()
        .map(|g| {
            let n = sort_counts.get(&g.id).copied().unwrap_or(0);
            (g, n)
        })
        .collect();
    match field {
        "name" => counted.sort_by(|a, b| a.0.name.cmp(&b.0.name)),
        "title" => counted.sort_by(|a, b| {
            a.0.display_name()
                .to_lowercase()
                .cmp(&b.0.display_name().to_lowercase())
        }),
        _ => {
            counted.retain(|(_, n)| *n > 0);
            counted.sort_by_key(|(_, n)| *n);
        }
    }
    if dir == "desc" {
        counted.reverse();
    }
    let page = counted
        .into_iter()
        .skip(offset as usize)
        .take(limit as usize);
    if !all_fields {
        return Ok(Value::Array(page.map(|(g, _)| json!(g.name)).collect()));
    }
    let dataset_count = bool_value(p.include_dataset_count.as_ref(), true)?;
    // One facet query counts the datasets of every group, with the caller's labels.
    let counts = if dataset_count {
        Some(dataset_counts(ctx, CountScope::VisibleToCaller).await?)
    } else {
        None
    };
    let opts = ShowOpts {
        datasets: false,
        dataset_count,
        extras: bool_value(p.include_extras.as_ref(), false)?,
        users: bool_value(p.include_users.as_ref(), false)?,
        groups: bool_value(p.include_groups.as_ref(), false)?,
        counts: counts.as_ref(),
        after_write: false,
    };
    let mut out = Vec::new();
    for (g, _) in page {
        out.push(group_dict(ctx, &g, &opts).await?);
    }
    Ok(Value::Array(out))
}

/// The params struct of `group_list` and `organization_list`: every parameter is read where
/// CKAN reads it, one at a time.
macro_rules! list_params {
    ($($(#[doc = $doc:literal])* $name:ident as $names:literal => $f:ident($is_org:expr);)*) => {$(
        action_params! {
            $(#[doc = $doc])*
            pub struct $name {
                /// the type of group to list (default `group`, or `organization`)
                group_type: Option<Value> as "type",
                /// deprecated: the field to sort by (`name` or `packages`), when `sort` is not
                /// given
                order_by: Option<Value>,
                /// `<field> [asc|desc]`, one criterion (default `title asc`); the fields are
                /// `name`, `title` and `package_count` (`packages`)
                sort: Option<Value>,
                /// the maximum number returned (default and cap
                /// `catalog.group_and_organization_list_max`, or
                /// `catalog.group_and_organization_list_all_fields_max` with `all_fields`)
                limit: Option<Value>,
                /// how many to skip
                offset: Option<Value>,
                /// only these names: a list, or a comma-separated string
                names: Option<Value> as $names,
                /// only those whose name, title or description contains this
                /// (case-insensitive)
                q: Option<Value>,
                /// return dictionaries instead of names (default false)
                all_fields: Option<Value>,
                /// with `all_fields`, include `package_count` (default true)
                include_dataset_count: Option<Value>,
                /// with `all_fields`, include the extras (default false)
                include_extras: Option<Value>,
                /// with `all_fields`, include their sub-groups (default false)
                include_groups: Option<Value>,
                /// with `all_fields`, include the users (default false)
                include_users: Option<Value>,
            }
        }

        pub(crate) async fn $f(ctx: &mut ActionContext, p: $name) -> CkanResult<Value> {
            let args = ListArgs {
                auth: p.to_params(),
                all_fields: p.all_fields,
                limit: p.limit,
                offset: p.offset,
                sort: p.sort,
                order_by: p.order_by,
                group_type: p.group_type,
                names: p.names,
                q: p.q,
                include_dataset_count: p.include_dataset_count,
                include_extras: p.include_extras,
                include_users: p.include_users,
                include_groups: p.include_groups,
            };
            list(ctx, args, $is_org).await
        }
    )*};
}

list_params! {
    /// Return the names (or dicts with all_fields) of the site's groups.
    GroupListParams as "groups" => group_list(false);
    /// Return the names (or dicts with all_fields) of the site's organizations.
    OrganizationListParams as "organizations" => organization_list(true);
}
