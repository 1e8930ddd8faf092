//! Tags (`tag_*`; spec/ckan-read-api.md §4.3): free tags, and with `vocabulary_id` the tags of
//! a vocabulary (`crate::vocabulary`). What the searches and `tag_list` share: the search terms,
//! the page of matching tags (free tags among those of the datasets the caller may read; a
//! vocabulary's tags whether used or not), and CKAN's `Tag.get` lookup.

use catalog_framework::params::text;
use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::Raw;

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
    vocabulary_id: Option<&Value>,
) -> CkanResult<Option<(String, String, String)>> {
    let vocabulary = match text(vocabulary_id).filter(|v| !v.is_empty()) {
        None => String::new(),
        Some(v) => match q::vocabulary_by_ref(ctx.db().await?, &v).await? {
            Some(row) => row.id,
            None => return Ok(None),
        },
    };
    let found = q::tag_by_ref(ctx.db().await?, r, &vocabulary).await?;
    Ok(found.filter(|(id, _, v)| *v == vocabulary || (*id == r && vocabulary.is_empty())))
}

/// What the tag searches read (`tag_search`, `tag_autocomplete`, and `tag_list` with a
/// query), as sent: each is read where CKAN reads it, after the access check.
pub(crate) struct TagQuery {
    pub(crate) query: Option<Value>,
    pub(crate) q: Option<Value>,
    pub(crate) fields: Option<Value>,
    pub(crate) vocabulary_id: Raw,
    pub(crate) offset: Option<Value>,
    pub(crate) limit: Option<Value>,
}

/// Declares the params struct of a tag search, with the fields of a [`TagQuery`] (and the
/// action's own after them).
macro_rules! tag_search_params {
    ($(#[doc = $doc:literal])* $name:ident { $($own:tt)* }) => {
        action_params! {
            $(#[doc = $doc])*
            pub struct $name {
                /// only the tags whose names contain this (case-insensitive): a string, or a
                /// list of strings that must all match
                query: Option<Value>,
                /// an alias of `query`
                q: Option<Value>,
                /// deprecated: a dict whose `tag` or `tags` value is one more term
                fields: Option<Value>,
                /// the vocabulary's id or name: search its tags instead of the free tags (null
                /// names none)
                vocabulary_id: catalog_framework::typed::Raw,
                /// how many matching tags to skip
                offset: Option<Value>,
                /// how many matching tags to return
                limit: Option<Value>,
                $($own)*
            }
        }
    };
}
pub(crate) use tag_search_params;

/// A [`TagQuery`] from a params struct with its fields.
macro_rules! tag_query {
    ($p:expr) => {
        crate::tag::TagQuery {
            query: $p.query,
            q: $p.q,
            fields: $p.fields,
            vocabulary_id: $p.vocabulary_id,
            offset: $p.offset,
            limit: $p.limit,
        }
    };
}
pub(crate) use tag_query;

/// The vocabulary a search names: `None` without `vocabulary_id`, `Some(None)` when it names
/// none that exists (the search then finds nothing); a null `vocabulary_id` names none.
async fn searched_vocabulary(
    ctx: &mut ActionContext,
    vocabulary_id: &Raw,
) -> CkanResult<Option<Option<String>>> {
    if vocabulary_id.get().is_none() {
        return Ok(None);
    }
    let Some(v) = text(vocabulary_id.get()).filter(|v| !v.is_empty()) else {
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
fn tag_terms(query: Option<&Value>, q: Option<&Value>, fields: Option<&Value>) -> Vec<String> {
    let raw = [query, q].into_iter().find(|v| py_truthy(*v)).flatten();
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
    if let Some(Value::Object(fields)) = fields {
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
    p: &TagQuery,
) -> CkanResult<(Vec<(String, String)>, usize, Option<String>)> {
    let paging = naturals(&[("offset", p.offset.as_ref()), ("limit", p.limit.as_ref())])?;
    let terms = tag_terms(p.query.as_ref(), p.q.as_ref(), p.fields.as_ref());
    let vocabulary = searched_vocabulary(ctx, &p.vocabulary_id).await?;
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
        let terms = |v: Value| tag_terms(v.get("query"), v.get("q"), v.get("fields"));
        assert_eq!(terms(json!({"query": " ab "})), vec!["ab"]);
        assert_eq!(terms(json!({"query": "", "q": "cd"})), vec!["cd"]);
        assert_eq!(terms(json!({"q": ["a", " ", "b"]})), vec!["a", "b"]);
        assert_eq!(
            terms(json!({"fields": {"tags": "x", "other": "y"}})),
            vec!["x"]
        );
        assert!(terms(json!({"query": "  "})).is_empty());
    }
}
