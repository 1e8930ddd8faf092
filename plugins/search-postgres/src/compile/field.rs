//! Conditions on one field: a term or phrase (exact on string fields, analysed on text fields,
//! a range of one instant on dates), an exact string, a wildcard, a range.

use std::ops::Bound;

use catalog_framework::error::search_error;
use catalog_framework::prelude::*;
use catalog_framework::search::fields::{kind, FieldKind};
use catalog_framework::search::query::parse_instant;
use catalog_framework::search::RangeValue;

use crate::analysis::{self, normalize_unstemmed, phrase_query, prefix_query};
use crate::schema::{iso, ARRAY_COLUMNS, EXACT_BY_COLUMN, RANKED_FIELDS};

use super::node::{constant, Compiler, Node};
use super::sql::{Arg, Score};

impl Compiler<'_> {
    /// A term or phrase: exact on string fields, analysed on text fields (several tokens
    /// form a phrase; `adjacent` false lets them appear anywhere in the field).
    pub(super) fn term(
        &mut self,
        field: &str,
        value: &str,
        adjacent: bool,
        score: Option<(&mut Score, f64)>,
    ) -> CkanResult<Node> {
        match kind(field) {
            FieldKind::String => {
                let c = self.exact(field, value);
                constant(score, &c);
                Ok(Node::Sql(c))
            }
            k @ (FieldKind::Text | FieldKind::TextGeneral) => {
                let Some(tsq) = phrase_query(field, k, value, adjacent) else {
                    return Ok(Node::False);
                };
                if let Some((s, b)) = score {
                    if RANKED_FIELDS.contains(&field) {
                        s.ranked.push((b, tsq.clone()));
                    }
                }
                Ok(Node::Tsq(tsq))
            }
            FieldKind::Date => {
                let at = parse_instant(value)
                    .ok_or_else(|| search_error(format!("Search engine returned an error running query: Invalid Date String:'{value}'")))?;
                let v = RangeValue::Date(at);
                let c = self.range(
                    field,
                    &Bound::Included(v.clone()),
                    &Bound::Included(v),
                    "d.tsv",
                )?;
                constant(score, &c);
                Ok(Node::Sql(c))
            }
        }
    }

    /// Exact match of a string field.
    fn exact(&mut self, field: &str, value: &str) -> String {
        // Columns hold '' for a missing value: the empty string is looked up in `fields`.
        if EXACT_BY_COLUMN.contains(&field) && !value.is_empty() {
            let v = self.sql.text(value);
            return format!("d.{field} = {v}");
        }
        if ARRAY_COLUMNS.contains(&field) {
            let v = self.sql.text(value);
            return format!("d.{field} @> ARRAY[{v}::text]");
        }
        self.reads_out_of_line = true;
        let doc = json!({ field: [value] }).to_string();
        let p = self.sql.text(doc);
        format!("d.fields @> {p}::jsonb")
    }

    /// A wildcard; on text fields it reads the tokens of `tsv` (a column name).
    pub(super) fn wildcard(&mut self, field: &str, pattern: &str, tsv: &str) -> Node {
        match kind(field) {
            FieldKind::String => {
                let like = like_pattern(pattern);
                if field == "id" || field == "name" {
                    let p = self.sql.text(like);
                    return Node::Sql(format!("d.{field} LIKE {p}"));
                }
                self.reads_out_of_line = true;
                let f = self.sql.text(field);
                let p = self.sql.text(like);
                Node::Sql(format!(
                    "EXISTS (SELECT 1 FROM jsonb_array_elements_text(d.fields -> {f}) AS v(val) \
                     WHERE v.val LIKE {p})"
                ))
            }
            FieldKind::Text | FieldKind::TextGeneral => {
                // As Solr and tantivy, wildcard terms are lower-cased and folded, not stemmed,
                // and match the indexed tokens.
                let pattern = normalize_unstemmed(pattern);
                let literal: String = pattern
                    .chars()
                    .take_while(|c| *c != '*' && *c != '?')
                    .collect();
                let rest = &pattern[literal.len()..];
                let prefix = if literal.is_empty() {
                    None
                } else {
                    prefix_query(field, &literal)
                };
                if rest == "*" {
                    return match prefix {
                        Some(q) if tsv == "d.tsv" => Node::Tsq(q),
                        Some(q) => Node::Sql(self.tsv_matches(tsv, q)),
                        None => Node::False,
                    };
                }
                let Some(lexeme) = analysis::lexeme(field, "") else {
                    return Node::False;
                };
                if tsv == "d.tsv" {
                    self.reads_out_of_line = true;
                }
                let like = format!("{}{}", like_escape(&lexeme), like_pattern(&pattern));
                let p = self.sql.text(like);
                let scan =
                    format!("EXISTS (SELECT 1 FROM unnest({tsv}) AS u WHERE u.lexeme LIKE {p})");
                match prefix {
                    // The prefix narrows the rows by the index; the scan checks the rest.
                    Some(q) => {
                        let pre = self.tsv_matches(tsv, q);
                        Node::Sql(format!("({pre} AND {scan})"))
                    }
                    None => Node::Sql(scan),
                }
            }
            FieldKind::Date => {
                let f = self.sql.text(field);
                let p = self.sql.text(like_pattern(pattern));
                Node::Sql(format!(
                    "EXISTS (SELECT 1 FROM jsonb_array_elements_text(d.dates -> {f}) AS v(val) \
                     WHERE v.val LIKE {p})"
                ))
            }
        }
    }

    /// A range; on text fields it compares the tokens of `tsv` (a column name).
    pub(super) fn range(
        &mut self,
        field: &str,
        lower: &Bound<RangeValue>,
        upper: &Bound<RangeValue>,
        tsv: &str,
    ) -> CkanResult<String> {
        let k = kind(field);
        if k == FieldKind::Date {
            let mut conds = Vec::new();
            let column = matches!(field, "metadata_modified" | "metadata_created");
            let target = if column {
                format!("d.{field}")
            } else {
                "v.val::timestamptz".to_string()
            };
            for (bound, op_incl, op_excl) in [(lower, ">=", ">"), (upper, "<=", "<")] {
                let (v, op) = match bound {
                    Bound::Unbounded => continue,
                    Bound::Included(v) => (v, op_incl),
                    Bound::Excluded(v) => (v, op_excl),
                };
                let at = match v {
                    RangeValue::Date(d) => *d,
                    RangeValue::Str(s) => parse_instant(s)
                        .ok_or_else(|| search_error(format!("Search engine returned an error running query: Invalid Date String:'{s}'")))?,
                };
                let p = self.sql.text(iso(&at));
                conds.push(format!("{target} {op} {p}::timestamptz"));
            }
            if column {
                conds.insert(0, format!("d.{field} IS NOT NULL"));
                return Ok(format!("({})", conds.join(" AND ")));
            }
            let f = self.sql.text(field);
            conds.insert(0, "TRUE".into());
            return Ok(format!(
                "EXISTS (SELECT 1 FROM jsonb_array_elements_text(d.dates -> {f}) AS v(val) \
                 WHERE {})",
                conds.join(" AND ")
            ));
        }
        // Strings compare as Solr's string fields do: by code point. Text fields compare
        // their (lower-cased, folded) tokens.
        let text = k != FieldKind::String;
        let prefix = if text {
            match analysis::lexeme(field, "") {
                Some(l) => l,
                None => return Ok("FALSE".into()),
            }
        } else {
            String::new()
        };
        let target = if text { "u.lexeme" } else { "v.val" };
        let mut conds = Vec::new();
        if text {
            let len = self.sql.bind(Arg::Int(prefix.chars().count() as i64));
            let p = self.sql.text(prefix.clone());
            conds.push(format!("left(u.lexeme, {len}::int) = {p}"));
        }
        for (bound, op_incl, op_excl) in [(lower, ">=", ">"), (upper, "<=", "<")] {
            let (v, op) = match bound {
                Bound::Unbounded => continue,
                Bound::Included(v) => (v, op_incl),
                Bound::Excluded(v) => (v, op_excl),
            };
            let s = match v {
                RangeValue::Str(s) => s.clone(),
                RangeValue::Date(d) => iso(d),
            };
            let s = if text {
                format!("{prefix}{}", normalize_unstemmed(&s))
            } else {
                s
            };
            let p = self.sql.text(s);
            conds.push(format!("{target} COLLATE \"C\" {op} {p}"));
        }
        if !text && conds.is_empty() {
            conds.push("TRUE".into());
        }
        if text {
            if tsv == "d.tsv" {
                self.reads_out_of_line = true;
            }
            return Ok(format!(
                "EXISTS (SELECT 1 FROM unnest({tsv}) AS u WHERE {})",
                conds.join(" AND ")
            ));
        }
        self.reads_out_of_line = true;
        let f = self.sql.text(field);
        Ok(format!(
            "EXISTS (SELECT 1 FROM jsonb_array_elements_text(d.fields -> {f}) AS v(val) WHERE {})",
            conds.join(" AND ")
        ))
    }
}

/// Escapes LIKE's own wildcards and escape character.
fn like_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A Lucene wildcard pattern (`*`, `?`) as a LIKE pattern.
fn like_pattern(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 2);
    for c in pattern.chars() {
        match c {
            '*' => out.push('%'),
            '?' => out.push('_'),
            '\\' | '%' | '_' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::query::compile_q as compile;
    use super::*;

    #[test]
    fn like_patterns_escape_sql_wildcards() {
        assert_eq!(like_pattern("wa_t%er*?"), "wa\\_t\\%er%_");
        assert_eq!(like_escape("a_b"), "a\\_b");
    }

    #[test]
    fn user_values_are_bound_never_written_into_the_sql() {
        let (c, args, _) = compile("tags:\"x'); DROP TABLE t; --\" title:evil' extras_k:[a TO b]");
        assert!(!c.contains("DROP"), "{c}");
        assert!(!c.contains("evil"), "{c}");
        assert!(args
            .iter()
            .any(|a| matches!(a, Arg::Text(t) if t.contains("DROP TABLE"))));
    }
}
