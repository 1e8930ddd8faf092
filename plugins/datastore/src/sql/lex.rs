//! A lexer for the SQL of `datastore_search_sql`: enough of PostgreSQL's and SQLite's token
//! rules (strings, escape strings, dollar quotes, quoted identifiers, nested comments) to tell
//! where a statement ends, which names are called as functions, and which identifiers name a
//! resource. It is not the guard: the store's own checks are (a read-only role or authorizer,
//! the plan's tables). It only has to see what the store will see, and it refuses what it is
//! not sure of (an unterminated string or comment, PostgreSQL's `U&"…"` identifiers).

use std::ops::Range;

use catalog_framework::store::Backend;

/// A token's kind; its text is `sql[span]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A bare identifier or keyword (as written; compare lower-cased).
    Word,
    /// A quoted identifier: its name, unquoted.
    Quoted(String),
    /// A string or number literal.
    Literal,
    /// A parameter (`$1`, `?`, `:name`).
    Param,
    /// Punctuation or an operator character; `::` is one token.
    Op,
}

#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub(crate) kind: Kind,
    pub(crate) span: Range<usize>,
}

impl Token {
    pub(crate) fn is_op(&self, sql: &str, op: &str) -> bool {
        self.kind == Kind::Op && &sql[self.span.clone()] == op
    }

    /// The name of an identifier token: a bare word lower-cased, a quoted one as written.
    pub(crate) fn name(&self, sql: &str) -> Option<String> {
        match &self.kind {
            Kind::Word => Some(sql[self.span.clone()].to_ascii_lowercase()),
            Kind::Quoted(n) => Some(n.clone()),
            _ => None,
        }
    }
}

/// As both stores' scanners read names: ASCII letters, `_`, and every non-ASCII character
/// (PostgreSQL's `\200-\377`, SQLite's `sqlite3IsIdChar`), so a no-break space or `€` is part
/// of a name, never white space or an operator.
fn word_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || !c.is_ascii()
}

fn word_char(c: char) -> bool {
    word_start(c) || c.is_ascii_digit() || c == '$'
}

/// White space as the scanners read it: ASCII only.
fn space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// The tokens of `sql` (comments and white space dropped), or what is wrong with it.
pub(crate) fn lex(sql: &str, backend: Backend) -> Result<Vec<Token>, String> {
    let s = Scanner {
        sql,
        chars: sql.char_indices().collect(),
        pg: backend == Backend::Postgres,
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.chars.len() {
        let c = s.chars[i].1;
        if c == '\0' {
            return Err("The query must not contain NUL characters".into());
        }
        if space(c) {
            i += 1;
            continue;
        }
        if let Some(end) = s.comment(i)? {
            i = end;
            continue;
        }
        let (end, kind) = s.token(i)?;
        out.push(Token {
            kind,
            span: s.pos(i)..s.pos(end),
        });
        i = end;
    }
    Ok(out)
}

/// The text being read, by character: each method reads one kind of token from character
/// `i` and answers the index of the character after it (`None`: not that kind).
struct Scanner<'s> {
    sql: &'s str,
    chars: Vec<(usize, char)>,
    /// PostgreSQL's rules, else SQLite's.
    pg: bool,
}

