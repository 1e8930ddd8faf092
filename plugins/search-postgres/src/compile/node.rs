//! The compiler's state and the conditions it builds: a compiled node is a full-text query, a
//! SQL condition or a constant, and becomes SQL on the full `tsv` or, to score, on `tsv_title`.

use super::sql::{Score, Sql};

/// A compiled condition: a full-text query (which combines with others into one `tsquery`, one
/// index scan), any other SQL condition, or a constant.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Node {
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

    /// A node as a condition on the full `tsv` (a full-text query) or as itself.
    pub(super) fn sql_of(&mut self, node: Node) -> String {
        match node {
            Node::True => "TRUE".into(),
            Node::False => "FALSE".into(),
            Node::Sql(s) => s,
            Node::Tsq(t) => self.tsv_matches("d.tsv", t),
        }
    }

    /// `column @@ tsquery`, the query bound; reading `d.tsv` reads out of line.
    pub(super) fn tsv_matches(&mut self, column: &str, tsquery: String) -> String {
        if column == "d.tsv" {
            self.reads_out_of_line = true;
        }
        let p = self.sql.text(tsquery);
        format!("{column} @@ {p}::tsquery")
    }

    /// A node as a score condition: on the row's `tsv_title` rather than the full `tsv`.
    pub(super) fn score_sql(&mut self, node: Node) -> String {
        match node {
            Node::Tsq(t) => self.tsv_matches("d.tsv_title", t),
            other => self.sql_of(other),
        }
    }
}

/// Records a constant-score condition in `score`, if the query is scored.
pub(super) fn constant(score: Option<(&mut Score, f64)>, cond: &str) {
    if let Some((s, b)) = score {
        s.constant.push((b, cond.to_string()));
    }
}
