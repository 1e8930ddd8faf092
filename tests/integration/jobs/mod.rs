//! Background jobs on SQLite and on PostgreSQL (a scratch database per test): enqueueing in an
//! action's transaction, workers (retries with backoff, a recorded failure, several workers
//! that run every job exactly once, a stale job run again), the job actions with CKAN's
//! answers and errors, and the `catalog jobs` CLI with a worker killed mid-job.

mod actions;
mod cli;
mod support;
mod workers;
