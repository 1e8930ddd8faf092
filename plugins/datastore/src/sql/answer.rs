//! What a run of the SQL search gives back, and the error it answers with.

use catalog_framework::prelude::*;

/// The error of a query refused or failed: a validation error on `query`.
pub(crate) fn query_error(msg: impl Into<String>) -> CkanError {
    validation().field("query", msg).build()
}

/// What a run gives back: the fields (`id`, `type`) and the records, and whether either cap
/// cut them short.
pub(crate) struct Answer {
    pub(crate) fields: Vec<Value>,
    pub(crate) records: Vec<Value>,
    pub(crate) truncated: bool,
}
