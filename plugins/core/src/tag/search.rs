use catalog_framework::prelude::*;

use super::{tag_query, tag_search_params, tag_search_rows};

tag_search_params! {
    /// Return the tags whose names contain every given term (case-insensitive): free tags, or a
    /// vocabulary's.
    ///
    /// :param query: a string or a list of strings (`q` is an alias)
    /// :param vocabulary_id: search this vocabulary's tags instead
    /// :param limit: optional
    /// :param offset: optional
    /// :rtype: dictionary with count and results
    TagSearchParams {}
}

pub(crate) async fn tag_search(ctx: &mut ActionContext, p: TagSearchParams) -> CkanResult<Value> {
    ctx.check_access("tag_search", &p.to_params()).await?;
    let (tags, count, vocabulary_id) = tag_search_rows(ctx, &tag_query!(p)).await?;
    let results: Vec<Value> = tags
        .into_iter()
        .map(|(id, name)| json!({"id": id, "name": name, "vocabulary_id": vocabulary_id}))
        .collect();
    Ok(json!({"count": count, "results": results}))
}

tag_search_params! {
    /// Return the names of the tags that contain a string (as tag_search).
    ///
    /// :param query: the string to search for
    /// :param vocabulary_id: optional
    /// :param limit: optional
    /// :param offset: optional
    /// :rtype: list of strings
    TagAutocompleteParams {}
}

pub(crate) async fn tag_autocomplete(
    ctx: &mut ActionContext,
    p: TagAutocompleteParams,
) -> CkanResult<Value> {
    ctx.check_access("tag_autocomplete", &p.to_params()).await?;
    let (tags, _, _) = tag_search_rows(ctx, &tag_query!(p)).await?;
    Ok(Value::Array(
        tags.into_iter().map(|(_, name)| json!(name)).collect(),
    ))
}
