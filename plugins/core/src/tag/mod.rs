//! Tags (`tag_*`; spec/ckan-read-api.md §4.3): free tags, and with `vocabulary_id` the tags of
//! a vocabulary (`crate::vocabulary`). What the searches and `tag_list` share: the search terms,
//! the page of matching tags (free tags among those of the datasets the caller may read; a
//! vocabulary's tags whether used or not), and CKAN's `Tag.get` lookup.

use catalog_framework::prelude::*;
use catalog_framework::store as q;

use crate::lookup::{escape_like, ilike, naturals, py_truthy, text_of, visible_values};

pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod list;
pub(crate) mod search;
pub(crate) mod show;

/// CKAN's `Tag.get`: with a `vocabulary_id` (id or name) that does not exist, nothing. By id
/// first (within the vocabulary if one is given); else by name, within the vocabulary or among
/// the free tags. `(id, name, vocabulary_id)`, the last `''` for a free tag.
pub(crate) async fn find_tag(
    ctx: &mut ActionContext,
    r: &str,
    p: &Params,
) -> CkanResult<Option<(String, String, String)>> {
    let vocabulary = match opt_str(p, "vocabulary_id").filter(|v| !v.is_empty()) {
        None => String::new(),
        Some(v) => match q::vocabulary_by_ref(ctx.db().await?, &v).await? {
            Some(row) => row.id,
            None => return Ok(None),
        },
    };
    let found = q::tag_by_ref(ctx.db().await?, r, &vocabulary).await?;
    Ok(found.filter(|(id, _, v)| *v == vocabulary || (*id == r && vocabulary.is_empty())))
}

/// The vocabulary a search names: `None` without `vocabulary_id`, `Some(None)` when it names
/// none that exists (the search then finds nothing).
async fn searched_vocabulary(
    ctx: &mut ActionContext,
    p: &Params,
) -> CkanResult<Option<Option<String>>> {
    if !p.contains_key("vocabulary_id") {
        return Ok(None);
    }
    let Some(v) = opt_str(p, "vocabulary_id").filter(|v| !v.is_empty()) else {
        return Ok(Some(None));
    };
    Ok(Some(
        q::vocabulary_by_ref(ctx.db().await?, &v)
            .await?
            .map(|row| row.id),
    ))
}

/// The search terms of `_tag_search`: `query` or `q` (a string or a list), each stripped,
/// blanks dropped, plus the deprecated `fields` `tag`/`tags` values.
fn tag_terms(p: &Params) -> Vec<String> {
    let raw = [p.get("query"), p.get("q")]
        .into_iter()
        .find(|v| py_truthy(*v))
        .flatten();
    let mut terms: Vec<String> = match raw {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a.iter().filter_map(|v| text_of(Some(v))).collect(),
        Some(Value::Number(n)) => vec![n.to_string()],
        _ => Vec::new(),
    };
    terms = terms
        .iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect();
    if let Some(Value::Object(fields)) = p.get("fields") {
        for (k, v) in fields {
            if k == "tag" || k == "tags" {
                if let Some(s) = v.as_str() {
                    terms.push(s.to_string());
                }
            }
        }
    }
    terms
}

/// The stored free tags of these (distinct) names, as `(id, name)` in name order.
async fn free_tags(ctx: &mut ActionContext, names: &[String]) -> CkanResult<Vec<(String, String)>> {
    let mut out = q::free_tags_by_name(ctx.db().await?, names).await?;
    // CKAN leaves the order unspecified; code-point order of names, the same on every store.
    out.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(out)
}

/// CKAN's `_tag_search`: the tags whose names contain every term, case-insensitively: free
/// tags among the tags of the datasets the caller may read, or a vocabulary's tags. Returns the
/// page of `(id, name)`, the total, and the vocabulary's id.
async fn tag_search_rows(
    ctx: &mut ActionContext,
    p: &Params,
) -> CkanResult<(Vec<(String, String)>, usize, Option<String>)> {
    let paging = naturals(p, &["offset", "limit"])?;
    let terms = tag_terms(p);
    let vocabulary = searched_vocabulary(ctx, p).await?;
    if terms.is_empty() || matches!(vocabulary, Some(None)) {
        return Ok((Vec::new(), 0, None));
    }
    let patterns: Vec<String> = terms
        .iter()
        .map(|t| format!("%{}%", escape_like(t)))
        .collect();
    let matches = |name: &String| patterns.iter().all(|pat| ilike(name, pat));
    fn page<T>(rows: Vec<T>, paging: &[Option<usize>]) -> Vec<T> {
        rows.into_iter()
            .skip(paging[0].unwrap_or(0))
            .take(paging[1].unwrap_or(usize::MAX))
            .collect()
    }
    if let Some(Some(vocabulary_id)) = vocabulary {
        let rows: Vec<(String, String)> = q::vocabulary_tags(ctx.db().await?, &vocabulary_id)
            .await?
            .into_iter()
            .filter(|(_, name)| matches(name))
            .collect();
        let count = rows.len();
        return Ok((page(rows, &paging), count, Some(vocabulary_id)));
    }
    let mut matched: Vec<String> = visible_values(ctx, "tags")
        .await?
        .into_iter()
        .map(|(name, _)| name)
        .filter(matches)
        .collect();
    matched.sort_unstable();
    let count = matched.len();
    let names = page(matched, &paging);
    Ok((free_tags(ctx, &names).await?, count, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_terms_follow_ckan() {
        let p = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(tag_terms(&p(json!({"query": " ab "}))), vec!["ab"]);
        assert_eq!(tag_terms(&p(json!({"query": "", "q": "cd"}))), vec!["cd"]);
        assert_eq!(tag_terms(&p(json!({"q": ["a", " ", "b"]}))), vec!["a", "b"]);
        assert_eq!(
            tag_terms(&p(json!({"fields": {"tags": "x", "other": "y"}}))),
            vec!["x"]
        );
        assert!(tag_terms(&p(json!({"query": "  "}))).is_empty());
    }
}
