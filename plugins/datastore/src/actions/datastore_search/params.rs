//! The parameters of `datastore_search`, as CKAN documents them (the help text).

use catalog_framework::prelude::*;

action_params! {
    /// Searches a resource's DataStore table.
    ///
    /// `filters`: {field: value or list of values}; `q`: full-text search (a string over
    /// every field, or {field: text}); `fields`, `sort` (`"a desc, b"`), `distinct`, `limit`
    /// (default 100, at most catalog.datastore.search.rows_max, 32,000), `offset`,
    /// `include_total` (default true), `records_format` (objects, lists, csv, tsv).
    pub struct DatastoreSearchParams {
        /// the resource's id
        resource_id: Option<Value>,
        /// alias of resource_id
        id: Option<Value>,
        /// {field: value}; a list of values matches any of them
        filters: Option<Value>,
        /// full-text query: a string, or {field: text}
        q: Option<Value>,
        /// full-text query over every field
        full_text: Option<Value>,
        /// accepted: the query is always plain text
        plain: Option<Value>,
        /// accepted: the text-search language is English
        language: Option<Value>,
        /// return each distinct row once
        distinct: Option<Value>,
        /// rows to return (default 100)
        limit: Option<Value>,
        /// rows to skip
        offset: Option<Value>,
        /// the fields to return (list or comma-separated)
        fields: Option<Value>,
        /// the order: "field [asc|desc][, …]"
        sort: Option<Value>,
        /// return the total (default true)
        include_total: Option<Value>,
        /// accepted; the total is always exact
        total_estimation_threshold: Option<Value>,
        /// objects (default), lists, csv or tsv
        records_format: Option<Value>,
    }
}
