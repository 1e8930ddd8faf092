//! The index's schema (the document layout in the crate doc), CKAN's two analyses, and a
//! dataset's document.

use std::collections::BTreeMap;

use catalog_framework::search::fields::{kind, FieldKind, SORTABLE};
use catalog_framework::search::IndexDocument;
use tantivy::schema::{
    DateOptions, DateTimePrecision, Field, IndexRecordOption, JsonObjectOptions, OwnedValue,
    Schema, TextFieldIndexing, TextOptions, FAST, STORED, STRING,
};
use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer,
    TextAnalyzer,
};
use tantivy::{DateTime, TantivyDocument};

/// The fields of the schema.
#[derive(Clone, Copy)]
pub(crate) struct Fields {
    pub id: Field,
    pub data: Field,
    pub mm_raw: Field,
    pub s: Field,
    pub t: Field,
    pub g: Field,
    pub d: Field,
    pub o: Field,
    pub present: Field,
    pub modified: Field,
    pub created: Field,
}

pub(crate) const EN: &str = "catalog_en";
pub(crate) const GENERAL: &str = "catalog_general";

pub(crate) fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text_json = |tokenizer: &str| {
        JsonObjectOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(tokenizer)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
    };
    let date = DateOptions::default()
        .set_indexed()
        .set_fast()
        .set_precision(DateTimePrecision::Microseconds);
    let f = Fields {
        id: b.add_text_field("id", STRING | STORED | FAST),
        data: b.add_text_field("data", TextOptions::default().set_stored()),
        mm_raw: b.add_text_field("mm_raw", TextOptions::default().set_fast("raw")),
        s: b.add_json_field(
            "s",
            JsonObjectOptions::default()
                .set_indexing_options(
                    TextFieldIndexing::default()
                        .set_tokenizer("raw")
                        .set_index_option(IndexRecordOption::Basic),
                )
                .set_fast("raw"),
        ),
        t: b.add_json_field("t", text_json(EN)),
        g: b.add_json_field("g", text_json(GENERAL)),
        d: b.add_json_field(
            "d",
            JsonObjectOptions::default()
                .set_indexing_options(TextFieldIndexing::default())
                .set_fast("raw"),
        ),
        o: b.add_json_field("o", JsonObjectOptions::default().set_fast("raw")),
        present: b.add_text_field("present", STRING),
        modified: b.add_date_field("metadata_modified", date.clone()),
        created: b.add_date_field("metadata_created", date),
    };
    (b.build(), f)
}

/// CKAN's `text` analysis (less word-delimiter splitting and synonyms).
pub(crate) fn en_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(100))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .filter(Stemmer::new(Language::English))
        .build()
}

/// CKAN's `text_general` analysis.
pub(crate) fn general_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(100))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .build()
}

pub(crate) fn to_doc(f: &Fields, d: &IndexDocument) -> TantivyDocument {
    let mut doc = TantivyDocument::new();
    doc.add_text(f.id, &d.id);
    doc.add_text(f.data, &d.data);
    doc.add_text(f.mm_raw, &d.metadata_modified);
    let mut s: BTreeMap<String, Vec<OwnedValue>> = BTreeMap::new();
    let mut t: BTreeMap<String, Vec<OwnedValue>> = BTreeMap::new();
    let mut g: BTreeMap<String, Vec<OwnedValue>> = BTreeMap::new();
    let mut dates: BTreeMap<String, Vec<OwnedValue>> = BTreeMap::new();
    let mut present: Vec<&str> = Vec::new();
    // Each value once per field, in first-seen order: a set, not a scan of the list (a
    // dataset may carry thousands of tags).
    let mut seen: std::collections::HashSet<(&str, &str)> = std::collections::HashSet::new();
    for (field, value) in &d.fields {
        let target = match kind(field) {
            FieldKind::String => &mut s,
            FieldKind::Text => &mut t,
            FieldKind::TextGeneral => &mut g,
            FieldKind::Date => continue,
        };
        if seen.insert((field, value)) {
            target
                .entry(field.clone())
                .or_default()
                .push(OwnedValue::Str(value.clone()));
        }
        present.push(field);
    }
    for (field, at) in &d.dates {
        let dt = tantivy_date(at.timestamp_micros());
        match field.as_str() {
            "metadata_modified" => doc.add_date(f.modified, dt),
            "metadata_created" => doc.add_date(f.created, dt),
            _ => dates
                .entry(field.clone())
                .or_default()
                .push(OwnedValue::Date(dt)),
        }
        present.push(field);
    }
    present.sort_unstable();
    present.dedup();
    for p in present {
        doc.add_text(f.present, p);
    }
    let obj = |m: BTreeMap<String, Vec<OwnedValue>>| -> BTreeMap<String, OwnedValue> {
        m.into_iter()
            .map(|(k, mut v)| {
                let v = if v.len() == 1 {
                    v.pop().expect("one")
                } else {
                    OwnedValue::Array(v)
                };
                (k, v)
            })
            .collect()
    };
    doc.add_object(f.s, obj(s));
    doc.add_object(f.t, obj(t));
    doc.add_object(f.g, obj(g));
    doc.add_object(f.d, obj(dates));
    // Every sortable string, always present, so each segment has the columns.
    let sort: BTreeMap<String, OwnedValue> = SORTABLE
        .iter()
        .filter(|k| !k.starts_with("metadata_"))
        .map(|k| {
            let v = if *k == "id" {
                Some(d.id.as_str())
            } else {
                d.first(k)
            };
            (k.to_string(), OwnedValue::Str(v.unwrap_or("").to_string()))
        })
        .collect();
    doc.add_object(f.o, sort);
    doc
}

/// A tantivy date from microseconds, clamped to what its nanosecond timestamps hold (years
/// 1677–2262): `from_timestamp_micros` overflows, and panics, outside that range.
pub(crate) fn tantivy_date(micros: i64) -> DateTime {
    const LIMIT: i64 = i64::MAX / 1_000;
    DateTime::from_timestamp_micros(micros.clamp(-LIMIT, LIMIT))
}
