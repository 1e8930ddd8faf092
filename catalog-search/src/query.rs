//! CKAN's query language, parsed once into an AST that every [`SearchBackend`] translates.
//!
//! Two modes, as CKAN picks them (spec §5.3): a `q` without `:` is a *dismax* query (bare words
//! and phrases scored against `name^4 title^4 tags^2 groups^2 text` with the `mm` rule); anything
//! else, and every `fq`, is the Lucene syntax with `AND` as the default operator.
//!
//! [`SearchBackend`]: super::SearchBackend

use std::ops::Bound;

use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeZone, Timelike, Utc};

use super::fields::{kind, FieldKind};

/// A parsed query. Field names are CKAN's index field names (`tags`, `res_format`, `extras_x` …).
#[derive(Debug, Clone, PartialEq)]
pub enum Query {
    /// `*:*`
    All,
    /// A single term; text fields analyse it (several tokens then behave as a phrase).
    Term {
        field: String,
        value: String,
    },
    /// A quoted phrase, with the proximity of `"…"~n`.
    Phrase {
        field: String,
        value: String,
        slop: u32,
    },
    /// A term with `*` / `?` wildcards.
    Wildcard {
        field: String,
        pattern: String,
    },
    /// `term~n`: edit distance at most `distance` (1 or 2).
    Fuzzy {
        field: String,
        value: String,
        distance: u8,
    },
    /// `field:*` or `field:[* TO *]`.
    Exists {
        field: String,
    },
    Range {
        field: String,
        lower: Bound<RangeValue>,
        upper: Bound<RangeValue>,
    },
    /// Boolean combination. A query with only `must_not` clauses matches everything but them.
    /// `min_should` is the number of `should` clauses that must match (0: they only score,
    /// unless there is no `must` clause, when at least one must match).
    Bool {
        must: Vec<Query>,
        should: Vec<Query>,
        must_not: Vec<Query>,
        min_should: usize,
    },
    Boost {
        query: Box<Query>,
        boost: f32,
    },
}

/// A range end: a date (date fields, after date math) or a string (everything else compares
/// as strings, as in Solr's string fields).
#[derive(Debug, Clone, PartialEq)]
pub enum RangeValue {
    Date(DateTime<Utc>),
    Str(String),
}

/// The fields and boosts dismax scores bare words against (CKAN's `qf`).
pub const DEFAULT_QF: &[(&str, f32)] = &[
    ("name", 4.0),
    ("title", 4.0),
    ("tags", 2.0),
    ("groups", 2.0),
    ("text", 1.0),
];

/// The default field of the Lucene syntax (`df=text`).
pub const DEFAULT_FIELD: &str = "text";

/// The deepest nesting of parentheses (and stacked boosts) a query may have. Every consumer
/// of a [`Query`] walks it recursively (simplification, each backend's translation, `Drop`),
/// so the parser is where the depth of every tree is bounded.
pub const MAX_DEPTH: usize = 64;

/// The most clauses (terms, phrases, ranges …) one query may hold: Solr's `maxClauseCount`.
pub const MAX_CLAUSES: usize = 1024;

/// The longest query text accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 65_536;

/// Why a query was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryError {
    /// A syntax error, with Solr-like wording (CKAN answers these as a `Search Error`).
    Syntax(String),
    /// The query is over one of the limits above (a `Search Query Error`).
    TooComplex(String),
}

impl QueryError {
    pub fn message(&self) -> &str {
        match self {
            QueryError::Syntax(m) | QueryError::TooComplex(m) => m,
        }
    }
}

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

type Result<T> = std::result::Result<T, QueryError>;

fn err<T>(msg: impl Into<String>) -> Result<T> {
    Err(QueryError::Syntax(msg.into()))
}

fn too_complex<T>(msg: impl Into<String>) -> Result<T> {
    Err(QueryError::TooComplex(msg.into()))
}

fn check_length(s: &str) -> Result<()> {
    // Bytes bound characters from above: count only when the bytes are over the limit.
    if s.len() > MAX_QUERY_CHARS && s.chars().count() > MAX_QUERY_CHARS {
        return too_complex(format!(
            "the query is longer than {MAX_QUERY_CHARS} characters"
        ));
    }
    Ok(())
}

fn too_many_clauses<T>() -> Result<T> {
    too_complex(format!(
        "too many boolean clauses (maxClauseCount is {MAX_CLAUSES})"
    ))
}

impl Query {
    /// The query that matches nothing.
    pub fn none() -> Query {
        Query::Bool {
            must: vec![],
            should: vec![],
            must_not: vec![Query::All],
            min_should: 0,
        }
    }

    pub fn term(field: &str, value: &str) -> Query {
        Query::Term {
            field: field.into(),
            value: value.into(),
        }
    }

    /// All of `qs` must match.
    pub fn and(qs: Vec<Query>) -> Query {
        Query::Bool {
            must: qs,
            should: vec![],
            must_not: vec![],
            min_should: 0,
        }
    }

    /// At least one of `qs` must match.
    pub fn or(qs: Vec<Query>) -> Query {
        Query::Bool {
            must: vec![],
            should: qs,
            must_not: vec![],
            min_should: 1,
        }
    }

