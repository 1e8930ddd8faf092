//! The `datastore_*` actions, with CKAN's parameters, order of checks, messages and shapes
//! (ckanext/datastore/logic/action.py and backend/postgres.py; where 2.10/2.11 and 2.12
//! differ, docs/DATASTORE.md says which we follow).
//!
//! One file per action, named by it: `datastore_create.rs`, `datastore_upsert.rs`,
//! `datastore_delete.rs` (with `datastore_records_delete`, one implementation),
//! `datastore_info.rs` and `datastore_search/` (its parameters and its steps, one file
//! each). What they share is `common.rs`. This file only names them for the rest of the crate.

mod common;
mod datastore_create;
mod datastore_delete;
mod datastore_info;
mod datastore_search;
mod datastore_upsert;

pub(crate) use datastore_create::{datastore_create, DatastoreCreateParams};
pub(crate) use datastore_delete::{
    datastore_delete, datastore_records_delete, DatastoreDeleteParams, DatastoreRecordsDeleteParams,
};
pub(crate) use datastore_info::{datastore_info, DatastoreInfoParams};
pub(crate) use datastore_search::{
    csv_field, datastore_search, rows_max, search, DatastoreSearchParams,
};
pub(crate) use datastore_upsert::{datastore_upsert, DatastoreUpsertParams};
