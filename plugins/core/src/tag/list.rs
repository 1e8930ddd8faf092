use catalog_framework::prelude::*;

use super::{free_tags, tag_search_rows};
use crate::lookup::{py_truthy, visible_values};

action_params! {
    /// Return the site's free tags (or a vocabulary's tags).
    ///
    /// :param query: only tags whose names contain this (case-insensitive); `q` is an alias
    /// :param vocabulary_id: the vocabulary's id or name
    /// :param all_fields: return tag dicts instead of names
    /// :rtype: list
    pub struct TagListParams {}
}

pub async fn tag_list(ctx: &mut ActionContext, p: TagListParams) -> CkanResult<Value> {
    let p = p.__extras;
    let has_query = match [p.get("query"), p.get("q")]
        .into_iter()
        .find(|v| py_truthy(*v))
        .flatten()
    {
        Some(Value::String(s)) => !s.trim().is_empty(),
        Some(_) => true,
        None => false,
    };
    let all_fields = py_truthy(p.get("all_fields"));
    ctx.check_access("tag_list", &p).await?;
    let tags: Vec<(String, String)> = if has_query {
        tag_search_rows(ctx, &p).await?.0
    } else {
        if let Some(v) = opt_str(&p, "vocabulary_id").filter(|s| !s.is_empty()) {
            return Err(not_found(format!("could not find vocabulary '{v}'")));
        }
        let names: Vec<String> = visible_values(ctx, "tags")
            .await?
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        free_tags(ctx, &names).await?
    };
    Ok(Value::Array(
        tags.into_iter()
            .map(|(id, name)| {
                if all_fields {
                    json!({"display_name": name, "id": id, "name": name, "vocabulary_id": null})
                } else {
                    json!(name)
                }
            })
            .collect(),
    ))
}
