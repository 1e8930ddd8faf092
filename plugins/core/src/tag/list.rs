use catalog_framework::params::text;
use catalog_framework::prelude::*;
use catalog_framework::store as q;

use super::{free_tags, has_query, tag_query, tag_search_params, tag_search_rows};
use crate::lookup::visible_values;
use crate::shapes::LaterExt;
use crate::vocabulary::vocabulary_tag_dict;

tag_search_params! {
    /// Return the site's free tags (or a vocabulary's tags).
    ///
    /// :param query: only tags whose names contain this (case-insensitive); `q` is an alias
    /// :param vocabulary_id: the vocabulary's id or name
    /// :param all_fields: return tag dicts instead of names
    /// :rtype: list
    TagListParams {
        /// return tag dictionaries instead of names (any true value)
        all_fields: Option<catalog_framework::typed::PyTruthy>,
    }
}

pub(crate) async fn tag_list(ctx: &mut ActionContext, p: TagListParams) -> CkanResult<Value> {
    let has_query = has_query(p.query.value(), p.q.value());
    let all_fields = p.all_fields.is_some_and(|a| a.0);
    ctx.check_access("tag_list", &p.to_params()).await?;
    let (tags, vocabulary_id) = if has_query {
        let (tags, _, v) = tag_search_rows(ctx, &tag_query!(p)).await?;
        (tags, v)
    } else if let Some(v) = text(p.vocabulary_id.get()).filter(|s| !s.is_empty()) {
        let row = q::vocabulary_by_ref(ctx.db().await?, &v)
            .await?
            .ok_or_else(|| not_found(format!("could not find vocabulary '{v}'")))?;
        (
            q::vocabulary_tags(ctx.db().await?, &row.id).await?,
            Some(row.id),
        )
    } else {
        let names: Vec<String> = visible_values(ctx, "tags")
            .await?
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        (free_tags(ctx, &names).await?, None)
    };
    Ok(Value::Array(
        tags.into_iter()
            .map(|(id, name)| match (&vocabulary_id, all_fields) {
                (Some(v), true) => vocabulary_tag_dict(&id, &name, v),
                (None, true) => {
                    json!({"display_name": name, "id": id, "name": name, "vocabulary_id": null})
                }
                (_, false) => json!(name),
            })
            .collect(),
    ))
}
