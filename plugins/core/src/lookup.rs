//! What the lookup actions share (`resource_search`, the `tag_*` searches and lists, the
//! autocompletes): `ILIKE` matching, their parameter checks, and the values of an index field
//! over the datasets the caller may read.
//!
//! CKAN matches these in SQL with `ILIKE`; here the matching is done by [`ilike`] in Rust, so
//! SQLite and PostgreSQL answer identically (SQLite's `LOWER`/`LIKE` fold ASCII only).

use catalog_framework::authz;
use catalog_framework::prelude::*;
use catalog_framework::search::{Query, SearchRequest};
use catalog_framework::typed::{Later, Text};

/// SQL `ILIKE` with `\` as the escape character (PostgreSQL's default, which CKAN relies on):
/// `%` matches any run of characters, `_` exactly one; letters compare case-insensitively.
pub(crate) fn ilike(text: &str, pattern: &str) -> bool {
    #[derive(Clone, Copy, PartialEq)]
    enum Tok {
        Lit(char),
        One,
        Many,
    }
    let mut pat = Vec::new();
    let mut chars = pattern
        .to_lowercase()
        .chars()
        .collect::<Vec<_>>()
        .into_iter();
    while let Some(c) = chars.next() {
        pat.push(match c {
            // A trailing escape stands for itself (PostgreSQL would reject the pattern).
            '\\' => Tok::Lit(chars.next().unwrap_or('\\')),
            '%' => Tok::Many,
            '_' => Tok::One,
            c => Tok::Lit(c),
        });
    }
    let text: Vec<char> = text.to_lowercase().chars().collect();
    let (mut ti, mut pi) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while ti < text.len() {
        match pat.get(pi) {
            Some(Tok::One) => {
                ti += 1;
                pi += 1;
            }
            Some(Tok::Lit(c)) if *c == text[ti] => {
                ti += 1;
                pi += 1;
            }
            Some(Tok::Many) => {
                backtrack = Some((pi, ti));
                pi += 1;
            }
            _ => match backtrack {
                Some((bp, bt)) => {
                    pi = bp + 1;
                    ti = bt + 1;
                    backtrack = Some((bp, bt + 1));
                }
                None => return false,
            },
        }
    }
    pat[pi..].iter().all(|t| *t == Tok::Many)
}

/// CKAN's `escape_sql_like_special_characters`: `\`, `%` and `_` escaped with `\`.
pub(crate) fn escape_like(term: &str) -> String {
    let mut out = String::with_capacity(term.len());
    for c in term.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `limit`/`offset` as `natural_number_validator` checks them, errors collected per field.
pub(crate) fn naturals(fields: &[&Later<Natural>]) -> CkanResult<Vec<Option<usize>>> {
    let mut errors = validation();
    let mut out = Vec::new();
    for f in fields {
        match f.get() {
            Ok(v) => out.push(v.map(|n| n.0 as usize)),
            Err(e) => {
                errors.merge(e);
                out.push(None);
            }
        }
    }
    errors.finish()?;
    Ok(out)
}

/// `q` and `limit` of an autocomplete that checks access before them, validated together as
/// CKAN's schema does (as the fields `q: Text, limit: Option<Natural>` of the others are).
pub(crate) fn autocomplete_params(
    q: &Later<Text>,
    limit: &Later<Natural>,
    default_limit: usize,
) -> CkanResult<(String, usize)> {
    let q = q.require();
    let limit = limit.get();
    match (q, limit) {
        (Ok(q), Ok(l)) => Ok((q.0, l.map_or(default_limit, |n| n.0 as usize))),
        (Err(mut a), Err(b)) => {
            a.body.extend(b.body);
            Err(a)
        }
        (Err(e), _) | (_, Err(e)) => Err(e),
    }
}

/// A resource value as the text SQL would compare (`None` for NULL).
pub(crate) fn text_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// The values of an index field (`tags`, `res_format`) over the active datasets the caller may
/// read, with the number of datasets holding each: a facet of the index, so that neither the
/// cost of the call grows with a scan of every dataset nor the tags and formats of private,
/// draft or deleted datasets leak to those who may not read them (CKAN lists them to anyone;
/// docs/API-COMPAT.md).
pub(crate) async fn visible_values(
    ctx: &mut ActionContext,
    field: &str,
) -> CkanResult<Vec<(String, u64)>> {
    let mut filters = vec![Query::term("state", "active")];
    filters.extend(authz::label_filter(ctx).await?);
    let req = SearchRequest {
        query: Query::All,
        filters,
        sort: Vec::new(),
        start: 0,
        rows: 0,
        facet_fields: vec![field.to_string()],
        facet_limit: None,
        facet_mincount: 1,
    };
    let hits = ctx.search(&req).await?;
    Ok(hits
        .facets
        .into_iter()
        .find(|(f, _)| f == field)
        .map(|(_, values)| values)
        .unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ilike_follows_sql() {
        assert!(ilike("Hello World", "%world%"));
        assert!(ilike("Hello", "h_llo"));
        assert!(!ilike("Hello", "h_lo"));
        assert!(ilike("abc", "%"));
        assert!(ilike("", "%%"));
        assert!(!ilike("abc", ""));
        assert!(ilike("50% off", "%50\\%%"));
        assert!(!ilike("500 off", "%50\\%%"));
        assert!(ilike("a_b", "a\\_b"));
        assert!(!ilike("axb", "a\\_b"));
        assert!(ilike("back\\slash", "%k\\\\s%"));
        assert!(ilike("ÉCONOMIE", "%éco%"));
        assert!(ilike("aaab", "%aab"));
        assert!(ilike("abcabd", "%abd"));
    }

    #[test]
    fn escape_like_escapes_wildcards_and_the_escape() {
        assert_eq!(escape_like("a%b_c\\d"), "a\\%b\\_c\\\\d");
        assert!(ilike("x%y", &format!("%{}%", escape_like("%"))));
        assert!(!ilike("xy", &format!("%{}%", escape_like("%"))));
    }
}
