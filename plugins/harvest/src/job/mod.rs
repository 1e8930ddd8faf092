//! Harvest jobs: creating and starting them, the schedule, showing, listing, reporting and
//! aborting them.

pub(crate) mod abort;
pub(crate) mod create;
pub(crate) mod show;
