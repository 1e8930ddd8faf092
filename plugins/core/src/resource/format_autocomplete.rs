use std::collections::HashMap;

use catalog_framework::prelude::*;

use catalog_framework::typed::Text;

use crate::lookup::{ilike, visible_values};

action_params! {
    /// Return the resource formats that contain a string, most used first.
    ///
    /// :param q: the string to search for
    /// :param limit: optional (default 5)
    /// :rtype: list of strings
    pub struct FormatAutocompleteParams {
        /// the string to search for (may be empty: no match)
        q: Text,
        /// how many formats to return (default 5)
        limit: Option<Natural>,
    }
}

pub(crate) async fn format_autocomplete(
    ctx: &mut ActionContext,
    p: FormatAutocompleteParams,
) -> CkanResult<Value> {
    ctx.check_access("format_autocomplete", &p.to_params())
        .await?;
    let (q, limit) = (p.q.0, p.limit.map_or(5, |n| n.0 as usize));
    // CKAN does not escape `q` here: `%` and `_` in it are wildcards.
    let pattern = format!("%{q}%");
    // Formats of the datasets the caller may read, by how many datasets use each (CKAN counts
    // resources of every dataset, private and deleted ones included: docs/API-COMPAT.md).
    let mut counts: HashMap<String, u64> = HashMap::new();
    for (f, n) in visible_values(ctx, "res_format").await? {
        if ilike(&f, &pattern) {
            *counts.entry(f.to_lowercase()).or_default() += n;
        }
    }
    let mut formats: Vec<(String, u64)> = counts.into_iter().collect();
    formats.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(Value::Array(
        formats
            .into_iter()
            .take(limit)
            .map(|(f, _)| json!(f))
            .collect(),
    ))
}
