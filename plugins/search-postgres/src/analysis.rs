//! Text analysis, done here rather than by PostgreSQL's text-search configurations, so that it
//! does not depend on the database's locale or installed dictionaries and tokenises as the
//! tantivy backend does: split on non-alphanumeric characters, drop tokens of 100 bytes or
//! more, lower-case, fold to ASCII, and (text fields only) English Snowball stemming.
//!
//! The analysed tokens are stored in one `tsvector` per dataset whose lexemes carry their field
//! name (`title:run`, `text:water`), so one GIN index serves every text field, dynamic ones
//! (`extras_*`, `res_extras_*`) included.

use std::collections::BTreeMap;

use catalog_framework::search::fields::FieldKind;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// Tokens this long or longer are dropped (as tantivy's `RemoveLongFilter::limit(100)`).
const MAX_TOKEN_BYTES: usize = 100;
/// PostgreSQL's largest lexeme is 2 KiB; a field name pushing past this is not indexed.
const MAX_LEXEME_BYTES: usize = 2000;
/// PostgreSQL's largest word position.
const MAX_POSITION: u32 = 16_383;
/// PostgreSQL keeps at most 256 positions per lexeme.
const MAX_POSITIONS_PER_LEXEME: usize = 255;
/// Positions left between two values of one field, so a phrase never spans two values.
const VALUE_GAP: u32 = 10;
/// A tsvector is at most 1 MiB; stop adding lexemes a margin before.
const MAX_TSVECTOR_BYTES: usize = 900_000;

/// Lower-cases, folds and (for text fields) stems the tokens of `text`.
pub fn tokens(kind: FieldKind, text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty() && t.len() < MAX_TOKEN_BYTES)
        .map(|t| normalize(kind, t))
        .collect()
}

/// One token through the filters after the tokenizer.
fn normalize(kind: FieldKind, token: &str) -> String {
    let folded = fold(&token.to_lowercase());
    if kind == FieldKind::Text {
        stemmer().stem(&folded).into_owned()
    } else {
        folded
    }
}

/// Lower-cases and folds a wildcard pattern or range bound: multi-term queries are not
/// stemmed (as in Solr and tantivy).
pub fn normalize_unstemmed(s: &str) -> String {
    fold(&s.to_lowercase())
}

fn stemmer() -> frostem::Stemmer {
    frostem::Stemmer::new(frostem::Algorithm::English)
}

/// Folds letters with diacritics and the common ligatures to ASCII (`é` → `e`, `ß` → `ss`);
/// characters without an ASCII form (Greek, Cyrillic, CJK…) are kept.
pub fn fold(s: &str) -> String {
    if s.is_ascii() {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii() {
            out.push(c);
            continue;
        }
        if let Some(r) = special_fold(c) {
            out.push_str(r);
            continue;
        }
        let decomposed: String = c.nfkd().filter(|d| !is_combining_mark(*d)).collect();
        if decomposed.is_empty() {
            continue;
        }
        out.push_str(&decomposed);
    }
    out
}

/// Letters NFKD leaves alone but ASCII folding maps.
fn special_fold(c: char) -> Option<&'static str> {
    Some(match c {
        'ß' => "ss",
        'ẞ' => "SS",
        'æ' => "ae",
        'Æ' => "AE",
        'œ' => "oe",
        'Œ' => "OE",
        'ø' => "o",
        'Ø' => "O",
        'ł' => "l",
        'Ł' => "L",
        'đ' => "d",
        'Đ' => "D",
        'ð' => "d",
        'Ð' => "D",
        'þ' => "th",
        'Þ' => "TH",
        'ı' => "i",
        'ħ' => "h",
        'Ħ' => "H",
        'ŧ' => "t",
        'Ŧ' => "T",
        'ŀ' => "l",
        'Ŀ' => "L",
        'ŋ' => "n",
        'Ŋ' => "N",
        'ſ' => "s",
        _ => return None,
    })
}

/// The lexeme of a token in a field, `None` when too long to index.
pub fn lexeme(field: &str, token: &str) -> Option<String> {
    let l = format!("{field}:{token}");
    (l.len() <= MAX_LEXEME_BYTES).then_some(l)
}

