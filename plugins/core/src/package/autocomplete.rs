use catalog_framework::authz;
use catalog_framework::prelude::*;
use catalog_framework::store;

use catalog_framework::typed::Text;

use crate::lookup::escape_like;

action_params! {
    /// Return the datasets whose name or title contains a string.
    ///
    /// :param q: the string to search for
    /// :param limit: optional (default 10)
    /// :rtype: list of dictionaries (name, title, match_field, match_displayed)
    pub struct PackageAutocompleteParams {
        /// the string to search for (may be empty: no match)
        q: Text,
        /// how many datasets to return (default 10)
        limit: Option<Natural>,
    }
}

pub(crate) async fn package_autocomplete(
    ctx: &mut ActionContext,
    p: PackageAutocompleteParams,
) -> CkanResult<Value> {
    ctx.check_access("package_autocomplete", &p.to_params())
        .await?;
    let (q, limit) = (p.q.0, p.limit.map_or(10, |n| n.0 as usize));
    let q_lower = q.to_lowercase();
    if q_lower.trim().is_empty() || limit == 0 {
        return Ok(json!([]));
    }
    // A cheap SQL pre-filter when it cannot miss: an ASCII term without characters that JSON
    // escapes is found in the lower-cased JSON text wherever it is in the title.
    let prefilter = q_lower
        .chars()
        .all(|c| c.is_ascii() && !c.is_ascii_control() && c != '"' && c != '\\');
    let like = prefilter.then(|| format!("%{}%", escape_like(&q_lower)));
    let rows = store::active_packages_like(ctx.db().await?, like.as_deref()).await?;
    let labels = if ctx.is_sysadmin() || ctx.ignore_auth {
        None
    } else {
        Some(authz::user_labels(ctx).await?)
    };
    let collaborators = ctx.config().catalog.auth.allow_dataset_collaborators;
    let (mut by_name, mut by_title) = (Vec::new(), Vec::new());
    for pkg in &rows {
        if let Some(mine) = &labels {
            if !authz::dataset_labels(pkg, collaborators)
                .iter()
                .any(|l| mine.contains(l))
            {
                continue;
            }
        }
        let doc: Value = serde_json::from_str(&pkg.data)?;
        let title = doc["title"]
            .as_str()
            .filter(|t| !t.trim().is_empty())
            .unwrap_or(&pkg.name)
            .to_string();
        if pkg.name.contains(&q_lower) {
            by_name.push(json!({
                "match_displayed": pkg.name, "match_field": "name", "name": pkg.name, "title": title,
            }));
        } else if title.to_lowercase().contains(&q_lower) {
            by_title.push(json!({
                "match_displayed": format!("{title} ({})", pkg.name), "match_field": "title",
                "name": pkg.name, "title": title,
            }));
        }
    }
    by_name.extend(by_title);
    by_name.truncate(limit);
    Ok(Value::Array(by_name))
}