    /// Every field this query names (for backends that must check them).
    pub fn fields(&self, out: &mut Vec<String>) {
        match self {
            Query::All => {}
            Query::Term { field, .. }
            | Query::Phrase { field, .. }
            | Query::Wildcard { field, .. }
            | Query::Fuzzy { field, .. }
            | Query::Exists { field }
            | Query::Range { field, .. } => out.push(field.clone()),
            Query::Bool {
                must,
                should,
                must_not,
                ..
            } => {
                for q in must.iter().chain(should).chain(must_not) {
                    q.fields(out);
                }
            }
            Query::Boost { query, .. } => query.fields(out),
        }
    }
}

/// Parses `q` as CKAN does: empty → `*:*`; no `:` → dismax; otherwise Lucene.
pub fn parse_q(q: &str, now: DateTime<Utc>) -> Result<Query> {
    let t = q.trim();
    if t.is_empty() || t == "\"\"" || t == "''" {
        return Ok(Query::All);
    }
    if t.contains(':') {
        parse_lucene(t, now)
    } else {
        parse_dismax(t, DEFAULT_QF)
    }
}

/// Parses the Lucene syntax (`fq`, and `q` when it contains `:`), default operator AND.
pub fn parse_lucene(s: &str, now: DateTime<Utc>) -> Result<Query> {
    check_length(s)?;
    let tokens = lex(s)?;
    let mut p = Parser {
        tokens,
        pos: 0,
        now,
        depth: 0,
        clauses: 0,
    };
    if p.tokens.is_empty() {
        return Ok(Query::All);
    }
    let q = p.or_expr(DEFAULT_FIELD)?;
    if p.pos < p.tokens.len() {
        return err(format!(
            "Cannot parse '{s}': Encountered \"{}\"",
            p.tokens[p.pos].describe()
        ));
    }
    Ok(simplify(q))
}

/// Dismax: bare words and quoted phrases (with `+`/`-`), each scored against `qf`, with
/// CKAN's `mm = "2<-1 5<80%"` rule on the optional clauses.
pub fn parse_dismax(s: &str, qf: &[(&str, f32)]) -> Result<Query> {
    check_length(s)?;
    let mut must = Vec::new();
    let mut should = Vec::new();
    let mut must_not = Vec::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        let mut occur = 0i8;
        if (chars[i] == '+' || chars[i] == '-') && i + 1 < chars.len() {
            occur = if chars[i] == '+' { 1 } else { -1 };
            i += 1;
        }
        let (text, phrase) = if chars[i] == '"' {
            let start = i + 1;
            let mut j = start;
            while j < chars.len() && chars[j] != '"' {
                j += 1;
            }
            let text: String = chars[start..j].iter().collect();
            i = (j + 1).min(chars.len());
            (text, true)
        } else {
            let start = i;
            while i < chars.len() && !chars[i].is_whitespace() {
                i += 1;
            }
            (chars[start..i].iter().collect::<String>(), false)
        };
        let text = text.trim().to_string();
        if text.is_empty() {
            continue;
        }
        // Dismax ignores the Lucene operators written as words.
        if !phrase && occur == 0 && matches!(text.as_str(), "AND" | "OR" | "NOT" | "&&" | "||") {
            continue;
        }
        let per_field: Vec<Query> = qf
            .iter()
            .map(|(f, boost)| {
                let q = if phrase {
                    Query::Phrase {
                        field: (*f).into(),
                        value: text.clone(),
                        slop: 0,
                    }
                } else {
                    Query::Term {
                        field: (*f).into(),
                        value: text.clone(),
                    }
                };
                if (*boost - 1.0).abs() > f32::EPSILON {
                    Query::Boost {
                        query: Box::new(q),
                        boost: *boost,
                    }
                } else {
                    q
                }
            })
            .collect();
        if (must.len() + should.len() + must_not.len() + 1) * qf.len().max(1) > MAX_CLAUSES {
            return too_many_clauses();
        }
        let clause = Query::or(per_field);
        match occur {
            1 => must.push(clause),
            -1 => must_not.push(clause),
            _ => should.push(clause),
        }
    }
    if must.is_empty() && should.is_empty() && must_not.is_empty() {
        return Ok(Query::All);
    }
    let min_should = mm(should.len());
    Ok(Query::Bool {
        must,
        should,
        must_not,
        min_should,
    })
}

/// CKAN's `mm = "2<-1 5<80%"`: 1–2 optional clauses all required, 3–5 all but one, more 80%.
pub fn mm(n: usize) -> usize {
    match n {
        0..=2 => n,
        3..=5 => n - 1,
        _ => n * 8 / 10,
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    LParen,
    RParen,
    Plus,
    Minus,
    Not,
    And,
    Or,
    /// `field:` — the colon is part of the token.
    Field(String),
    /// A bare term (escapes resolved), and whether it held an unescaped wildcard.
    Word {
        text: String,
        wildcard: bool,
    },
    Phrase(String),
    /// `[` or `{` … `TO` … `]` or `}`.
    Range {
        lower: String,
        upper: String,
        incl_lower: bool,
        incl_upper: bool,
    },
    /// `^2.5`
    Caret(f32),
    /// `~` or `~n`
    Tilde(Option<f32>),
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::LParen => "(".into(),
            Tok::RParen => ")".into(),
            Tok::Plus => "+".into(),
            Tok::Minus => "-".into(),
            Tok::Not => "NOT".into(),
            Tok::And => "AND".into(),
            Tok::Or => "OR".into(),
            Tok::Field(f) => format!("{f}:"),
            Tok::Word { text, .. } => text.clone(),
            Tok::Phrase(p) => format!("\"{p}\""),
            Tok::Range { lower, upper, .. } => format!("[{lower} TO {upper}]"),
            Tok::Caret(b) => format!("^{b}"),
            Tok::Tilde(_) => "~".into(),
        }
    }
}

