use catalog_framework::prelude::*;

use super::tag_search_rows;

action_params! {
    /// Return the tags whose names contain every given term (case-insensitive): free tags, or a
    /// vocabulary's.
    ///
    /// :param query: a string or a list of strings (`q` is an alias)
    /// :param vocabulary_id: search this vocabulary's tags instead
    /// :param limit: optional
    /// :param offset: optional
    /// :rtype: dictionary with count and results
    pub struct TagSearchParams {}
}

pub async fn tag_search(ctx: &mut ActionContext, p: TagSearchParams) -> CkanResult<Value> {
    let p = p.__extras;
    ctx.check_access("tag_search", &p).await?;
    let (tags, count, vocabulary_id) = tag_search_rows(ctx, &p).await?;
    let results: Vec<Value> = tags
        .into_iter()
        .map(|(id, name)| json!({"id": id, "name": name, "vocabulary_id": vocabulary_id}))
        .collect();
    Ok(json!({"count": count, "results": results}))
}

action_params! {
    /// Return the names of the tags that contain a string (as tag_search).
    ///
    /// :param query: the string to search for
    /// :param vocabulary_id: optional
    /// :param limit: optional
    /// :param offset: optional
    /// :rtype: list of strings
    pub struct TagAutocompleteParams {}
}

pub async fn tag_autocomplete(
    ctx: &mut ActionContext,
    p: TagAutocompleteParams,
) -> CkanResult<Value> {
    let p = p.__extras;
    ctx.check_access("tag_autocomplete", &p).await?;
    let (tags, _, _) = tag_search_rows(ctx, &p).await?;
    Ok(Value::Array(
        tags.into_iter().map(|(_, name)| json!(name)).collect(),
    ))
}
