//! Free tags (`tag_*`; spec/ckan-read-api.md §4.3). Vocabularies are not implemented: no
//! vocabulary exists. What the searches and `tag_list` share: the search terms and the page of
//! matching tags among those of the datasets the caller may read.

use catalog_framework::prelude::*;
use catalog_framework::store as q;

use crate::lookup::{escape_like, ilike, naturals, py_truthy, text_of, visible_values};

pub(crate) mod list;
pub(crate) mod search;
pub(crate) mod show;

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

/// CKAN's `_tag_search`: free tags whose names contain every term, case-insensitively, among
/// the tags of the datasets the caller may read. Returns the page of `(id, name)` and the total.
async fn tag_search_rows(
    ctx: &mut ActionContext,
    p: &Params,
) -> CkanResult<(Vec<(String, String)>, usize)> {
    let paging = naturals(p, &["offset", "limit"])?;
    let terms = tag_terms(p);
    // A vocabulary search finds nothing: no vocabulary exists.
    if p.contains_key("vocabulary_id") || terms.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let patterns: Vec<String> = terms
        .iter()
        .map(|t| format!("%{}%", escape_like(t)))
        .collect();
    let mut matched: Vec<String> = visible_values(ctx, "tags")
        .await?
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| patterns.iter().all(|pat| ilike(name, pat)))
        .collect();
    matched.sort_unstable();
    let count = matched.len();
    let page: Vec<String> = matched
        .into_iter()
        .skip(paging[0].unwrap_or(0))
        .take(paging[1].unwrap_or(usize::MAX))
        .collect();
    Ok((free_tags(ctx, &page).await?, count))
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
