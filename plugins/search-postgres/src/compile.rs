//! Translates the framework's query AST into a SQL condition on a `search_doc` row (alias `d`)
//! and, for the scored query, a score expression. Every user value is a bind parameter; only
//! fixed column names and SQL keywords are written into the text.

use std::ops::Bound;

use catalog_framework::error::search_error;
use catalog_framework::prelude::*;
use catalog_framework::search::fields::{copied_to_text, kind, FieldKind};
use catalog_framework::search::query::parse_instant;
use catalog_framework::search::Query;
use catalog_framework::search::RangeValue;

use crate::analysis::{self, normalize_unstemmed, phrase_query, prefix_query};
use crate::schema::{iso, ARRAY_COLUMNS, EXACT_BY_COLUMN, RANKED_FIELDS};

/// The score a matching constant-score clause (exact string, range, wildcard, exists) adds,
/// times its boost: about what `ts_rank` gives one matching word.
const CONSTANT_SCORE: f64 = 0.05;

/// A bind parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Text(String),
    Int(i64),
    Float(f64),
}

/// SQL text under construction with its parameters.
#[derive(Debug, Default)]
pub struct Sql {
    pub args: Vec<Arg>,
}

impl Sql {
    /// Adds a parameter and returns its placeholder.
    pub fn bind(&mut self, a: Arg) -> String {
        self.args.push(a);
        format!("${}", self.args.len())
    }

    pub fn text(&mut self, s: impl Into<String>) -> String {
        self.bind(Arg::Text(s.into()))
    }

    /// A statement using some of the parameters: its text renumbered to the ones it uses, and
    /// those (PostgreSQL rejects a parameter a statement does not use). The text holds no `$`
    /// but placeholders: user values are never written into it.
    pub fn statement(&self, text: &str) -> (String, Vec<Arg>) {
        let mut out = String::with_capacity(text.len());
        let mut used: Vec<usize> = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let digits: String = rest[at + 1..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let Ok(n) = digits.parse::<usize>() else {
                out.push('$');
                rest = &rest[at + 1..];
                continue;
            };
            let slot = match used.iter().position(|&u| u == n) {
                Some(p) => p + 1,
                None => {
                    used.push(n);
                    used.len()
                }
            };
            out.push_str(&format!("${slot}"));
            rest = &rest[at + 1 + digits.len()..];
        }
        out.push_str(rest);
        let args = used.iter().map(|&n| self.args[n - 1].clone()).collect();
        (out, args)
    }
}

/// What ranks a match: queries on the ranked text fields by `ts_rank` on the row's small
/// `tsv_title` (grouped by boost), and constant-score clauses. Every condition here reads the
/// row only (no out-of-line value), so ranking many matches stays cheap.
#[derive(Debug, Default)]
pub struct Score {
    /// `(boost, tsquery text)`
    pub ranked: Vec<(f64, String)>,
    /// `(boost, SQL condition)`
    pub constant: Vec<(f64, String)>,
}

impl Score {
    pub fn is_constant(&self) -> bool {
        self.ranked.is_empty() && self.constant.is_empty()
    }

    /// The score expression, binding its parameters into `sql`.
    pub fn expression(&self, sql: &mut Sql) -> String {
        let mut terms = Vec::new();
        let mut boosts: Vec<f64> = self.ranked.iter().map(|(b, _)| *b).collect();
        boosts.sort_by(|a, b| a.total_cmp(b));
        boosts.dedup();
        for b in boosts {
            let q: Vec<String> = self
                .ranked
                .iter()
                .filter(|(x, _)| *x == b)
                .map(|(_, q)| format!("({q})"))
                .collect();
            let q = sql.text(q.join(" | "));
            let b = sql.bind(Arg::Float(b));
            terms.push(format!("{b} * ts_rank(d.tsv_title, {q}::tsquery)"));
        }
        for (b, cond) in &self.constant {
            let w = sql.bind(Arg::Float(CONSTANT_SCORE * b));
            terms.push(format!("(CASE WHEN {cond} THEN {w} ELSE 0 END)"));
        }
        if terms.is_empty() {
            "0".into()
        } else {
            terms.join(" + ")
        }
    }
}

/// Most `k of n` conditions written as an OR of ANDs (which indexes serve) rather than a count.
const MAX_COMBINATIONS: usize = 32;

/// A compiled condition: a full-text query (which combines with others into one `tsquery`, one
/// index scan), any other SQL condition, or a constant.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Tsq(String),
    Sql(String),
    True,
    False,
}

/// Compiles queries into conditions sharing one parameter list.
pub struct Compiler<'a> {
    pub sql: &'a mut Sql,
    /// Whether a condition reads the full-text index or the `fields` document: both are out of
    /// line, so reading them row by row costs far more than the planner assumes.
    pub reads_out_of_line: bool,
}

impl<'a> Compiler<'a> {
    pub fn new(sql: &'a mut Sql) -> Compiler<'a> {
        Compiler {
            sql,
            reads_out_of_line: false,
        }
    }

    /// The SQL condition of `q`; with `score`, also collects what ranks it.
    pub fn cond(&mut self, q: &Query, score: Option<(&mut Score, f64)>) -> CkanResult<String> {
        let node = self.node(q, score)?;
        Ok(self.sql_of(node))
    }

    fn sql_of(&mut self, node: Node) -> String {
        match node {
            Node::True => "TRUE".into(),
            Node::False => "FALSE".into(),
            Node::Sql(s) => s,
            Node::Tsq(t) => self.tsv_matches("d.tsv", t),
        }
    }

    fn tsv_matches(&mut self, column: &str, tsquery: String) -> String {
        if column == "d.tsv" {
            self.reads_out_of_line = true;
        }
        let p = self.sql.text(tsquery);
        format!("{column} @@ {p}::tsquery")
    }

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

    /// A node as a score condition: on the row's `tsv_title` rather than the full `tsv`.
    fn score_sql(&mut self, node: Node) -> String {
        match node {
            Node::Tsq(t) => self.tsv_matches("d.tsv_title", t),
            other => self.sql_of(other),
        }
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

    /// A term or phrase: exact on string fields, analysed on text fields (several tokens
    /// form a phrase; `adjacent` false lets them appear anywhere in the field).
    fn term(
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
    fn wildcard(&mut self, field: &str, pattern: &str, tsv: &str) -> Node {
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
    fn range(
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

fn constant(score: Option<(&mut Score, f64)>, cond: &str) {
    if let Some((s, b)) = score {
        s.constant.push((b, cond.to_string()));
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
    use super::*;
    use catalog_framework::search::query::{parse_lucene, parse_q};
    use chrono::Utc;

    fn compile(q: &str) -> (String, Vec<Arg>, Score) {
        let mut sql = Sql::default();
        let mut score = Score::default();
        let parsed = parse_q(q, Utc::now()).unwrap();
        let c = Compiler::new(&mut sql)
            .cond(&parsed, Some((&mut score, 1.0)))
            .unwrap();
        (c, sql.args, score)
    }

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
    fn statements_keep_the_parameters_they_use() {
        let mut sql = Sql::default();
        let a = sql.text("a");
        let _unused = sql.text("b");
        let c = sql.bind(Arg::Int(3));
        let (text, args) = sql.statement(&format!("x = {c} AND y = {a} OR z = {c}"));
        assert_eq!(text, "x = $1 AND y = $2 OR z = $1");
        assert_eq!(args, vec![Arg::Int(3), Arg::Text("a".into())]);
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
