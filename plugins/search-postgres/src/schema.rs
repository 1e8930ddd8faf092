//! The backend's tables, and the translation of an [`IndexDocument`] into one row.

use catalog_framework::search::fields::{kind, FieldKind};
use catalog_framework::search::IndexDocument;
use chrono::SecondsFormat;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::analysis::TsvectorBuilder;

/// The table searches read.
pub const LIVE: &str = "search_doc";
/// The table a rebuild fills, renamed to [`LIVE`] when it finishes.
pub const NEW: &str = "search_doc_new";
/// Datasets deleted while a rebuild runs, so that a rebuild batch read before the deletion
/// does not bring them back.
pub const GONE: &str = "search_doc_new_gone";

/// One row counting the changes to the index: searches cache counts and facets per version.
pub const VERSION: &str = "search_doc_version";

/// Advisory lock held while the tables are created (several nodes may start at once).
pub const DDL_LOCK: i64 = 0x5EA2_C400_0001;
/// Advisory lock held by the session of a running rebuild.
pub const REBUILD_LOCK: i64 = 0x5EA2_C400_0002;

/// The single-valued string fields kept in columns, for sorting and for exact matches the
/// planner can estimate. A missing value is `''`.
pub const STRING_COLUMNS: &[&str] = &[
    "name",
    "title_string",
    "state",
    "capacity",
    "site_id",
    "dataset_type",
    "license_id",
    "organization",
    "version",
    "url",
];

/// Fields whose exact matches and facets use their column instead of the `fields` document:
/// always single-valued in an index document.
pub const EXACT_BY_COLUMN: &[&str] = &[
    "id",
    "name",
    "state",
    "capacity",
    "site_id",
    "dataset_type",
    "license_id",
    "organization",
];

/// Multi-valued string fields every CKAN search filters or facets on, kept as arrays in the
/// row: cheap to read for facets over many matches, with element statistics for the planner.
pub const ARRAY_COLUMNS: &[&str] = &["tags", "groups", "res_format", "permission_labels"];

/// Text fields ranked by `ts_rank`, from a small `tsvector` kept in the row (`tsv_title`).
/// Matches in the other text fields (`text`, `notes` …) count, but rank equally.
pub const RANKED_FIELDS: &[&str] = &["title"];

/// Index name suffixes, so that a rebuilt table's indexes can be renamed on the swap.
pub const INDEX_SUFFIXES: &[&str] = &[
    "fields",
    "names",
    "tsv",
    "tags",
    "groups",
    "res_format",
    "modified",
    "created",
    "name",
    "title",
    "organization",
];

