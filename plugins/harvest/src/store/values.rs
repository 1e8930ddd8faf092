//! The values the harvest rows carry: job statuses, object states and report statuses
//! (ckanext-harvest's), and the time format of every timestamp.

use catalog_framework::store::{job_now, job_time};

/// Now, as the harvest tables store it.
pub(crate) fn now() -> String {
    job_time(job_now())
}

/// Job statuses (ckanext-harvest's).
pub(crate) mod status {
    pub(crate) const NEW: &str = "New";
    pub(crate) const RUNNING: &str = "Running";
    pub(crate) const FINISHED: &str = "Finished";
    pub(crate) const ABORTED: &str = "Aborted";
}

/// Object states (ckanext-harvest's).
pub(crate) mod state {
    pub(crate) const WAITING: &str = "WAITING";
    pub(crate) const COMPLETE: &str = "COMPLETE";
    pub(crate) const ERROR: &str = "ERROR";
}

/// `report_status` values (ckanext-harvest's).
pub(crate) mod report {
    pub(crate) const ADDED: &str = "added";
    pub(crate) const UPDATED: &str = "updated";
    pub(crate) const NOT_MODIFIED: &str = "not modified";
    pub(crate) const DELETED: &str = "deleted";
    pub(crate) const ERRORED: &str = "errored";
}
