//! The walk over the query tree: each kind of query to a node, boolean clauses combined (full-text
//! ones into one `tsquery`, which one index scan serves), and "at least `k` of `n`" conditions.

use catalog_framework::prelude::*;
use catalog_framework::search::fields::{copied_to_text, kind, FieldKind};
use catalog_framework::search::Query;

use crate::analysis;
use crate::schema::RANKED_FIELDS;

use super::node::{constant, Compiler, Node};
use super::sql::Score;

/// Most `k of n` conditions written as an OR of ANDs (which indexes serve) rather than a count.
const MAX_COMBINATIONS: usize = 32;

impl Compiler<'_> {
    /// The SQL condition of `q`; with `score`, also collects what ranks it.
    pub fn cond(&mut self, q: &Query, score: Option<(&mut Score, f64)>) -> CkanResult<String> {
        let node = self.node(q, score)?;
        Ok(self.sql_of(node))
    }

    /// One query as a node, by its kind; with `score`, also collects what ranks it.
    fn node(&mut self, q: &Query, score: Option<(&mut Score, f64)>) -> CkanResult<Node> {
        Ok(match q {
            Query::All => Node::True,
            // Fuzzy matching degrades to the exact term.
            Query::Term { field, value } | Query::Fuzzy { field, value, .. } => {
                self.term(field, value, true, score)?
            }
            Query::Phrase { field, value, slop } => self.term(field, value, *slop == 0, score)?,
            Query::Wildcard { field, pattern } => {
                let n = self.wildcard(field, pattern, "d.tsv");
                if let Some((s, b)) = score {
                    if let Some(sc) = self.score_only(field, |me| {
                        let n = me.wildcard(field, pattern, "d.tsv_title");
                        Ok(me.score_sql(n))
                    })? {
                        s.constant.push((b, sc));
                    }
                }
                n
            }
            Query::Exists { field } => {
                let f = self.sql.text(field.as_str());
                let c = format!("d.names @> ARRAY[{f}::text]");
                constant(score, &c);
                Node::Sql(c)
            }
            Query::Range {
                field,
                lower,
                upper,
            } => {
                let c = self.range(field, lower, upper, "d.tsv")?;
                if let Some((s, b)) = score {
                    if let Some(sc) =
                        self.score_only(field, |me| me.range(field, lower, upper, "d.tsv_title"))?
                    {
                        s.constant.push((b, sc));
                    }
                }
                Node::Sql(c)
            }
            Query::Bool {
                must,
                should,
                must_not,
                min_should,
            } => self.boolean(must, should, must_not, *min_should, score)?,
            Query::Boost { query, boost } => {
                let score = score.map(|(s, b)| (s, b * f64::from(*boost)));
                self.node(query, score)?
            }
        })
    }

    /// The score condition of a constant-score clause: the clause itself, except on text fields,
    /// where only the ranked ones count (read from the row's `tsv_title`).
    fn score_only(
        &mut self,
        field: &str,
        build: impl FnOnce(&mut Self) -> CkanResult<String>,
    ) -> CkanResult<Option<String>> {
        match kind(field) {
            FieldKind::Text | FieldKind::TextGeneral if !RANKED_FIELDS.contains(&field) => Ok(None),
            _ => {
                let before = self.reads_out_of_line;
                let c = build(self)?;
                self.reads_out_of_line = before;
                Ok(Some(c))
            }
        }
    }

    /// A boolean query: the required, optional (at least `min_should` of them) and forbidden
    /// clauses, constants folded, full-text clauses combined into one query where they can be.
    fn boolean(
        &mut self,
        must: &[Query],
        should: &[Query],
        must_not: &[Query],
        min_should: usize,
        mut score: Option<(&mut Score, f64)>,
    ) -> CkanResult<Node> {
        if must.is_empty() && should.is_empty() && must_not.is_empty() {
            return Ok(Node::False);
        }
        let required = if min_should == 0 && must.is_empty() && !should.is_empty() {
            1
        } else {
            min_should
        };
        let implied = if required == 1 && must.is_empty() {
            implied_by_text(should)
        } else {
            vec![false; should.len()]
        };
        let mut musts = Vec::new();
        for m in must {
            let s = score.as_mut().map(|(s, b)| (&mut **s, *b));
            musts.push(self.node(m, s)?);
        }
        let mut shoulds = Vec::new();
        for (sh, implied) in should.iter().zip(implied) {
            let s = score.as_mut().map(|(s, b)| (&mut **s, *b));
            let n = self.node(sh, s)?;
            // A clause another one implies only scores.
            if !implied {
                shoulds.push(n);
            }
        }
        let mut nots = Vec::new();
        for n in must_not {
            nots.push(self.node(n, None)?);
        }

        // Constants out.
        if musts.contains(&Node::False) || nots.contains(&Node::True) {
            return Ok(Node::False);
        }
        musts.retain(|n| *n != Node::True);
        nots.retain(|n| *n != Node::False);
        let shoulds: Vec<Node> = if required == 0 {
            Vec::new()
        } else {
            shoulds.into_iter().filter(|n| *n != Node::False).collect()
        };
        if required > 0 && shoulds.len() < required {
            return Ok(Node::False);
        }
        if required == 1 && shoulds.contains(&Node::True) {
            // Satisfied by every row.
        } else if required > 0 {
            match self.k_of_n(shoulds, required) {
                Node::True => {}
                n => musts.push(n),
            }
        }
        if musts.is_empty() && nots.is_empty() {
            return Ok(Node::True);
        }

        // All full-text: one query.
        let positive_tsq = !musts.is_empty() && musts.iter().all(|n| matches!(n, Node::Tsq(_)));
        if positive_tsq && nots.iter().all(|n| matches!(n, Node::Tsq(_))) {
            if musts.len() == 1 && nots.is_empty() {
                return Ok(musts.pop().expect("one"));
            }
            let mut parts: Vec<String> = musts.into_iter().map(|n| paren(tsq_of(n))).collect();
            parts.extend(nots.into_iter().map(|n| format!("!{}", paren(tsq_of(n)))));
            return Ok(Node::Tsq(parts.join(" & ")));
        }
        let mut parts: Vec<String> = Vec::new();
        for m in musts {
            let s = self.sql_of(m);
            parts.push(format!("({s})"));
        }
        for n in nots {
            let s = self.sql_of(n);
            parts.push(format!("NOT ({s})"));
        }
        Ok(Node::Sql(parts.join(" AND ")))
    }

    /// At least `k` of `nodes` (no constants among them).
    fn k_of_n(&mut self, nodes: Vec<Node>, k: usize) -> Node {
        let all_tsq = nodes.iter().all(|n| matches!(n, Node::Tsq(_)));
        if k == 1 {
            if nodes.len() == 1 {
                return nodes.into_iter().next().expect("one");
            }
            if all_tsq {
                let parts: Vec<String> = nodes.into_iter().map(|n| paren(tsq_of(n))).collect();
                return Node::Tsq(parts.join(" | "));
            }
            let parts: Vec<String> = nodes
                .into_iter()
                .map(|n| format!("({})", self.sql_of(n)))
                .collect();
            return Node::Sql(format!("({})", parts.join(" OR ")));
        }
        match combinations(nodes.len(), k) {
            // At least k of n as an OR of ANDs: something indexes serve.
            Some(combos) if all_tsq => {
                let tsq: Vec<String> = nodes.into_iter().map(|n| paren(tsq_of(n))).collect();
                let ors: Vec<String> = combos
                    .iter()
                    .map(|c| {
                        let and: Vec<&str> = c.iter().map(|&i| tsq[i].as_str()).collect();
                        format!("({})", and.join(" & "))
                    })
                    .collect();
                Node::Tsq(ors.join(" | "))
            }
            Some(combos) => {
                let sql: Vec<String> = nodes
                    .into_iter()
                    .map(|n| format!("({})", self.sql_of(n)))
                    .collect();
                let ors: Vec<String> = combos
                    .iter()
                    .map(|c| {
                        let and: Vec<&str> = c.iter().map(|&i| sql[i].as_str()).collect();
                        format!("({})", and.join(" AND "))
                    })
                    .collect();
                Node::Sql(format!("({})", ors.join(" OR ")))
            }
            None => {
                // Too many: any one clause narrows the rows, the count decides.
                let sql: Vec<String> = nodes
                    .into_iter()
                    .map(|n| format!("({})", self.sql_of(n)))
                    .collect();
                let sum: Vec<String> = sql.iter().map(|s| format!("{s}::int")).collect();
                Node::Sql(format!(
                    "({}) AND ({}) >= {k}",
                    sql.join(" OR "),
                    sum.join(" + ")
                ))
            }
        }
    }
}