const SPECIAL: &[char] = &[
    '(', ')', '[', ']', '{', '}', '"', '^', '~', ':', '\\', '+', '-', '!',
];

fn lex(s: &str) -> Result<Vec<Tok>> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let (tok, next) = match c {
            '(' => (Tok::LParen, i + 1),
            ')' => (Tok::RParen, i + 1),
            '+' | '-' | '!' if at_clause_start(&out) && i + 1 < chars.len() => {
                let tok = match c {
                    '+' => Tok::Plus,
                    '-' => Tok::Minus,
                    _ => Tok::Not,
                };
                (tok, i + 1)
            }
            '&' if chars.get(i + 1) == Some(&'&') => (Tok::And, i + 2),
            '|' if chars.get(i + 1) == Some(&'|') => (Tok::Or, i + 2),
            '"' => lex_phrase(s, &chars, i)?,
            '[' | '{' => lex_range(s, &chars, i)?,
            '^' => lex_boost(s, &chars, i)?,
            '~' => {
                let (num, j) = read_number(&chars, i + 1);
                (Tok::Tilde(num), j)
            }
            ']' | '}' | ':' => {
                return err(format!("Cannot parse '{s}': Encountered \"{c}\""));
            }
            _ => lex_word(s, &chars, i)?,
        };
        out.push(tok);
        i = next;
    }
    Ok(out)
}

/// Whether a clause may start after these tokens: only there is a `+`/`-`/`!` an operator.
fn at_clause_start(out: &[Tok]) -> bool {
    matches!(
        out.last(),
        None | Some(
            Tok::LParen
                | Tok::And
                | Tok::Or
                | Tok::Not
                | Tok::Plus
                | Tok::Minus
                | Tok::Word { .. }
                | Tok::Phrase(_)
                | Tok::RParen
                | Tok::Range { .. }
                | Tok::Caret(_)
                | Tok::Tilde(_)
        )
    )
}

/// A quoted phrase opening at `chars[i]`: its text (a backslash escapes the next character)
/// and where the lexer goes on, after the closing quote. `s` is the query, for the message.
fn lex_phrase(s: &str, chars: &[char], i: usize) -> Result<(Tok, usize)> {
    let mut j = i + 1;
    let mut text = String::new();
    loop {
        match chars.get(j) {
            None => {
                return err(format!(
                    "Cannot parse '{s}': Lexical error: unterminated phrase"
                ))
            }
            Some('\\') => {
                if let Some(n) = chars.get(j + 1) {
                    text.push(*n);
                }
                j += 2;
            }
            Some('"') => break,
            Some(ch) => {
                text.push(*ch);
                j += 1;
            }
        }
    }
    Ok((Tok::Phrase(text), j + 1))
}

/// A range opening at `chars[i]` (`[` inclusive, `{` exclusive): `lower TO upper` up to the
/// first `]` or `}`, which says whether the upper bound is included.
fn lex_range(s: &str, chars: &[char], i: usize) -> Result<(Tok, usize)> {
    let close = chars[i + 1..]
        .iter()
        .position(|ch| *ch == ']' || *ch == '}')
        .map(|p| p + i + 1);
    let Some(close) = close else {
        return err(format!(
            "Cannot parse '{s}': Encountered \"<EOF>\" in a range"
        ));
    };
    let inner: String = chars[i + 1..close].iter().collect();
    let parts: Vec<&str> = inner.split_whitespace().collect();
    if parts.len() != 3 || parts[1] != "TO" {
        return err(format!(
            "Cannot parse '{s}': a range must be [lower TO upper]"
        ));
    }
    let tok = Tok::Range {
        lower: unquote(parts[0]),
        upper: unquote(parts[2]),
        incl_lower: chars[i] == '[',
        incl_upper: chars[close] == ']',
    };
    Ok((tok, close + 1))
}

/// A boost at `chars[i]` (`^`): the number after it, which it must have.
fn lex_boost(s: &str, chars: &[char], i: usize) -> Result<(Tok, usize)> {
    let (num, j) = read_number(chars, i + 1);
    let Some(b) = num else {
        return err(format!(
            "Cannot parse '{s}': a boost needs a number after ^"
        ));
    };
    Ok((Tok::Caret(b), j))
}