impl Scanner<'_> {
    fn at(&self, i: usize) -> Option<char> {
        self.chars.get(i).map(|(_, c)| *c)
    }

    /// The byte offset of character `i` (the text's length past the end).
    fn pos(&self, i: usize) -> usize {
        self.chars.get(i).map_or(self.sql.len(), |(p, _)| *p)
    }

    /// The token at `i` (not white space or a comment) and its kind, trying each kind in turn.
    fn token(&self, i: usize) -> Result<(usize, Kind), String> {
        if let Some(end) = self.string(i)? {
            return Ok((end, Kind::Literal));
        }
        if let Some((end, name)) = self.quoted_identifier(i)? {
            return Ok((end, Kind::Quoted(name)));
        }
        if let Some(found) = self.dollar(i)? {
            return Ok(found);
        }
        if let Some(end) = self.sqlite_param(i) {
            return Ok((end, Kind::Param));
        }
        if let Some(end) = self.number(i)? {
            return Ok((end, Kind::Literal));
        }
        if let Some(end) = self.word(i) {
            return Ok((end, Kind::Word));
        }
        Ok((self.op(i), Kind::Op))
    }

    /// Comments: `-- …` to the end of the line, `/* … */` (nested on PostgreSQL).
    /// PostgreSQL's `--` comment ends at `\n` or `\r`, SQLite's at `\n` only.
    fn comment(&self, mut i: usize) -> Result<Option<usize>, String> {
        let c = self.chars[i].1;
        if c == '-' && self.at(i + 1) == Some('-') {
            while i < self.chars.len()
                && self.chars[i].1 != '\n'
                && !(self.pg && self.chars[i].1 == '\r')
            {
                i += 1;
            }
            return Ok(Some(i));
        }
        if c == '/' && self.at(i + 1) == Some('*') {
            let mut depth = 1;
            i += 2;
            while depth > 0 {
                match (self.at(i), self.at(i + 1)) {
                    (None, _) => return Err("The query has an unterminated comment".into()),
                    (Some('*'), Some('/')) => {
                        depth -= 1;
                        i += 2;
                    }
                    (Some('/'), Some('*')) if self.pg => {
                        depth += 1;
                        i += 2;
                    }
                    _ => i += 1,
                }
            }
            return Ok(Some(i));
        }
        Ok(None)
    }

    /// A string: '…' ('' inside), with a prefix E'…' (backslash escapes), B'…', X'…', N'…',
    /// U&'…'.
    fn string(&self, mut i: usize) -> Result<Option<usize>, String> {
        let c = self.chars[i].1;
        let pg = self.pg;
        let lower = c.to_ascii_lowercase();
        let (prefix_len, backslashes) = match (lower, self.at(i + 1), self.at(i + 2)) {
            ('e', Some('\''), _) if pg => (1, true),
            ('b' | 'x' | 'n', Some('\''), _) => (1, false),
            ('u', Some('&'), Some('\'')) if pg => (2, false),
            ('u', Some('&'), Some('"')) if pg => {
                return Err("Unicode-escaped identifiers (U&\"…\") are not supported".into())
            }
            _ => (0, false),
        };
        if c != '\'' && prefix_len == 0 {
            return Ok(None);
        }
        i += prefix_len + 1;
        loop {
            match self.at(i) {
                None => return Err("The query has an unterminated quoted string".into()),
                Some('\\') if backslashes => i += 2,
                Some('\'') if self.at(i + 1) == Some('\'') => i += 2,
                Some('\'') => {
                    i += 1;
                    break;
                }
                Some(_) => i += 1,
            }
        }
        // PostgreSQL joins a string to one that follows after a line break (keeping the
        // first one's escape rules): refused rather than followed.
        let mut k = i;
        while self.at(k).is_some_and(space) {
            k += 1;
        }
        if self.at(k) == Some('\'') {
            return Err("Adjacent string constants are not supported; join them into one".into());
        }
        Ok(Some(i))
    }

    /// A quoted identifier: "…" ("" inside); SQLite also [ … ] and ` … `. Its end and name.
    fn quoted_identifier(&self, mut i: usize) -> Result<Option<(usize, String)>, String> {
        let close = match self.chars[i].1 {
            '"' => '"',
            '`' if !self.pg => '`',
            '[' if !self.pg => ']',
            _ => return Ok(None),
        };
        let mut name = String::new();
        i += 1;
        loop {
            match self.at(i) {
                None => return Err("The query has an unterminated quoted identifier".into()),
                Some(ch) if ch == close && close != ']' && self.at(i + 1) == Some(close) => {
                    name.push(close);
                    i += 2;
                }
                Some(ch) if ch == close => {
                    i += 1;
                    break;
                }
                Some(ch) => {
                    name.push(ch);
                    i += 1;
                }
            }
        }
        Ok(Some((i, name)))
    }

    /// PostgreSQL's `$`: a dollar quote ($tag$ … $tag$), else a positional parameter ($1).
    fn dollar(&self, i: usize) -> Result<Option<(usize, Kind)>, String> {
        if self.chars[i].1 != '$' || !self.pg {
            return Ok(None);
        }
        let mut j = i + 1;
        while self
            .at(j)
            .is_some_and(|ch| word_start(ch) || ch.is_ascii_digit())
        {
            j += 1;
        }
        let tag_ok = self.at(i + 1).is_some_and(|ch| !ch.is_ascii_digit());
        if self.at(j) == Some('$') && tag_ok {
            let tag: String = self.chars[i..=j].iter().map(|(_, c)| *c).collect();
            let body_start = self.pos(j + 1);
            let Some(end) = self.sql[body_start..].find(&tag) else {
                return Err("The query has an unterminated dollar-quoted string".into());
            };
            let end_byte = body_start + end + tag.len();
            let mut k = i;
            while k < self.chars.len() && self.pos(k) < end_byte {
                k += 1;
            }
            return Ok(Some((k, Kind::Literal)));
        }
        Ok(Some((j, Kind::Param)))
    }

    /// SQLite's parameters: `?`, `?1`, `:name`, `@name`, `$name`.
    fn sqlite_param(&self, mut i: usize) -> Option<usize> {
        let c = self.chars[i].1;
        if !((c == '?' || c == ':' || c == '@' || c == '$')
            && !self.pg
            && (c == '?' || self.at(i + 1).is_some_and(word_start)))
        {
            return None;
        }
        i += 1;
        while self.at(i).is_some_and(word_char) {
            i += 1;
        }
        Some(i)
    }

    /// A number: digits, an optional fraction, an optional exponent.
    fn number(&self, mut i: usize) -> Result<Option<usize>, String> {
        let c = self.chars[i].1;
        if !(c.is_ascii_digit() || (c == '.' && self.at(i + 1).is_some_and(|d| d.is_ascii_digit())))
        {
            return Ok(None);
        }
        while self.at(i).is_some_and(|d| d.is_ascii_digit()) {
            i += 1;
        }
        if self.at(i) == Some('.') {
            i += 1;
            while self.at(i).is_some_and(|d| d.is_ascii_digit()) {
                i += 1;
            }
        }
        if matches!(self.at(i), Some('e' | 'E')) {
            let sign = usize::from(matches!(self.at(i + 1), Some('+' | '-')));
            if self.at(i + 1 + sign).is_some_and(|d| d.is_ascii_digit()) {
                i += 1 + sign;
                while self.at(i).is_some_and(|d| d.is_ascii_digit()) {
                    i += 1;
                }
            }
        }
        // `1e'…'`, `1x`: the stores' scanners disagree on these (a name or string glued
        // to a number); refused rather than guessed.
        if self
            .at(i)
            .is_some_and(|d| word_char(d) || d == '\'' || d == '"' || d == '.')
        {
            return Err("The query has a number followed directly by letters or quotes".into());
        }
        Ok(Some(i))
    }

    /// A bare identifier or keyword.
    fn word(&self, mut i: usize) -> Option<usize> {
        if !word_start(self.chars[i].1) {
            return None;
        }
        while self.at(i).is_some_and(word_char) {
            i += 1;
        }
        Some(i)
    }

    /// Any other character is an operator; `::` is one.
    fn op(&self, i: usize) -> usize {
        if self.chars[i].1 == ':' && self.at(i + 1) == Some(':') {
            i + 2
        } else {
            i + 1
        }
    }
}

