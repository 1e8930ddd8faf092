//! CKAN's default dataset schema for the type `dataset` (spec/ckan-write-auth-legacy.md §1.1).
//!
//! Where things live:
//! - `lib.rs`: the plugin, the schema's registration and its [`DatasetSchema`] implementation.
//! - `validate.rs`: the validation of a dataset, one step per field or group of fields.
#![forbid(unsafe_code)]

use catalog_framework::prelude::*;
pub use catalog_framework::validators::*;

mod validate;

register_plugin!("default_dataset_schema");
register_dataset_schema!("dataset", DefaultDatasetSchema);

/// The core schema every dataset type falls back to.
pub struct DefaultDatasetSchema;

impl DatasetSchema for DefaultDatasetSchema {
    fn validate(&self, data: &mut Params, ctx: &SchemaContext<'_>) -> CkanResult<()> {
        validate::validate_dataset(data, ctx)
    }
}