/// A bare word from `chars[i]` up to whitespace or a special character (`+`, `-` and `!` may be
/// inside it; a backslash escapes the next one): a field name when a `:` follows, else `AND`,
/// `OR`, `NOT` or a term (marked when it holds `*` or `?`).
fn lex_word(s: &str, chars: &[char], i: usize) -> Result<(Tok, usize)> {
    let mut text = String::new();
    let mut wildcard = false;
    let mut j = i;
    while j < chars.len() {
        let ch = chars[j];
        if ch == '\\' {
            match chars.get(j + 1) {
                Some(n) => text.push(*n),
                None => {
                    return err(format!(
                        "Cannot parse '{s}': Lexical error: trailing backslash"
                    ))
                }
            }
            j += 2;
            continue;
        }
        if ch.is_whitespace() || (SPECIAL.contains(&ch) && !(ch == '-' || ch == '+' || ch == '!')) {
            break;
        }
        if ch == '*' || ch == '?' {
            wildcard = true;
        }
        text.push(ch);
        j += 1;
    }
    if chars.get(j) == Some(&':') {
        return Ok((Tok::Field(text), j + 1));
    }
    let tok = match text.as_str() {
        "AND" => Tok::And,
        "OR" => Tok::Or,
        "NOT" => Tok::Not,
        _ => Tok::Word { text, wildcard },
    };
    Ok((tok, j))
}

fn unquote(s: &str) -> String {
    s.strip_prefix('"')
        .and_then(|x| x.strip_suffix('"'))
        .unwrap_or(s)
        .replace('\\', "")
}

fn read_number(chars: &[char], start: usize) -> (Option<f32>, usize) {
    let mut j = start;
    while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == '.') {
        j += 1;
    }
    let s: String = chars[start..j].iter().collect();
    (s.parse().ok(), j)
}

struct Parser {
    tokens: Vec<Tok>,
    pos: usize,
    now: DateTime<Utc>,
    /// Parentheses open at the current position.
    depth: usize,
    /// Clauses parsed so far.
    clauses: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Occur {
    Must,
    Should,
    MustNot,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Conj {
    None,
    And,
    Or,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    /// A sequence of clauses combined as Lucene's classic query parser combines them with
    /// `q.op=AND` (`QueryParserBase.addClause`): not by precedence, but by rewriting the
    /// previous clause at each `AND` / `OR`. So `a OR b NOT c` is `(a OR b) AND NOT c`, and
    /// `a b OR c` requires `a` only.
    fn or_expr(&mut self, field: &str) -> Result<Query> {
        let mut clauses: Vec<(Occur, Query)> = Vec::new();
        loop {
            let conj = match self.peek() {
                None | Some(Tok::RParen) => break,
                Some(Tok::And) => Conj::And,
                Some(Tok::Or) => Conj::Or,
                _ => Conj::None,
            };
            if conj != Conj::None {
                let word = if conj == Conj::And { "AND" } else { "OR" };
                if clauses.is_empty() {
                    return err(format!(
                        "Cannot parse: Encountered \"{word}\" at the start of a clause"
                    ));
                }
                self.pos += 1;
                if matches!(self.peek(), None | Some(Tok::RParen)) {
                    return err(format!("Cannot parse: Encountered \"<EOF>\" after {word}"));
                }
            }
            let (prohibited, q) = self.clause(field)?;
            if let Some(last) = clauses.last_mut() {
                match conj {
                    Conj::And if last.0 != Occur::MustNot => last.0 = Occur::Must,
                    Conj::Or if last.0 != Occur::MustNot => last.0 = Occur::Should,
                    _ => {}
                }
            }
            let occur = if prohibited {
                Occur::MustNot
            } else if conj != Conj::Or {
                Occur::Must
            } else {
                Occur::Should
            };
            clauses.push((occur, q));
        }
        if clauses.is_empty() {
            return err("Cannot parse: Encountered \"<EOF>\", expected a term");
        }
        let mut must = Vec::new();
        let mut should = Vec::new();
        let mut must_not = Vec::new();
        for (o, q) in clauses {
            match o {
                Occur::Must => must.push(q),
                Occur::Should => should.push(q),
                Occur::MustNot => must_not.push(q),
            }
        }
        let min_should = usize::from(must.is_empty() && !should.is_empty());
        Ok(Query::Bool {
            must,
            should,
            must_not,
            min_should,
        })
    }

    /// One clause with its modifier: returns whether it is prohibited (`-`, `!`, `NOT`).
    fn clause(&mut self, field: &str) -> Result<(bool, Query)> {
        self.clauses += 1;
        if self.clauses > MAX_CLAUSES {
            return too_many_clauses();
        }
        let prohibited = match self.peek() {
            Some(Tok::Plus) => {
                self.pos += 1;
                false
            }
            Some(Tok::Minus) | Some(Tok::Not) => {
                self.pos += 1;
                true
            }
            _ => false,
        };
        let mut field = field.to_string();
        if let Some(Tok::Field(f)) = self.peek() {
            field = f.clone();
            self.pos += 1;
        }
        let q = self.atom(&field)?;
        let q = self.modifiers(q)?;
        Ok((prohibited, q))
    }

    fn modifiers(&mut self, mut q: Query) -> Result<Query> {
        loop {
            match self.peek() {
                Some(Tok::Caret(b)) => {
                    let b = *b;
                    self.pos += 1;
                    // `x^2^3` is one boost of 6, not a tower of nested boosts.
                    q = match q {
                        Query::Boost { query, boost } => Query::Boost {
                            query,
                            boost: boost * b,
                        },
                        other => Query::Boost {
                            query: Box::new(other),
                            boost: b,
                        },
                    };
                }
                Some(Tok::Tilde(n)) => {
                    let n = *n;
                    self.pos += 1;
                    q = match q {
                        Query::Phrase { field, value, .. } => Query::Phrase {
                            field,
                            value,
                            slop: n.unwrap_or(0.0) as u32,
                        },
                        Query::Term { field, value } => Query::Fuzzy {
                            field,
                            value,
                            // Lucene: `~` alone is distance 2; fractions are the legacy similarity.
                            distance: match n {
                                Some(d) if d >= 1.0 => d.min(2.0) as u8,
                                Some(d) if d > 0.0 => 1,
                                _ => 2,
                            },
                        },
                        other => other,
                    };
                }
                _ => return Ok(q),
            }
        }
    }

    fn atom(&mut self, field: &str) -> Result<Query> {
        match self.next() {
            Some(Tok::LParen) => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return too_complex(format!(
                        "the query nests parentheses more than {MAX_DEPTH} levels deep"
                    ));
                }
                let q = self.or_expr(field)?;
                if self.next() != Some(Tok::RParen) {
                    return err("Cannot parse: Encountered \"<EOF>\", expected \")\"");
                }
                self.depth -= 1;
                Ok(q)
            }
            Some(Tok::Phrase(p)) if kind(field) == FieldKind::Date => self.word(field, p, false),
            Some(Tok::Phrase(p)) => Ok(Query::Phrase {
                field: field.into(),
                value: p,
                slop: 0,
            }),
            Some(Tok::Range {
                lower,
                upper,
                incl_lower,
                incl_upper,
            }) => {
                let lo = self.range_end(field, &lower, incl_lower, false)?;
                let hi = self.range_end(field, &upper, incl_upper, true)?;
                if matches!((&lo, &hi), (Bound::Unbounded, Bound::Unbounded)) {
                    return Ok(Query::Exists {
                        field: field.into(),
                    });
                }
                Ok(Query::Range {
                    field: field.into(),
                    lower: lo,
                    upper: hi,
                })
            }
            Some(Tok::Word { text, wildcard }) => self.word(field, text, wildcard),
            Some(t) => err(format!("Cannot parse: Encountered \"{}\"", t.describe())),
            None => err("Cannot parse: Encountered \"<EOF>\", expected a term"),
        }
    }