/// Quotes a lexeme for the `tsvector` / `tsquery` input syntax.
pub fn quote(lexeme: &str) -> String {
    let mut out = String::with_capacity(lexeme.len() + 2);
    out.push('\'');
    for c in lexeme.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            _ => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Builds the text form of a dataset's `tsvector` from its text fields.
#[derive(Default)]
pub struct TsvectorBuilder {
    lexemes: BTreeMap<String, Vec<u32>>,
    next_position: BTreeMap<String, u32>,
    bytes: usize,
}

impl TsvectorBuilder {
    pub fn add(&mut self, field: &str, kind: FieldKind, value: &str) {
        let start = *self.next_position.get(field).unwrap_or(&0);
        let mut pos = start;
        for token in tokens(kind, value) {
            pos = (pos + 1).min(MAX_POSITION);
            let Some(lex) = lexeme(field, &token) else {
                continue;
            };
            match self.lexemes.get_mut(&lex) {
                Some(positions) => {
                    if positions.len() < MAX_POSITIONS_PER_LEXEME && positions.last() != Some(&pos)
                    {
                        positions.push(pos);
                        self.bytes += 2;
                    }
                }
                None => {
                    // Word entry, lexeme, position count and one position (plus alignment).
                    let cost = 4 + lex.len() + 2 + 2 + 1;
                    if self.bytes + cost > MAX_TSVECTOR_BYTES {
                        continue;
                    }
                    self.bytes += cost;
                    self.lexemes.insert(lex, vec![pos]);
                }
            }
        }
        self.next_position
            .insert(field.to_string(), (pos + VALUE_GAP).min(MAX_POSITION));
    }

    /// The `tsvector` input text: `'title:air':1 'title:qualiti':2 …`.
    pub fn finish(self) -> String {
        let mut out = String::new();
        for (lex, positions) in self.lexemes {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&quote(&lex));
            out.push(':');
            for (i, p) in positions.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&p.to_string());
            }
        }
        out
    }
}

/// The `tsquery` of a term or phrase on a text field: its tokens in sequence (`<->`), or all of
/// them anywhere in the field when `adjacent` is false (a sloppy phrase). `None` when the value
/// has no token, which matches nothing.
pub fn phrase_query(field: &str, kind: FieldKind, value: &str, adjacent: bool) -> Option<String> {
    let lexemes: Vec<String> = tokens(kind, value)
        .iter()
        .filter_map(|t| lexeme(field, t))
        .map(|l| quote(&l))
        .collect();
    if lexemes.is_empty() {
        return None;
    }
    Some(lexemes.join(if adjacent { " <-> " } else { " & " }))
}

/// The `tsquery` of a prefix on a text field (`'title:wat':*`).
pub fn prefix_query(field: &str, prefix: &str) -> Option<String> {
    lexeme(field, prefix).map(|l| format!("{}:*", quote(&l)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenises_folds_and_stems() {
        assert_eq!(
            tokens(FieldKind::Text, "Running runs, RUN!"),
            ["run", "run", "run"]
        );
        assert_eq!(
            tokens(FieldKind::TextGeneral, "Running Café-Straße"),
            ["running", "cafe", "strasse"]
        );
        assert_eq!(
            tokens(FieldKind::Text, "http://x.org/a.csv"),
            ["http", "x", "org", "a", "csv"]
        );
        assert_eq!(tokens(FieldKind::Text, "Quality"), ["qualiti"]);
        assert!(tokens(FieldKind::Text, " -- ").is_empty());
        assert_eq!(tokens(FieldKind::Text, "Ελλάδα"), ["ελλαδα"]);
    }

    #[test]
    fn quotes_for_tsvector_input() {
        assert_eq!(quote("a'b\\c"), "'a''b\\\\c'");
    }

    #[test]
    fn builds_field_prefixed_tsvector_with_gaps_between_values() {
        let mut b = TsvectorBuilder::default();
        b.add("title", FieldKind::Text, "Air Quality");
        b.add("res_name", FieldKind::TextGeneral, "air data");
        b.add("res_name", FieldKind::TextGeneral, "more");
        assert_eq!(
            b.finish(),
            "'res_name:air':1 'res_name:data':2 'res_name:more':13 'title:air':1 'title:qualiti':2"
        );
    }

    #[test]
    fn queries() {
        assert_eq!(
            phrase_query("title", FieldKind::Text, "air quality", true).as_deref(),
            Some("'title:air' <-> 'title:qualiti'")
        );
        assert_eq!(
            phrase_query("title", FieldKind::Text, "air quality", false).as_deref(),
            Some("'title:air' & 'title:qualiti'")
        );
        assert_eq!(phrase_query("title", FieldKind::Text, "--", true), None);
        assert_eq!(
            prefix_query("title", "wat").as_deref(),
            Some("'title:wat':*")
        );
    }
}