/// In a disjunction, the clauses implied by another: a term or phrase on `text` matches every
/// dataset where the same value matches a field copied into `text` (dismax's `name`, `title`,
/// `tags`, `groups`), so those only score. The match condition becomes one full-text query.
fn implied_by_text(should: &[Query]) -> Vec<bool> {
    fn unboosted(q: &Query) -> &Query {
        match q {
            Query::Boost { query, .. } => unboosted(query),
            other => other,
        }
    }

    fn exact_value(q: &Query) -> Option<(&str, &str)> {
        match unboosted(q) {
            Query::Term { field, value } => Some((field, value)),
            Query::Phrase {
                field,
                value,
                slop: 0,
            } => Some((field, value)),
            _ => None,
        }
    }
    let text_values: Vec<&str> = should
        .iter()
        .filter_map(exact_value)
        .filter(|(f, v)| *f == "text" && !analysis::tokens(FieldKind::Text, v).is_empty())
        .map(|(_, v)| v)
        .collect();
    should
        .iter()
        .map(|q| match exact_value(q) {
            Some((f, v)) => f != "text" && copied_to_text(f) && text_values.contains(&v),
            None => false,
        })
        .collect()
}

fn tsq_of(n: Node) -> String {
    match n {
        Node::Tsq(t) => t,
        other => unreachable!("not a full-text node: {other:?}"),
    }
}