    fn word(&mut self, field: &str, text: String, wildcard: bool) -> Result<Query> {
        if text == "*" && (field == "*" || field == DEFAULT_FIELD) && wildcard {
            return Ok(if field == "*" {
                Query::All
            } else {
                Query::Exists {
                    field: field.into(),
                }
            });
        }
        if field == "*" {
            return err("Cannot parse: a field name of '*' only works in '*:*'");
        }
        if wildcard {
            if text == "*" {
                return Ok(Query::Exists {
                    field: field.into(),
                });
            }
            return Ok(Query::Wildcard {
                field: field.into(),
                pattern: text,
            });
        }
        if kind(field) == FieldKind::Date {
            // A date term matches that instant exactly.
            let d = parse_date_math(&text, self.now, false)
                .ok_or_else(|| QueryError::Syntax(format!("Invalid Date String:'{text}'")))?;
            return Ok(Query::Range {
                field: field.into(),
                lower: Bound::Included(RangeValue::Date(d)),
                upper: Bound::Included(RangeValue::Date(d)),
            });
        }
        Ok(Query::Term {
            field: field.into(),
            value: text,
        })
    }

    fn range_end(
        &self,
        field: &str,
        v: &str,
        inclusive: bool,
        upper: bool,
    ) -> Result<Bound<RangeValue>> {
        if v == "*" {
            return Ok(Bound::Unbounded);
        }
        let value = if kind(field) == FieldKind::Date {
            RangeValue::Date(
                parse_date_math(v, self.now, upper)
                    .ok_or_else(|| QueryError::Syntax(format!("Invalid Date String:'{v}'")))?,
            )
        } else {
            RangeValue::Str(v.to_string())
        };
        Ok(if inclusive {
            Bound::Included(value)
        } else {
            Bound::Excluded(value)
        })
    }
}

/// Flattens single-clause booleans so backends see the smallest tree.
fn simplify(q: Query) -> Query {
    match q {
        Query::Bool {
            must,
            should,
            must_not,
            min_should,
        } => {
            let must: Vec<Query> = must.into_iter().map(simplify).collect();
            let should: Vec<Query> = should.into_iter().map(simplify).collect();
            let must_not: Vec<Query> = must_not.into_iter().map(simplify).collect();
            if must.len() == 1 && should.is_empty() && must_not.is_empty() {
                return must.into_iter().next().expect("one");
            }
            if should.len() == 1 && must.is_empty() && must_not.is_empty() {
                return should.into_iter().next().expect("one");
            }
            Query::Bool {
                must,
                should,
                must_not,
                min_should,
            }
        }
        Query::Boost { query, boost } => Query::Boost {
            query: Box::new(simplify(*query)),
            boost,
        },
        other => other,
    }
}

