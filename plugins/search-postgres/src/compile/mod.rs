//! Translates the framework's query AST into a SQL condition on a `search_doc` row (alias `d`)
//! and, for the scored query, a score expression. Every user value is a bind parameter; only
//! fixed column names and SQL keywords are written into the text.
//!
//! Where things live:
//! - `sql.rs`: the statement under construction ([`Sql`], its [`Arg`]s) and what ranks a
//!   match ([`Score`]).
//! - `node.rs`: the [`Compiler`] and the compiled conditions it combines.
//! - `query.rs`: the walk over the query tree: each kind of query, boolean clauses and
//!   `k of n` conditions.
//! - `field.rs`: conditions on one field: terms and phrases, exact strings, wildcards, ranges.

mod field;
mod node;
mod query;
mod sql;

pub use node::Compiler;
pub use sql::{Arg, Score, Sql};