/// Parenthesises a `tsquery` unless it is a single lexeme (the only text without a space or a
/// leading `!`: lexemes hold no spaces).
fn paren(s: String) -> String {
    if s.contains(' ') || s.starts_with('!') {
        format!("({s})")
    } else {
        s
    }
}

/// The `k`-element subsets of `0..n`, unless there are more than [`MAX_COMBINATIONS`].
fn combinations(n: usize, k: usize) -> Option<Vec<Vec<usize>>> {
    let mut count: usize = 1;
    for i in 0..k {
        count = count * (n - i) / (i + 1);
        if count > MAX_COMBINATIONS {
            return None;
        }
    }
    let mut out = Vec::new();
    let mut current = Vec::with_capacity(k);
    fn walk(start: usize, n: usize, k: usize, current: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if current.len() == k {
            out.push(current.clone());
            return;
        }
        for i in start..n {
            current.push(i);
            walk(i + 1, n, k, current, out);
            current.pop();
        }
    }
    walk(0, n, k, &mut current, &mut out);
    Some(out)
}

/// A `q` compiled as a search compiles it: the condition, its arguments, its score (what the
/// compiler's tests look at).
#[cfg(test)]
pub(super) fn compile_q(q: &str) -> (String, Vec<super::sql::Arg>, Score) {
    use catalog_framework::search::query::parse_q;
    let mut sql = super::sql::Sql::default();
    let mut score = Score::default();
    let parsed = parse_q(q, chrono::Utc::now()).unwrap();
    let c = Compiler::new(&mut sql)
        .cond(&parsed, Some((&mut score, 1.0)))
        .unwrap();
    (c, sql.args, score)
}

#[cfg(test)]
mod tests {
    use super::compile_q as compile;
    use super::*;
    use crate::compile::sql::{Arg, Sql};
    use catalog_framework::search::query::parse_lucene;
    use chrono::Utc;

    #[test]
    fn dismax_becomes_one_full_text_query() {
        let (c, args, score) = compile("water quality air");
        // name/title/tags/groups are copied into text: each word is one text query, and 2 of 3
        // is (1 & 2) | (1 & 3) | (2 & 3), all in one tsquery.
        let sql = Sql { args };
        let (c, args) = sql.statement(&c);
        assert_eq!(c, "d.tsv @@ $1::tsquery");
        assert_eq!(
            args,
            vec![Arg::Text(
                "('text:water' & 'text:qualiti') | ('text:water' & 'text:air') | \
                 ('text:qualiti' & 'text:air')"
                    .into()
            )]
        );
        // The implied clauses still score: title by rank, name/tags/groups as constants.
        assert_eq!(score.ranked.len(), 3);
        assert!(score.ranked.iter().all(|(b, _)| *b == 4.0));
        assert_eq!(score.constant.len(), 9);
    }

    #[test]
    fn mixed_conditions_stay_sql() {
        let (c, _, _) = compile("title:water AND tags:Economy AND -notes:air");
        assert_eq!(
            c,
            "(d.tsv @@ $2::tsquery) AND (d.tags @> ARRAY[$1::text]) AND NOT (d.tsv @@ $3::tsquery)"
        );
        let (c, args, _) = compile("title:water AND -notes:air");
        assert_eq!(c, "d.tsv @@ $1::tsquery");
        assert_eq!(args, vec![Arg::Text("'title:water' & !'notes:air'".into())]);
    }

    #[test]
    fn negative_only_query_and_string_exact() {
        let mut sql = Sql::default();
        let q = parse_lucene("-tags:Economy -vocab_x:\"A b\"", Utc::now()).unwrap();
        let c = Compiler::new(&mut sql).cond(&q, None).unwrap();
        assert_eq!(
            c,
            "NOT (d.tags @> ARRAY[$1::text]) AND NOT (d.fields @> $2::jsonb)"
        );
        assert_eq!(
            sql.args,
            vec![
                Arg::Text("Economy".into()),
                Arg::Text(r#"{"vocab_x":["A b"]}"#.into())
            ]
        );
    }

    #[test]
    fn k_of_n_subsets() {
        assert_eq!(
            combinations(3, 2),
            Some(vec![vec![0, 1], vec![0, 2], vec![1, 2]])
        );
        assert_eq!(combinations(5, 4).map(|c| c.len()), Some(5));
        assert_eq!(combinations(10, 8).map(|c| c.len()), None);
    }
}