/// Solr's date syntax with date math: `NOW`, `NOW-1DAY`, `NOW/DAY+1MONTH`,
/// `2024-01-01T00:00:00Z`, `2024-01-01T00:00:00Z-1YEAR`, and the plain `2024-01-01` CKAN
/// users also type. `upper` is unused for exact instants and kept for symmetry with Solr,
/// which rounds nothing implicitly either.
pub fn parse_date_math(s: &str, now: DateTime<Utc>, _upper: bool) -> Option<DateTime<Utc>> {
    let (mut t, rest) = if let Some(rest) = s.strip_prefix("NOW") {
        (now, rest)
    } else {
        // The date part ends where math starts: a `+`/`/` or a `-` after the time.
        let split = date_part_len(s);
        (parse_instant(&s[..split])?, &s[split..])
    };
    let mut chars = rest.chars().peekable();
    while let Some(op) = chars.next() {
        let mut num = String::new();
        while let Some(c) = chars.peek().copied().filter(char::is_ascii_digit) {
            num.push(c);
            chars.next();
        }
        let mut unit = String::new();
        while let Some(c) = chars.peek().copied().filter(char::is_ascii_alphabetic) {
            unit.push(c);
            chars.next();
        }
        let unit = unit.trim_end_matches('S');
        match op {
            '/' => {
                if !num.is_empty() {
                    return None;
                }
                t = round_down(t, unit)?;
            }
            '+' | '-' => {
                let n: i64 = num.parse().ok()?;
                let n = if op == '-' { -n } else { n };
                t = add(t, n, unit)?;
            }
            _ => return None,
        }
    }
    Some(t)
}

fn date_part_len(s: &str) -> usize {
    // `YYYY-MM-DD` contains dashes; math can only start after the 10th character.
    let b = s.as_bytes();
    for i in 10.min(b.len())..b.len() {
        if b[i] == b'+' || b[i] == b'/' || (b[i] == b'-' && i > 10 && b[i - 1] == b'Z') {
            return i;
        }
    }
    s.len()
}

/// Parses an instant as Solr accepts it (`…Z`), or CKAN's own stored forms (no zone, date only).
pub fn parse_instant(s: &str) -> Option<DateTime<Utc>> {
    if let Ok(d) = DateTime::parse_from_rfc3339(s) {
        return Some(d.with_timezone(&Utc));
    }
    let s2 = s.trim_end_matches('Z');
    if let Some(n) = catalog_store::time::parse_iso(s2) {
        return Some(Utc.from_utc_datetime(&n));
    }
    NaiveDate::parse_from_str(s2, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|n| Utc.from_utc_datetime(&n))
}

fn round_down(t: DateTime<Utc>, unit: &str) -> Option<DateTime<Utc>> {
    let d = t.date_naive();
    let n = match unit {
        "YEAR" => d.with_day(1)?.with_month(1)?.and_hms_opt(0, 0, 0)?,
        "MONTH" => d.with_day(1)?.and_hms_opt(0, 0, 0)?,
        "DAY" | "DATE" => d.and_hms_opt(0, 0, 0)?,
        "HOUR" => d.and_hms_opt(t.hour(), 0, 0)?,
        "MINUTE" => d.and_hms_opt(t.hour(), t.minute(), 0)?,
        "SECOND" => d.and_hms_opt(t.hour(), t.minute(), t.second())?,
        "MILLI" | "MILLISECOND" => return Some(t),
        _ => return None,
    };
    Some(Utc.from_utc_datetime(&n))
}

fn add(t: DateTime<Utc>, n: i64, unit: &str) -> Option<DateTime<Utc>> {
    Some(match unit {
        "YEAR" => add_months(t, n.checked_mul(12)?)?,
        "MONTH" => add_months(t, n)?,
        "DAY" | "DATE" => t.checked_add_signed(Duration::try_days(n)?)?,
        "HOUR" => t.checked_add_signed(Duration::try_hours(n)?)?,
        "MINUTE" => t.checked_add_signed(Duration::try_minutes(n)?)?,
        "SECOND" => t.checked_add_signed(Duration::try_seconds(n)?)?,
        "MILLI" | "MILLISECOND" => t.checked_add_signed(Duration::try_milliseconds(n)?)?,
        _ => return None,
    })
}