/// The statements creating `table` and its indexes; each is idempotent.
pub fn create_table(table: &str) -> Vec<String> {
    let strings: String = STRING_COLUMNS
        .iter()
        .map(|c| format!("    {c} TEXT COLLATE \"C\" NOT NULL DEFAULT '',\n"))
        .collect();
    let arrays: String = ARRAY_COLUMNS
        .iter()
        .map(|c| format!("    {c} TEXT[] COLLATE \"C\" NOT NULL,\n"))
        .collect();
    // What facets and ranking read for every match stays in the row.
    let main_storage: Vec<String> = ["tsv_title"]
        .iter()
        .chain(ARRAY_COLUMNS)
        .map(|c| format!("ALTER COLUMN {c} SET STORAGE MAIN"))
        .collect();
    vec![
        // A narrow row: the large values (the stored dict, the full tsvector, the JSON of every
        // string field) live out of line, so scans over many matches read little.
        format!(
            "CREATE TABLE IF NOT EXISTS {table} (\n\
             id TEXT COLLATE \"C\" NOT NULL,\n\
             data TEXT NOT NULL,\n\
             mm_raw TEXT NOT NULL,\n\
             fields JSONB NOT NULL,\n\
             dates JSONB NOT NULL,\n\
             names TEXT[] NOT NULL,\n\
             tsv TSVECTOR NOT NULL,\n\
             tsv_title TSVECTOR NOT NULL,\n\
             {strings}{arrays}\
             metadata_modified TIMESTAMPTZ,\n\
             metadata_created TIMESTAMPTZ,\n\
             CONSTRAINT {table}_pkey PRIMARY KEY (id)) WITH (toast_tuple_target = 256)"
        ),
        format!("ALTER TABLE {table} {}", main_storage.join(", ")),
        format!("CREATE INDEX IF NOT EXISTS {table}_fields ON {table} USING gin (fields jsonb_path_ops)"),
        format!("CREATE INDEX IF NOT EXISTS {table}_names ON {table} USING gin (names)"),
        format!("CREATE INDEX IF NOT EXISTS {table}_tsv ON {table} USING gin (tsv)"),
        format!("CREATE INDEX IF NOT EXISTS {table}_tags ON {table} USING gin (tags)"),
        format!("CREATE INDEX IF NOT EXISTS {table}_groups ON {table} USING gin (groups)"),
        format!("CREATE INDEX IF NOT EXISTS {table}_res_format ON {table} USING gin (res_format)"),
        format!("CREATE INDEX IF NOT EXISTS {table}_modified ON {table} (metadata_modified DESC NULLS LAST, id)"),
        format!("CREATE INDEX IF NOT EXISTS {table}_created ON {table} (metadata_created DESC NULLS LAST, id)"),
        format!("CREATE INDEX IF NOT EXISTS {table}_name ON {table} (name, id)"),
        format!("CREATE INDEX IF NOT EXISTS {table}_title ON {table} (title_string, id)"),
        format!("CREATE INDEX IF NOT EXISTS {table}_organization ON {table} (organization)"),
    ]
}

