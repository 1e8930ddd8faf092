//! Integration tests of the `postgres` search backend against a real PostgreSQL: each test
//! makes a scratch database (`catalog_host::testkit::ScratchDb`), and prints the testkit's
//! `skipped on PostgreSQL: not reachable at …` when there is none.

mod backend;
mod bench;
mod cases;
mod scratch;