fn add_months(t: DateTime<Utc>, n: i64) -> Option<DateTime<Utc>> {
    let months = chrono::Months::new(u32::try_from(n.unsigned_abs()).ok()?);
    if n >= 0 {
        t.checked_add_months(months)
    } else {
        t.checked_sub_months(months)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 5, 17, 10, 30, 0).unwrap()
    }

    fn lucene(s: &str) -> Query {
        parse_lucene(s, now()).unwrap()
    }

    #[test]
    fn all_and_empty() {
        assert_eq!(parse_q("", now()).unwrap(), Query::All);
        assert_eq!(parse_q("*:*", now()).unwrap(), Query::All);
        assert_eq!(parse_q("\"\"", now()).unwrap(), Query::All);
    }

    #[test]
    fn fielded_and_default_and() {
        assert_eq!(
            lucene("tags:economy res_format:CSV"),
            Query::and(vec![
                Query::term("tags", "economy"),
                Query::term("res_format", "CSV")
            ])
        );
        assert_eq!(
            lucene("organization:a OR organization:b"),
            Query::or(vec![
                Query::term("organization", "a"),
                Query::term("organization", "b")
            ])
        );
    }

    #[test]
    fn negation_and_groups() {
        let q = lucene("-groups:x");
        assert_eq!(
            q,
            Query::Bool {
                must: vec![],
                should: vec![],
                must_not: vec![Query::term("groups", "x")],
                min_should: 0
            }
        );
        let q = lucene("tags:(a OR b) AND NOT state:draft");
        assert_eq!(
            q,
            Query::Bool {
                must: vec![Query::or(vec![
                    Query::term("tags", "a"),
                    Query::term("tags", "b")
                ])],
                should: vec![],
                must_not: vec![Query::term("state", "draft")],
                min_should: 0
            }
        );
        // CKAN's own filter shape.
        let q = lucene("+capacity:public +state:(active OR draft)");
        assert!(matches!(q, Query::Bool { ref must, .. } if must.len() == 2));
    }

    #[test]
    fn mixed_and_or_follow_lucene_not_precedence() {
        let (a, b, c) = (
            Query::term("text", "a"),
            Query::term("text", "b"),
            Query::term("text", "c"),
        );
        assert_eq!(
            lucene("a OR b NOT c"),
            Query::Bool {
                must: vec![],
                should: vec![a.clone(), b.clone()],
                must_not: vec![c.clone()],
                min_should: 1
            }
        );
        assert_eq!(
            lucene("a b OR c"),
            Query::Bool {
                must: vec![a.clone()],
                should: vec![b.clone(), c.clone()],
                must_not: vec![],
                min_should: 0
            }
        );
        assert_eq!(
            lucene("a AND b OR c"),
            Query::Bool {
                must: vec![a],
                should: vec![b, c],
                must_not: vec![],
                min_should: 0
            }
        );
    }

    #[test]
    fn ranges_and_date_math() {
        let q = lucene("metadata_modified:[2024-01-01T00:00:00Z TO *]");
        assert_eq!(
            q,
            Query::Range {
                field: "metadata_modified".into(),
                lower: Bound::Included(RangeValue::Date(
                    Utc.with_ymd_and_hms(2024, 1, 1, 0, 0, 0).unwrap()
                )),
                upper: Bound::Unbounded
            }
        );
        let q = lucene("metadata_created:{NOW-1DAY TO NOW/DAY]");
        assert_eq!(
            q,
            Query::Range {
                field: "metadata_created".into(),
                lower: Bound::Excluded(RangeValue::Date(
                    Utc.with_ymd_and_hms(2024, 5, 16, 10, 30, 0).unwrap()
                )),
                upper: Bound::Included(RangeValue::Date(
                    Utc.with_ymd_and_hms(2024, 5, 17, 0, 0, 0).unwrap()
                ))
            }
        );
        assert_eq!(
            parse_date_math("2024-01-31T00:00:00Z+1MONTH", now(), false),
            Some(Utc.with_ymd_and_hms(2024, 2, 29, 0, 0, 0).unwrap())
        );
        assert_eq!(
            parse_date_math("NOW-1YEAR/YEAR", now(), false),
            Some(Utc.with_ymd_and_hms(2023, 1, 1, 0, 0, 0).unwrap())
        );
        assert!(parse_lucene("metadata_modified:[yesterday TO *]", now()).is_err());
        assert_eq!(
            lucene("num_resources:[1 TO 3]"),
            Query::Range {
                field: "num_resources".into(),
                lower: Bound::Included(RangeValue::Str("1".into())),
                upper: Bound::Included(RangeValue::Str("3".into()))
            }
        );
    }

    #[test]
    fn phrases_wildcards_boosts_fuzzy_escapes() {
        assert_eq!(
            lucene("title:\"air quality\"~2"),
            Query::Phrase {
                field: "title".into(),
                value: "air quality".into(),
                slop: 2
            }
        );
        assert_eq!(
            lucene("name:water*"),
            Query::Wildcard {
                field: "name".into(),
                pattern: "water*".into()
            }
        );
        assert_eq!(
            lucene("extras_theme:*"),
            Query::Exists {
                field: "extras_theme".into()
            }
        );
        assert_eq!(
            lucene("title:water^4"),
            Query::Boost {
                query: Box::new(Query::term("title", "water")),
                boost: 4.0
            }
        );
        assert_eq!(
            lucene("title:watr~1"),
            Query::Fuzzy {
                field: "title".into(),
                value: "watr".into(),
                distance: 1
            }
        );
        assert_eq!(lucene("url:http\\://x"), Query::term("url", "http://x"));
        assert_eq!(lucene("name:my-dataset"), Query::term("name", "my-dataset"));
    }

    #[test]
    fn syntax_errors() {
        for bad in [
            "title:(water",
            "title:\"open",
            "AND title:x",
            "title:x AND",
            "title:[a b]",
            "title:]",
            "(",
            "name:",
        ] {
            assert!(parse_lucene(bad, now()).is_err(), "{bad} should fail");
        }
    }

    #[test]
    fn nesting_clauses_and_length_are_bounded() {
        let nested = |n: usize| format!("{}name:x{}", "(".repeat(n), ")".repeat(n));
        assert!(parse_lucene(&nested(MAX_DEPTH), now()).is_ok());
        for q in [nested(MAX_DEPTH + 1), nested(100_000)] {
            assert!(matches!(
                parse_lucene(&q, now()),
                Err(QueryError::TooComplex(_))
            ));
            assert!(matches!(parse_q(&q, now()), Err(QueryError::TooComplex(_))));
        }
        // Unbalanced deep nesting is refused by the same bound, before it can recurse.
        let open_only = "(".repeat(10_000) + "name:x";
        assert!(matches!(
            parse_lucene(&open_only, now()),
            Err(QueryError::TooComplex(_))
        ));
        // Stacked boosts fold into one instead of nesting.
        let boosts = format!("name:x{}", "^2".repeat(10_000));
        let Query::Boost { query, boost } = parse_lucene(&boosts, now()).unwrap() else {
            panic!("one boost")
        };
        assert_eq!(*query, Query::term("name", "x"));
        assert!(boost.is_infinite());
        let many = vec!["name:x"; MAX_CLAUSES + 1].join(" OR ");
        assert!(matches!(
            parse_lucene(&many, now()),
            Err(QueryError::TooComplex(_))
        ));
        let ok = vec!["name:x"; MAX_CLAUSES].join(" OR ");
        assert!(parse_lucene(&ok, now()).is_ok());
        let words = vec!["w"; MAX_CLAUSES].join(" ");
        assert!(matches!(
            parse_q(&words, now()),
            Err(QueryError::TooComplex(_))
        ));
        let long = "a".repeat(MAX_QUERY_CHARS + 1);
        assert!(matches!(
            parse_q(&long, now()),
            Err(QueryError::TooComplex(_))
        ));
    }

    #[test]
    fn dismax_mm_and_modifiers() {
        let q = parse_q("water quality -air", now()).unwrap();
        let Query::Bool {
            must,
            should,
            must_not,
            min_should,
        } = q
        else {
            panic!("bool")
        };
        assert!(must.is_empty());
        assert_eq!(should.len(), 2);
        assert_eq!(must_not.len(), 1);
        assert_eq!(min_should, 2);
        assert_eq!(mm(4), 3);
        assert_eq!(mm(10), 8);
    }
}

