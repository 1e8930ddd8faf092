//! SQL text under construction: its bind parameters, the statements that use some of them, and
//! the score expression of a ranked query.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