/// Whether the tokens are one statement: `;` only at the end.
pub(crate) fn single_statement(sql: &str, toks: &[Token]) -> bool {
    let last = toks
        .iter()
        .rposition(|t| !t.is_op(sql, ";"))
        .map_or(0, |p| p + 1);
    last > 0 && !toks[..last].iter().any(|t| t.is_op(sql, ";"))
}

/// Words that may stand before `(` without being a function call.
const NOT_FUNCTIONS: &[&str] = &[
    "select",
    "from",
    "where",
    "and",
    "or",
    "not",
    "in",
    "exists",
    "any",
    "all",
    "some",
    "as",
    "on",
    "using",
    "values",
    "join",
    "lateral",
    "union",
    "intersect",
    "except",
    "over",
    "filter",
    "within",
    "group",
    "by",
    "having",
    "when",
    "then",
    "else",
    "case",
    "row",
    "array",
    "limit",
    "offset",
    "with",
    "window",
    "distinct",
    "rollup",
    "cube",
    "sets",
    "between",
    "like",
    "ilike",
    "similar",
    "to",
    "escape",
    "varying",
    "recursive",
    "materialized",
    "only",
    "tablesample",
    "repeatable",
    "partition",
    "order",
];

/// For each `(`, the index of its `)` (one pass with a stack).
fn matching_parens(sql: &str, toks: &[Token]) -> Vec<Option<usize>> {
    let mut out = vec![None; toks.len()];
    let mut open = Vec::new();
    for (j, t) in toks.iter().enumerate() {
        if t.is_op(sql, "(") {
            open.push(j);
        } else if t.is_op(sql, ")") {
            if let Some(o) = open.pop() {
                out[o] = Some(j);
            }
        }
    }
    out
}

