use catalog_framework::prelude::*;
use catalog_framework::store::{self as q, GroupRow};

use super::{dataset_counts, group_dict, kind, CountScope, ShowOpts};

async fn list(ctx: &mut ActionContext, p: Params, is_org: bool) -> CkanResult<Value> {
    let all_fields = bool_param(&p, "all_fields", false)?;
    let cfg = &ctx.config().catalog;
    let cap = if all_fields {
        cfg.group_and_organization_list_all_fields_max
    } else {
        cfg.group_and_organization_list_max
    };
    let limit = natural(&p, "limit")?.map(|l| l.min(cap)).unwrap_or(cap);
    let offset = natural(&p, "offset")?.unwrap_or(0);
    let sort_raw = opt_str(&p, "sort")
        .or_else(|| opt_str(&p, "order_by"))
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
    let group_type = opt_str(&p, "type").unwrap_or_else(|| kind(is_org).to_string());
    let names_key = if is_org { "organizations" } else { "groups" };
    let only: Option<Vec<String>> = match p.get(names_key) {
        Some(Value::String(s)) => Some(
            s.split(',')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect(),
        ),
        Some(_) => str_list(&p, names_key)?,
        None => None,
    };
    let q_text = opt_str(&p, "q").map(|s| s.to_lowercase());
    ctx.check_access(&format!("{}_list", kind(is_org)), &p)
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
    let dataset_count = bool_param(&p, "include_dataset_count", true)?;
    // One facet query counts the datasets of every group, with the caller's labels.
    let counts = if dataset_count {
        Some(dataset_counts(ctx, CountScope::VisibleToCaller).await?)
    } else {
        None
    };
    let opts = ShowOpts {
        datasets: false,
        dataset_count,
        extras: bool_param(&p, "include_extras", false)?,
        users: bool_param(&p, "include_users", false)?,
        groups: bool_param(&p, "include_groups", false)?,
        counts: counts.as_ref(),
        after_write: false,
    };
    let mut out = Vec::new();
    for (g, _) in page {
        out.push(group_dict(ctx, &g, &opts).await?);
    }
    Ok(Value::Array(out))
}

action_params! {
    /// Return the names (or dicts with all_fields) of the site's groups.
    pub struct GroupListParams {}
}

pub async fn group_list(ctx: &mut ActionContext, p: GroupListParams) -> CkanResult<Value> {
    list(ctx, p.__extras, false).await
}

action_params! {
    /// Return the names (or dicts with all_fields) of the site's organizations.
    pub struct OrganizationListParams {}
}

pub async fn organization_list(
    ctx: &mut ActionContext,
    p: OrganizationListParams,
) -> CkanResult<Value> {
    list(ctx, p.__extras, true).await
}