/// Formats an instant as facet values and the `dates` document hold it (`…Z`).
pub fn iso(d: &chrono::DateTime<chrono::Utc>) -> String {
    d.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// One row, as sent to PostgreSQL in a JSON batch.
#[derive(Serialize)]
pub struct Row {
    pub id: String,
    data: String,
    mm_raw: String,
    fields: Value,
    dates: Value,
    names: Vec<String>,
    tsv: String,
    tsv_title: String,
    tags: Vec<String>,
    groups: Vec<String>,
    res_format: Vec<String>,
    permission_labels: Vec<String>,
    name: String,
    title_string: String,
    state: String,
    capacity: String,
    site_id: String,
    dataset_type: String,
    license_id: String,
    organization: String,
    version: String,
    url: String,
    metadata_modified: Option<String>,
    metadata_created: Option<String>,
}

/// PostgreSQL text and JSON cannot hold NUL.
fn clean(s: &str) -> String {
    s.replace('\0', "")
}

/// Adds `value` to the distinct values of `field` in a `{field: [values]}` document; `seen`
/// holds the pairs added so far (a set, not a scan: a dataset may carry thousands of tags).
fn push_distinct(
    doc: &mut Map<String, Value>,
    seen: &mut std::collections::HashSet<(String, String)>,
    field: &str,
    value: String,
) {
    if !seen.insert((field.to_string(), value.clone())) {
        return;
    }
    let values = doc
        .entry(field.to_string())
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(a) = values {
        a.push(Value::String(value));
    }
}

impl Row {
    pub fn from_document(doc: &IndexDocument) -> Row {
        let mut fields = Map::new();
        let mut dates = Map::new();
        let mut names: Vec<String> = Vec::new();
        let mut tsv = TsvectorBuilder::default();
        let mut tsv_title = TsvectorBuilder::default();
        let mut seen = std::collections::HashSet::new();
        for (field, value) in &doc.fields {
            let value = clean(value);
            let field = clean(field);
            match kind(&field) {
                FieldKind::String => push_distinct(&mut fields, &mut seen, &field, value),
                k @ (FieldKind::Text | FieldKind::TextGeneral) => {
                    tsv.add(&field, k, &value);
                    if RANKED_FIELDS.contains(&field.as_str()) {
                        tsv_title.add(&field, k, &value);
                    }
                }
                // The document builder routes dates to `dates`; nothing to do.
                FieldKind::Date => continue,
            }
            names.push(field);
        }
        for (field, at) in &doc.dates {
            push_distinct(&mut dates, &mut seen, field, iso(at));
            names.push(clean(field));
        }
        names.sort_unstable();
        names.dedup();
        let first = |f: &str| doc.first(f).map(clean).unwrap_or_default();
        let all = |f: &str| -> Vec<String> {
            let mut v: Vec<String> = doc.values(f).map(clean).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let date = |f: &str| {
            doc.dates
                .iter()
                .find(|(name, _)| name == f)
                .map(|(_, d)| iso(d))
        };
        Row {
            id: clean(&doc.id),
            data: clean(&doc.data),
            mm_raw: clean(&doc.metadata_modified),
            fields: Value::Object(fields),
            dates: Value::Object(dates),
            names,
            tsv: tsv.finish(),
            tsv_title: tsv_title.finish(),
            tags: all("tags"),
            groups: all("groups"),
            res_format: all("res_format"),
            permission_labels: all("permission_labels"),
            name: first("name"),
            title_string: first("title_string"),
            state: first("state"),
            capacity: first("capacity"),
            site_id: first("site_id"),
            dataset_type: first("dataset_type"),
            license_id: first("license_id"),
            organization: first("organization"),
            version: first("version"),
            url: first("url"),
            metadata_modified: date("metadata_modified"),
            metadata_created: date("metadata_created"),
        }
    }
}

/// The column list of an insert, in [`select_from_batch`]'s order.
pub fn insert_columns() -> String {
    let mut cols = vec![
        "id",
        "data",
        "mm_raw",
        "fields",
        "dates",
        "names",
        "tsv",
        "tsv_title",
    ];
    cols.extend(ARRAY_COLUMNS);
    cols.extend(STRING_COLUMNS);
    cols.extend(["metadata_modified", "metadata_created"]);
    cols.join(", ")
}

/// The `SELECT` producing rows from a JSON batch bound as `$1` (a list of [`Row`]s).
pub fn select_from_batch() -> String {
    let arrays: String = ARRAY_COLUMNS
        .iter()
        .map(|c| format!("ARRAY(SELECT jsonb_array_elements_text(r.{c})), "))
        .collect();
    let arrays_def: String = ARRAY_COLUMNS
        .iter()
        .map(|c| format!("{c} jsonb, "))
        .collect();
    let strings: String = STRING_COLUMNS
        .iter()
        .map(|c| format!("COALESCE(r.{c}, ''), "))
        .collect();
    let strings_def: String = STRING_COLUMNS
        .iter()
        .map(|c| format!("{c} text, "))
        .collect();
    format!(
        "SELECT r.id, r.data, r.mm_raw, r.fields, r.dates, \
         ARRAY(SELECT jsonb_array_elements_text(r.names)), r.tsv::tsvector, \
         r.tsv_title::tsvector, {arrays}{strings}\
         r.metadata_modified::timestamptz, r.metadata_created::timestamptz \
         FROM json_to_recordset($1::json) AS r(id text, data text, mm_raw text, fields jsonb, \
         dates jsonb, names jsonb, tsv text, tsv_title text, {arrays_def}{strings_def}\
         metadata_modified text, metadata_created text)"
    )
}

/// `SET` list of an upsert's `ON CONFLICT DO UPDATE`.
pub fn update_set() -> String {
    let mut cols = vec![
        "data",
        "mm_raw",
        "fields",
        "dates",
        "names",
        "tsv",
        "tsv_title",
    ];
    cols.extend(ARRAY_COLUMNS);
    cols.extend(STRING_COLUMNS);
    cols.extend(["metadata_modified", "metadata_created"]);
    cols.iter()
        .map(|c| format!("{c} = EXCLUDED.{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}
