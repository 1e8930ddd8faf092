use std::borrow::Cow;

use catalog_framework::prelude::*;
use catalog_framework::store::{self as q, GroupRow};
use catalog_framework::typed::{AsBool, Later, ParamType};

use super::{dataset_counts, group_dict, kind, CountScope, ShowOpts};
use crate::shapes::{LaterExt, Scalar};

/// The `groups` / `organizations` filter of the lists: a list of names, or a comma-separated
/// string (items trimmed, empty ones dropped); a list is `Not a list` / `Must be a list of
/// strings` as a `Vec<String>` field is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NameList(pub(crate) Vec<String>);

impl ParamType for NameList {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        match v {
            Value::String(s) => Ok(NameList(
                s.split(',')
                    .map(|x| x.trim().to_string())
                    .filter(|x| !x.is_empty())
                    .collect(),
            )),
            other => <Vec<String> as ParamType>::decode(other).map(NameList),
        }
    }
    fn schema() -> Value {
        json!({"oneOf": [
            {"type": "array", "items": {"type": ["string", "number"]}},
            {"type": "string", "description": "comma-separated"},
        ]})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

/// The parameters of `group_list` and `organization_list`, read one at a time in CKAN's order
/// (the access check comes after most of them).
struct ListArgs {
    auth: Params,
    all_fields: Later<AsBool>,
    limit: Later<Natural>,
    offset: Later<Natural>,
    sort: Later<Scalar>,
    order_by: Later<Scalar>,
    group_type: Later<Scalar>,
    names: Later<NameList>,
    q: Later<Scalar>,
    include_dataset_count: Later<AsBool>,
    include_extras: Later<AsBool>,
    include_users: Later<AsBool>,
    include_groups: Later<AsBool>,
}

async fn list(ctx: &mut ActionContext, p: ListArgs, is_org: bool) -> CkanResult<Value> {
    let all_fields = p.all_fields.or(false)?;
    let cfg = &ctx.config().catalog;
    let cap = if all_fields {
        cfg.group_and_organization_list_all_fields_max
    } else {
        cfg.group_and_organization_list_max
    };
    let limit = p.limit.get()?.map(|l| l.0.min(cap)).unwrap_or(cap);
    let offset = p.offset.get()?.map_or(0, |n| n.0);
    let sort_raw = p
        .sort
        .value()
        .or_else(|| p.order_by.value())
        .map_or_else(|| "title".into(), |s| s.0);
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
    let group_type = p
        .group_type
        .value()
        .map_or_else(|| kind(is_org).to_string(), |t| t.0);
    let only: Option<Vec<String>> = p.names.get()?.map(|n| n.0);
    let q_text = p.q.value().map(|s| s.0.to_lowercase());
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
    let dataset_count = p.include_dataset_count.or(true)?;
    // One facet query counts the datasets of every group, with the caller's labels.
    let counts = if dataset_count {
        Some(dataset_counts(ctx, CountScope::VisibleToCaller).await?)
    } else {
        None
    };
    let opts = ShowOpts {
        datasets: false,
        dataset_count,
        extras: p.include_extras.or(false)?,
        users: p.include_users.or(false)?,
        groups: p.include_groups.or(false)?,
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
                group_type: Later<Scalar> as "type",
                /// deprecated: the field to sort by (`name` or `packages`), when `sort` is not
                /// given
                order_by: Later<Scalar>,
                /// `<field> [asc|desc]`, one criterion (default `title asc`); the fields are
                /// `name`, `title` and `package_count` (`packages`)
                sort: Later<Scalar>,
                /// the maximum number returned (default and cap
                /// `catalog.group_and_organization_list_max`, or
                /// `catalog.group_and_organization_list_all_fields_max` with `all_fields`)
                limit: Later<Natural>,
                /// how many to skip
                offset: Later<Natural>,
                /// only these names: a list, or a comma-separated string
                names: Later<NameList> as $names,
                /// only those whose name, title or description contains this
                /// (case-insensitive)
                q: Later<Scalar>,
                /// return dictionaries instead of names (default false)
                all_fields: Later<AsBool>,
                /// with `all_fields`, include `package_count` (default true)
                include_dataset_count: Later<AsBool>,
                /// with `all_fields`, include the extras (default false)
                include_extras: Later<AsBool>,
                /// with `all_fields`, include their sub-groups (default false)
                include_groups: Later<AsBool>,
                /// with `all_fields`, include the users (default false)
                include_users: Later<AsBool>,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: Value) -> CkanResult<Option<Vec<String>>> {
        Ok(Later::<NameList>::new("groups", Some(v))
            .get()?
            .map(|n| n.0))
    }

    #[test]
    fn names_are_a_list_or_comma_separated() {
        assert_eq!(names(json!(" a, b ,,")).unwrap().unwrap(), vec!["a", "b"]);
        assert_eq!(names(json!("")).unwrap().unwrap(), Vec::<String>::new());
        assert_eq!(names(json!(["a", 1])).unwrap().unwrap(), vec!["a", "1"]);
        assert_eq!(names(json!(null)).unwrap(), None);
        let e = |v: Value| names(v).unwrap_err().to_error_object();
        assert_eq!(e(json!(5))["groups"], json!(["Not a list"]));
        assert_eq!(
            e(json!([true]))["groups"],
            json!(["Must be a list of strings"])
        );
    }
}
