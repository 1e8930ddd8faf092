//! The index's fields: how each CKAN field name is analysed (spec §5.6, CKAN's Solr schema).

/// How a field is indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// Exact and case-sensitive (`tags`, `res_format`, `name`, the catch-all of unknown keys).
    String,
    /// Tokenised, lower-cased, ASCII-folded and English-stemmed (`title`, `notes`, `text`,
    /// `extras_*`).
    Text,
    /// Tokenised, lower-cased and ASCII-folded, not stemmed (`author`, `res_name` …).
    TextGeneral,
    /// An instant; ranges and date math apply (`metadata_modified`, keys ending `_date`).
    Date,
}

const STRING_FIELDS: &[&str] = &[
    "id",
    "site_id",
    "entity_type",
    "dataset_type",
    "capacity",
    "permission_labels",
    "name",
    "state",
    "version",
    "url",
    "license_id",
    "title_string",
    "tags",
    "groups",
    "organization",
    "res_format",
    "res_url",
    "res_type",
    "depends_on",
    "dependency_of",
    "derives_from",
    "has_derivation",
    "links_to",
    "linked_from",
    "child_of",
    "parent_of",
];

const TEXT_FIELDS: &[&str] = &["title", "notes", "text", "urls", "license"];

const TEXT_GENERAL_FIELDS: &[&str] = &[
    "author",
    "author_email",
    "maintainer",
    "maintainer_email",
    "res_name",
    "res_description",
];

const DATE_FIELDS: &[&str] = &["metadata_created", "metadata_modified", "indexed_ts"];

/// The kind of a field name, including the dynamic ones (`extras_*`, `res_extras_*`,
/// `vocab_*`, `*_date`). Unknown names fall into the exact-string catch-all, as in CKAN.
pub fn kind(field: &str) -> FieldKind {
    if TEXT_FIELDS.contains(&field)
        || field.starts_with("extras_")
        || field.starts_with("res_extras_")
    {
        FieldKind::Text
    } else if DATE_FIELDS.contains(&field) || field.ends_with("_date") {
        FieldKind::Date
    } else if TEXT_GENERAL_FIELDS.contains(&field) {
        FieldKind::TextGeneral
    } else {
        // STRING_FIELDS, vocab_*, and the catch-all.
        debug_assert!(!field.is_empty());
        FieldKind::String
    }
}

/// Whether a name is one of the index's declared fields (not the catch-all).
pub fn is_declared(field: &str) -> bool {
    STRING_FIELDS.contains(&field)
        || TEXT_FIELDS.contains(&field)
        || TEXT_GENERAL_FIELDS.contains(&field)
        || DATE_FIELDS.contains(&field)
        || field.starts_with("extras_")
        || field.starts_with("res_extras_")
        || field.starts_with("vocab_")
}

/// Fields copied into the `text` catch-all (CKAN's `copyField`s), besides the dynamic
/// `extras_*`, `res_extras_*` and `vocab_*` ones.
const COPIED_TO_TEXT: &[&str] = &[
    "url",
    "res_url",
    "name",
    "title",
    "license",
    "notes",
    "tags",
    "groups",
    "organization",
    "res_name",
    "res_description",
    "maintainer",
    "author",
    "urls",
];

/// Whether a field's values also go into the `text` catch-all.
pub fn copied_to_text(field: &str) -> bool {
    COPIED_TO_TEXT.contains(&field)
        || field.starts_with("extras_")
        || field.starts_with("res_extras_")
        || field.starts_with("vocab_")
}

/// Fields a search can sort on (single-valued ones); `score` is handled apart.
pub const SORTABLE: &[&str] = &[
    "id",
    "name",
    "title_string",
    "metadata_modified",
    "metadata_created",
    "state",
    "license_id",
    "dataset_type",
    "organization",
    "version",
    "url",
    "capacity",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(kind("tags"), FieldKind::String);
        assert_eq!(kind("title"), FieldKind::Text);
        assert_eq!(kind("extras_theme"), FieldKind::Text);
        assert_eq!(kind("res_name"), FieldKind::TextGeneral);
        assert_eq!(kind("metadata_modified"), FieldKind::Date);
        assert_eq!(kind("release_date"), FieldKind::Date);
        assert_eq!(kind("owner_org"), FieldKind::String);
        assert_eq!(kind("vocab_topics"), FieldKind::String);
        assert!(!is_declared("owner_org"));
    }
}
