//! Tags (`tag_*`; spec/ckan-read-api.md §4.3): free tags, and with `vocabulary_id` the tags of
//! a vocabulary (`crate::vocabulary`). What the searches and `tag_list` share: the search terms,
//! the page of matching tags (free tags among those of the datasets the caller may read; a
//! vocabulary's tags whether used or not), and CKAN's `Tag.get` lookup.

use std::borrow::Cow;

use catalog_framework::params::text;
use catalog_framework::prelude::*;
use catalog_framework::store as q;
use catalog_framework::typed::{py_truthy, Later, ParamType, Raw};

use crate::lookup::{escape_like, ilike, naturals, text_of, visible_values};
use crate::shapes::{LaterExt, Lenient};

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
    vocabulary_id: Option<&str>,
) -> CkanResult<Option<(String, String, String)>> {
    let vocabulary = match vocabulary_id.filter(|v| !v.is_empty()) {
        None => String::new(),
        Some(v) => match q::vocabulary_by_ref(ctx.db().await?, v).await? {
            Some(row) => row.id,
            None => return Ok(None),
        },
    };
    let found = q::tag_by_ref(ctx.db().await?, r, &vocabulary).await?;
    Ok(found.filter(|(id, _, v)| *v == vocabulary || (*id == r && vocabulary.is_empty())))
}

/// `query` / `q` of the tag searches: a string (one term), a list (its items the terms:
/// strings as sent, other items as JSON text, nulls dropped) or a number (its digits), each
/// term stripped and blank ones dropped. Never refuses: any other value gives no term. Of
/// `query` and `q`, the first truthy in Python is the one read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TagTerms {
    /// Python's truthiness of the value as sent.
    pub(crate) truthy: bool,
    /// True when the value was sent as a string.
    pub(crate) string: bool,
    pub(crate) terms: Vec<String>,
}

impl ParamType for TagTerms {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        let terms: Vec<String> = match v {
            Value::String(s) => vec![s.clone()],
            Value::Array(a) => a.iter().filter_map(|v| text_of(Some(v))).collect(),
            Value::Number(n) => vec![n.to_string()],
            _ => Vec::new(),
        };
        Ok(TagTerms {
            truthy: py_truthy(v),
            string: v.is_string(),
            terms: terms
                .iter()
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
                .collect(),
        })
    }
    fn schema() -> Value {
        json!({"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]})
    }
    fn to_value(&self) -> Value {
        json!(self.terms)
    }
}

impl Lenient for TagTerms {}

/// The deprecated `fields` of the tag searches: a dict whose `tag` and `tags` values, when
/// strings, are more terms (as sent); anything else gives none. Never refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TagFields(pub(crate) Vec<String>);

impl ParamType for TagFields {
    fn decode(v: &Value) -> Result<Self, Cow<'static, str>> {
        let mut terms = Vec::new();
        if let Value::Object(fields) = v {
            for (k, v) in fields {
                if k == "tag" || k == "tags" {
                    if let Some(s) = v.as_str() {
                        terms.push(s.to_string());
                    }
                }
            }
        }
        Ok(TagFields(terms))
    }
    fn schema() -> Value {
        json!({"type": "object", "properties": {"tag": {"type": "string"}, "tags": {"type": "string"}}})
    }
    fn to_value(&self) -> Value {
        json!(self.0)
    }
}

impl Lenient for TagFields {}

/// What the tag searches read (`tag_search`, `tag_autocomplete`, and `tag_list` with a
/// query): each is read where CKAN reads it, after the access check.
pub(crate) struct TagQuery {
    pub(crate) query: Later<TagTerms>,
    pub(crate) q: Later<TagTerms>,
    pub(crate) fields: Later<TagFields>,
    pub(crate) vocabulary_id: Raw,
    pub(crate) offset: Later<Natural>,
    pub(crate) limit: Later<Natural>,
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
                query: catalog_framework::typed::Later<crate::tag::TagTerms>,
                /// an alias of `query`
                q: catalog_framework::typed::Later<crate::tag::TagTerms>,
                /// deprecated: a dict whose `tag` or `tags` value is one more term
                fields: catalog_framework::typed::Later<crate::tag::TagFields>,
                /// the vocabulary's id or name: search its tags instead of the free tags (null
                /// names none)
                vocabulary_id: catalog_framework::typed::Raw,
                /// how many matching tags to skip
                offset: catalog_framework::typed::Later<Natural>,
                /// how many matching tags to return
                limit: catalog_framework::typed::Later<Natural>,
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

/// The search terms of `_tag_search`: those of `query` or `q` (the first truthy), plus the
/// deprecated `fields` `tag`/`tags` values.
fn tag_terms(
    query: Option<TagTerms>,
    q: Option<TagTerms>,
    fields: Option<TagFields>,
) -> Vec<String> {
    let mut terms = [query, q]
        .into_iter()
        .flatten()
        .find(|t| t.truthy)
        .map(|t| t.terms)
        .unwrap_or_default();
    terms.extend(fields.into_iter().flat_map(|f| f.0));
    terms
}

/// True when `tag_list` searches: the first truthy of `query` and `q` is not blank text.
pub(crate) fn has_query(query: Option<TagTerms>, q: Option<TagTerms>) -> bool {
    [query, q]
        .into_iter()
        .flatten()
        .find(|t| t.truthy)
        .is_some_and(|t| !t.string || !t.terms.is_empty())
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
    let paging = naturals(&[&p.offset, &p.limit])?;
    let terms = tag_terms(p.query.value(), p.q.value(), p.fields.value());
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

    fn later<T: ParamType>(v: &Value, key: &'static str) -> Later<T> {
        Later::new(key, v.get(key).cloned())
    }

    fn terms(v: Value) -> Vec<String> {
        tag_terms(
            later(&v, "query").value(),
            later(&v, "q").value(),
            later(&v, "fields").value(),
        )
    }

    fn query(v: Value) -> bool {
        has_query(later(&v, "query").value(), later(&v, "q").value())
    }

    #[test]
    fn tag_terms_follow_ckan() {
        assert_eq!(terms(json!({"query": " ab "})), vec!["ab"]);
        assert_eq!(terms(json!({"query": "", "q": "cd"})), vec!["cd"]);
        assert_eq!(terms(json!({"q": ["a", " ", "b"]})), vec!["a", "b"]);
        assert_eq!(
            terms(json!({"fields": {"tags": "x", "other": "y"}})),
            vec!["x"]
        );
        assert!(terms(json!({"query": "  "})).is_empty());
        // The first truthy of the two is read, whatever its terms.
        assert!(terms(json!({"query": true, "q": "cd"})).is_empty());
        assert_eq!(terms(json!({"query": [], "q": 5})), vec!["5"]);
        assert_eq!(
            terms(json!({"q": ["a", null, 1, " b "]})),
            vec!["a", "1", "b"]
        );
        assert_eq!(terms(json!({"query": "x", "fields": "tags"})), vec!["x"]);
    }

    #[test]
    fn tag_list_searches_for_a_truthy_query_but_blank_text() {
        assert!(query(json!({"query": "a"})));
        assert!(query(json!({"q": [" "]})));
        assert!(query(json!({"query": true})));
        assert!(!query(json!({"query": "  "})));
        assert!(!query(json!({"query": "", "q": []})));
        assert!(!query(json!({})));
    }
}