#[cfg(test)]
mod proptests {
    //! Property tests: the parser never panics or recurses without bound, whatever the input,
    //! and what it accepts it reads back as written.
    use super::*;
    use proptest::prelude::*;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 6, 15, 12, 0, 0).unwrap()
    }

    /// Nesting depth of a parsed tree.
    fn depth(q: &Query) -> usize {
        match q {
            Query::Bool {
                must,
                should,
                must_not,
                ..
            } => {
                1 + must
                    .iter()
                    .chain(should)
                    .chain(must_not)
                    .map(depth)
                    .max()
                    .unwrap_or(0)
            }
            Query::Boost { query, .. } => 1 + depth(query),
            _ => 1,
        }
    }

    /// Query text made of the language's own pieces, so that most inputs reach deep into the
    /// parser rather than failing in the lexer.
    fn token() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("(".to_string()),
            Just(")".to_string()),
            Just(" AND ".to_string()),
            Just(" OR ".to_string()),
            Just(" NOT ".to_string()),
            Just(" ".to_string()),
            Just("-".to_string()),
            Just("+".to_string()),
            Just("!".to_string()),
            Just("\"".to_string()),
            Just("^2".to_string()),
            Just("~".to_string()),
            Just("~1".to_string()),
            Just("*".to_string()),
            Just("\\".to_string()),
            Just("[a TO b]".to_string()),
            Just("{* TO NOW-1DAY}".to_string()),
            Just("name:".to_string()),
            Just("tags:".to_string()),
            Just("metadata_modified:".to_string()),
            "[a-z]{1,6}",
            "\\PC{1,3}",
        ]
    }

    /// A small tree of fielded terms, printed with explicit parentheses.
    fn tree() -> impl Strategy<Value = (String, usize)> {
        let leaf = ("[a-z]{1,8}", prop_oneof![Just("name"), Just("tags")])
            .prop_map(|(v, f)| (format!("{f}:{v}"), 1usize));
        leaf.prop_recursive(6, 64, 4, |inner| {
            (
                prop::collection::vec(inner, 1..4),
                prop_oneof![Just(" AND "), Just(" OR ")],
            )
                .prop_map(|(kids, op)| {
                    let n = kids.iter().map(|k| k.1).sum();
                    let text = kids
                        .into_iter()
                        .map(|k| format!("({})", k.0))
                        .collect::<Vec<_>>()
                        .join(op);
                    (text, n)
                })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn any_input_parses_or_fails_within_the_bounds(
            parts in prop::collection::vec(token(), 0..200)
        ) {
            let s: String = parts.concat();
            for q in [parse_lucene(&s, now()), parse_q(&s, now())].into_iter().flatten() {
                prop_assert!(depth(&q) <= 2 * MAX_DEPTH + 2, "depth {} for {s:?}", depth(&q));
                let mut fields = Vec::new();
                q.fields(&mut fields);
                prop_assert!(fields.len() <= MAX_CLAUSES * DEFAULT_QF.len());
            }
        }

        #[test]
        fn nesting_is_accepted_up_to_the_bound_only(n in 0usize..200) {
            let q = format!("{}tags:x{}", "(".repeat(n), ")".repeat(n));
            match parse_lucene(&q, now()) {
                Ok(parsed) => {
                    prop_assert!(n <= MAX_DEPTH);
                    prop_assert_eq!(parsed, Query::term("tags", "x"));
                }
                Err(e) => {
                    prop_assert!(n > MAX_DEPTH);
                    prop_assert!(matches!(e, QueryError::TooComplex(_)));
                }
            }
        }

        #[test]
        fn fielded_trees_keep_every_term((text, terms) in tree()) {
            let q = parse_lucene(&text, now()).unwrap();
            let mut fields = Vec::new();
            q.fields(&mut fields);
            prop_assert_eq!(fields.len(), terms);
        }
    }
}
