use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::{Later, Text};

use crate::lookup::{autocomplete_params, ilike};

/// CKAN's `Group.search_by_name_or_title`: active groups whose name or title contains the
/// stripped, lower-cased `q` (not escaped). Organizations are `type == "organization"`;
/// groups are every other type.
async fn group_or_org_autocomplete(
    ctx: &mut ActionContext,
    (auth, q, limit): (Params, &Later<Text>, &Later<Natural>),
    is_org: bool,
) -> CkanResult<Value> {
    let action = if is_org {
        "organization_autocomplete"
    } else {
        "group_autocomplete"
    };
    ctx.check_access(action, &auth).await?;
    let (q, limit) = autocomplete_params(q, limit, 20)?;
    let pattern = format!("%{}%", q.trim().to_lowercase());
    let mut groups = q::active_groups(ctx.db().await?).await?;
    groups.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Value::Array(
        groups
            .into_iter()
            .filter(|g| (g.group_type == "organization") == is_org)
            .filter(|g| {
                ilike(&g.name, &pattern) || g.title.as_deref().is_some_and(|t| ilike(t, &pattern))
            })
            .take(limit)
            .map(|g| json!({"id": g.id, "name": g.name, "title": g.title}))
            .collect(),
    ))
}

action_params! {
    /// Return the groups whose name or title contains a string.
    ///
    /// :param q: the string to search for
    /// :param limit: optional (default 20)
    /// :rtype: list of dictionaries (id, name, title)
    pub struct GroupAutocompleteParams {
        /// the string to search for (required, may be empty; checked after the access check)
        q: Later<Text>,
        /// how many groups to return (default 20)
        limit: Later<Natural>,
    }
}

pub(crate) async fn group_autocomplete(
    ctx: &mut ActionContext,
    p: GroupAutocompleteParams,
) -> CkanResult<Value> {
    group_or_org_autocomplete(ctx, (p.to_params(), &p.q, &p.limit), false).await
}

action_params! {
    /// Return the organizations whose name or title contains a string.
    ///
    /// :param q: the string to search for
    /// :param limit: optional (default 20)
    /// :rtype: list of dictionaries (id, name, title)
    pub struct OrganizationAutocompleteParams {
        /// the string to search for (required, may be empty; checked after the access check)
        q: Later<Text>,
        /// how many organizations to return (default 20)
        limit: Later<Natural>,
    }
}

pub(crate) async fn organization_autocomplete(
    ctx: &mut ActionContext,
    p: OrganizationAutocompleteParams,
) -> CkanResult<Value> {
    group_or_org_autocomplete(ctx, (p.to_params(), &p.q, &p.limit), true).await
}
