//! The harvest tables (`harvest_source`, `harvest_job`, `harvest_object` and the two error
//! tables): one function per query, rows as plain structs. Timestamps are written fixed-width
//! (`job_time`), so text order is time order on both stores.
//!
//! One file per table: `sources.rs`, `jobs.rs`, `objects.rs`, `errors.rs` (both error tables);
//! `history.rs` deletes across them; `values.rs` holds the values the rows carry (statuses,
//! states, report statuses, the time format). Callers name everything as `store::…`.

mod errors;
mod history;
mod jobs;
mod objects;
mod sources;
mod values;

pub(crate) use errors::*;
pub(crate) use history::*;
pub(crate) use jobs::*;
pub(crate) use objects::*;
pub(crate) use sources::*;
pub(crate) use values::{now, report, state, status};
