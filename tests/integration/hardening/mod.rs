//! Hardening tests against the real `catalog` binary, on SQLite and on PostgreSQL: hostile
//! input (a bounded HTTP fuzz run), parallel writers, `kill -9` during a write burst and during a
//! DataStore load, and the
//! HTTP server's limits. Issue: "no crash, no lost write, no stall".

mod amplifiers;
mod concurrency;
mod crash;
mod datastore_load;
mod file_store;
mod fuzz;
mod harvest_crash;
mod http_layer;
mod limits;
mod support;
mod visibility;