fn is_word(sql: &str, t: &Token, word: &str) -> bool {
    t.kind == Kind::Word && sql[t.span.clone()].eq_ignore_ascii_case(word)
}

/// The names the SQL calls as functions (`name(`, `schema.name(`, `"name"(`), lower-cased
/// unless quoted. Not calls: a name after `::` or `AS` (a type or an alias), and a common
/// table expression's `name (columns) AS (` — only after `WITH`, `RECURSIVE` or `,`, with
/// nothing but names in the parentheses, and `AS` then `(`, `MATERIALIZED` or `NOT`.
pub(crate) fn called_functions(sql: &str, toks: &[Token]) -> Vec<String> {
    let closing = matching_parens(sql, toks);
    let mut out: Vec<String> = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let Some(name) = t.name(sql) else { continue };
        if !toks.get(i + 1).is_some_and(|n| n.is_op(sql, "(")) {
            continue;
        }
        if t.kind == Kind::Word && NOT_FUNCTIONS.contains(&name.as_str()) {
            continue;
        }
        let before = i.checked_sub(1).map(|p| &toks[p]);
        if before.is_some_and(|b| b.is_op(sql, "::") || is_word(sql, b, "as")) {
            continue;
        }
        let cte_start = before.is_some_and(|b| {
            is_word(sql, b, "with") || is_word(sql, b, "recursive") || b.is_op(sql, ",")
        });
        if cte_start {
            if let Some(close) = closing[i + 1] {
                let names_only = toks[i + 2..close]
                    .iter()
                    .all(|u| u.name(sql).is_some() || u.is_op(sql, ","));
                let as_then_body = toks.get(close + 1).is_some_and(|u| is_word(sql, u, "as"))
                    && toks.get(close + 2).is_some_and(|u| {
                        u.is_op(sql, "(")
                            || is_word(sql, u, "materialized")
                            || is_word(sql, u, "not")
                    });
                if names_only && as_then_body {
                    continue;
                }
            }
        }
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Whether the parentheses balance (a `)` that closes nothing could end the wrapper query
/// around the statement).
pub(crate) fn balanced(sql: &str, toks: &[Token]) -> bool {
    let mut depth: i64 = 0;
    for t in toks {
        if t.is_op(sql, "(") {
            depth += 1;
        } else if t.is_op(sql, ")") {
            depth -= 1;
            if depth < 0 {
                return false;
            }
        }
    }
    depth == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(sql: &str, b: Backend) -> Vec<String> {
        let t = lex(sql, b).unwrap();
        called_functions(sql, &t)
    }

    #[test]
    fn statements_end_only_at_the_end() {
        for (sql, one) in [
            ("select 1", true),
            ("select 1;", true),
            ("select 1; ;", true),
            ("select 1; select 2", false),
            ("select ';' as x", true),
            ("select 1 -- ; drop\n", true),
            ("select 1 /* ; */", true),
            ("select $x$ ; $x$", true),
            ("select \"a;b\" from t", true),
            (";", false),
            ("", false),
        ] {
            let t = lex(sql, Backend::Postgres).unwrap();
            assert_eq!(single_statement(sql, &t), one, "{sql}");
        }
    }

    #[test]
    fn quoting_tricks() {
        // PostgreSQL nests comments: the `;` is still inside one.
        let sql = "select 1 /* /* */ ; drop table x; */";
        let t = lex(sql, Backend::Postgres).unwrap();
        assert!(single_statement(sql, &t));
        // SQLite does not: the same text is two statements there.
        let t = lex(sql, Backend::Sqlite).unwrap();
        assert!(!single_statement(sql, &t));
        // E'' strings end only at an unescaped quote.
        let sql = r"select E'\'; drop table x; --' as a";
        let t = lex(sql, Backend::Postgres).unwrap();
        assert!(single_statement(sql, &t));
        // A plain string has no backslash escapes.
        let sql = r"select 'a\'; select 2";
        let t = lex(sql, Backend::Postgres).unwrap();
        assert!(!single_statement(sql, &t));
        for bad in [
            "select 'open",
            "select \"open",
            "select 1 /* open",
            "select $a$ open",
            "select U&\"\\0070g_sleep\"(1)",
            "select 1e'x'",
            "select 1x",
            "select E''\n'\\' ', set_config($$role$$,$$none$$,true) --'",
            "select 'a'\n'b'",
            "select 1\0",
        ] {
            assert!(lex(bad, Backend::Postgres).is_err(), "{bad}");
        }
    }

    #[test]
    fn finds_called_functions() {
        let pg = Backend::Postgres;
        assert_eq!(names("select pg_sleep(10)", pg), ["pg_sleep"]);
        assert_eq!(names("select pg_catalog.PG_SLEEP (10)", pg), ["pg_sleep"]);
        assert_eq!(names("select \"pg_sleep\"(10)", pg), ["pg_sleep"]);
        assert_eq!(names("select pg_sleep/**/(10)", pg), ["pg_sleep"]);
        assert_eq!(
            names(
                "select count(*), upper(a) from t where a in (1) and exists (select 1)",
                pg
            ),
            ["count", "upper"]
        );
        assert!(
            names("select cast(a as numeric(10,2)), a::varchar(3) from t", pg)
                .iter()
                .all(|n| n == "cast")
        );
        assert!(names("with x(a) as (select 1) select * from x", pg).is_empty());
        assert!(names("with recursive t(n) as (select 1) select 1", pg).is_empty());
        assert!(names(
            "with a as (select 1), b(x, y) as materialized (select 1, 2) select 1",
            pg
        )
        .is_empty());
        // A call followed by `AS` is still a call.
        assert_eq!(names("select pg_sleep(5) as x", pg), ["pg_sleep"]);
        assert_eq!(
            names("select 1, query_to_xml('q', true) as x", pg),
            ["query_to_xml"]
        );
        assert_eq!(names("with x as (select 1) select f(a) as (b)", pg), ["f"]);
        assert!(names("select 'pg_sleep(1)', $$pg_sleep(1)$$", pg).is_empty());
        // Non-ASCII characters are name characters, as in both stores' scanners.
        assert_eq!(names("select $é$ ' $é$, pg_sleep(9) --'", pg), ["pg_sleep"]);
        assert_eq!(
            names("select 1 as €$a$, pg_sleep(9) as x$a$", pg),
            ["pg_sleep"]
        );
        assert_eq!(
            names("select\u{a0}pg_sleep(1)", pg),
            ["select\u{a0}pg_sleep"]
        );
        // `--` ends at a carriage return on PostgreSQL (not on SQLite).
        assert_eq!(
            names(
                "select 1 --\roffset length(set_config('role','none',true))",
                pg
            ),
            ["length", "set_config"]
        );
        assert!(names("select 1 --\roffset f(1)", Backend::Sqlite).is_empty());
    }
}
