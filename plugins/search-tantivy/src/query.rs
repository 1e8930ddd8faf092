//! Translates the framework's query AST into tantivy queries, and the error of a query the
//! engine fails on.

use std::ops::Bound;

use catalog_framework::error::search_error;
use catalog_framework::prelude::*;
use catalog_framework::search::fields::{kind, FieldKind};
use catalog_framework::search::Query;
use catalog_framework::search::RangeValue;
use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, EmptyQuery, FuzzyTermQuery, Occur, PhraseQuery,
    Query as TQuery, RangeQuery, RegexQuery, TermQuery,
};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::Term;

use crate::schema::{en_analyzer, general_analyzer, Fields};

pub(crate) struct Builder<'a> {
    f: &'a Fields,
}

type Boxed = Box<dyn TQuery>;

impl<'a> Builder<'a> {
    pub(crate) fn new(f: &'a Fields) -> Builder<'a> {
        Builder { f }
    }

    pub(crate) fn build(&self, q: &Query) -> CkanResult<Boxed> {
        Ok(match q {
            Query::All => Box::new(AllQuery),
            Query::Term { field, value } => self.term(field, value, 0)?,
            Query::Phrase { field, value, slop } => self.term(field, value, *slop)?,
            Query::Wildcard { field, pattern } => self.wildcard(field, pattern)?,
            Query::Fuzzy {
                field,
                value,
                distance,
            } => self.fuzzy(field, value, *distance),
            Query::Exists { field } => Box::new(TermQuery::new(
                Term::from_field_text(self.f.present, field),
                IndexRecordOption::Basic,
            )),
            Query::Range {
                field,
                lower,
                upper,
            } => self.range(field, lower, upper),
            Query::Bool {
                must,
                should,
                must_not,
                min_should,
            } => {
                let mut clauses: Vec<(Occur, Boxed)> = Vec::new();
                for m in must {
                    clauses.push((Occur::Must, self.build(m)?));
                }
                for s in should {
                    clauses.push((Occur::Should, self.build(s)?));
                }
                for n in must_not {
                    clauses.push((Occur::MustNot, self.build(n)?));
                }
                if must.is_empty() && should.is_empty() {
                    // A purely negative query matches everything but its clauses.
                    clauses.push((Occur::Must, Box::new(AllQuery)));
                }
                if *min_should > 0 {
                    Box::new(BooleanQuery::with_minimum_required_clauses(
                        clauses,
                        *min_should,
                    ))
                } else {
                    Box::new(BooleanQuery::new(clauses))
                }
            }
            Query::Boost { query, boost } => Box::new(BoostQuery::new(self.build(query)?, *boost)),
        })
    }

    fn target(&self, field: &str) -> (Field, Option<TextAnalyzer>) {
        match kind(field) {
            FieldKind::Text => (self.f.t, Some(en_analyzer())),
            FieldKind::TextGeneral => (self.f.g, Some(general_analyzer())),
            FieldKind::String | FieldKind::Date => (self.f.s, None),
        }
    }

    fn json_term(&self, json: Field, path: &str, value: &str) -> Term {
        let mut t = Term::from_field_json_path(json, path, false);
        t.append_type_and_str(value);
        t
    }

    /// A term or phrase. String fields match the whole value exactly; text fields analyse it
    /// and match its tokens in sequence.
    fn term(&self, field: &str, value: &str, slop: u32) -> CkanResult<Boxed> {
        let (json, analyzer) = self.target(field);
        let Some(mut analyzer) = analyzer else {
            return Ok(Box::new(TermQuery::new(
                self.json_term(json, field, value),
                IndexRecordOption::Basic,
            )));
        };
        let mut terms = Vec::new();
        let mut stream = analyzer.token_stream(value);
        while let Some(tok) = stream.next() {
            terms.push((tok.position, self.json_term(json, field, &tok.text)));
        }
        Ok(match terms.len() {
            0 => Box::new(EmptyQuery),
            1 => Box::new(TermQuery::new(
                terms.pop().expect("one").1,
                IndexRecordOption::WithFreqs,
            )),
            _ => {
                let mut p = PhraseQuery::new_with_offset(terms);
                p.set_slop(slop);
                Box::new(p)
            }
        })
    }

    fn wildcard(&self, field: &str, pattern: &str) -> CkanResult<Boxed> {
        let (json, analyzer) = self.target(field);
        // Text fields hold lower-cased tokens: match the pattern against them.
        let pattern = if analyzer.is_some() {
            pattern.to_lowercase()
        } else {
            pattern.to_string()
        };
        let mut re = String::new();
        for c in pattern.chars() {
            match c {
                '*' => re.push_str(".*"),
                '?' => re.push('.'),
                c => re.push_str(&regex::escape(&c.to_string())),
            }
        }
        // JSON terms are `path \0 type value`; the regex runs over those bytes.
        let full = format!("{}\\x00s{}", regex::escape(field), re);
        let q = RegexQuery::from_pattern(&full, json).map_err(engine_error)?;
        Ok(Box::new(q))
    }

    fn fuzzy(&self, field: &str, value: &str, distance: u8) -> Boxed {
        let (json, analyzer) = self.target(field);
        let v = if analyzer.is_some() {
            value.to_lowercase()
        } else {
            value.to_string()
        };
        Box::new(FuzzyTermQuery::new(
            self.json_term(json, field, &v),
            distance,
            true,
        ))
    }

    fn range(&self, field: &str, lower: &Bound<RangeValue>, upper: &Bound<RangeValue>) -> Boxed {
        let to_term = |v: &RangeValue| -> Term {
            match v {
                RangeValue::Date(d) => {
                    let dt = crate::schema::tantivy_date(d.timestamp_micros());
                    // `from_field_date`, not `from_field_date_for_search`: the latter cuts to
                    // whole seconds (the inverted index's precision), but ranges run on the
                    // microsecond fast fields, and NOW must include this second's writes.
                    match field {
                        "metadata_modified" => Term::from_field_date(self.f.modified, dt),
                        "metadata_created" => Term::from_field_date(self.f.created, dt),
                        _ => {
                            let mut t = Term::from_field_json_path(self.f.d, field, false);
                            t.append_type_and_fast_value(dt);
                            t
                        }
                    }
                }
                RangeValue::Str(s) => {
                    let (json, analyzer) = self.target(field);
                    let v = if analyzer.is_some() {
                        s.to_lowercase()
                    } else {
                        s.clone()
                    };
                    self.json_term(json, field, &v)
                }
            }
        };
        let map = |b: &Bound<RangeValue>| match b {
            Bound::Included(v) => Bound::Included(to_term(v)),
            Bound::Excluded(v) => Bound::Excluded(to_term(v)),
            Bound::Unbounded => Bound::Unbounded,
        };
        let (lo, hi) = (map(lower), map(upper));
        if matches!((&lo, &hi), (Bound::Unbounded, Bound::Unbounded)) {
            return Box::new(AllQuery);
        }
        // A half-open range needs the other end's field and path: tantivy takes them from
        // whichever bound is given.
        Box::new(RangeQuery::new(lo, hi))
    }
}

/// A failure inside tantivy, as CKAN reports a failing search engine.
pub(crate) fn engine_error(e: impl std::fmt::Display) -> CkanError {
    search_error(format!(
        "Search engine returned an error running query: {e}"
    ))
}
