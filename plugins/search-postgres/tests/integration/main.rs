//! Integration tests of the `postgres` search backend against a real PostgreSQL: each test
//! makes a scratch database (`postgres://postgres@127.0.0.1:5432`), and prints
//! `skipped: PostgreSQL not reachable` when there is none.

mod backend;
mod bench;
mod cases;
mod scratch;
