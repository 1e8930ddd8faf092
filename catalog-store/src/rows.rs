//! What every repository module shares: typed column access, `IN (…)` placeholders and
//! row locks.

use sqlx::any::AnyRow;
use sqlx::Row;

/// Column access that hides the backends' differences (SQLite booleans are integers).
pub trait RowExt {
    fn s(&self, col: &str) -> String;
    fn os(&self, col: &str) -> Option<String>;
    fn b(&self, col: &str) -> bool;
    fn i(&self, col: &str) -> i64;
    /// An integer column that may be NULL.
    fn oi(&self, col: &str) -> Option<i64>;
}

impl RowExt for AnyRow {
    fn s(&self, col: &str) -> String {
        self.try_get::<Option<String>, _>(col)
            .ok()
            .flatten()
            .unwrap_or_default()
    }
    fn os(&self, col: &str) -> Option<String> {
        self.try_get::<Option<String>, _>(col).ok().flatten()
    }
    fn b(&self, col: &str) -> bool {
        if let Ok(b) = self.try_get::<bool, _>(col) {
            return b;
        }
        self.try_get::<i64, _>(col).map(|i| i != 0).unwrap_or(false)
    }
    fn i(&self, col: &str) -> i64 {
        if let Ok(i) = self.try_get::<i64, _>(col) {
            return i;
        }
        self.try_get::<i32, _>(col).map(i64::from).unwrap_or(0)
    }
    fn oi(&self, col: &str) -> Option<i64> {
        if let Ok(i) = self.try_get::<Option<i64>, _>(col) {
            return i;
        }
        self.try_get::<Option<i32>, _>(col)
            .ok()
            .flatten()
            .map(i64::from)
    }
}

/// The condition that picks the row of `table` whose id is `$1`, or else one whose name is `$1`
/// (`filter`, e.g. `" AND state = 'active'"`, narrows both). Two lookups on the table's
/// id and name indexes: `id = $1 OR name = $1` is served by neither in a plan made while the
/// table was small (PostgreSQL keeps a prepared statement's generic plan; with an empty table's
/// estimates that plan is a sequential scan, and it stayed one as the table grew: 484 million
/// rows read by 64,000 scans of `package` during a 20,000-dataset load).
pub(crate) fn id_or_name(table: &str, filter: &str) -> String {
    format!(
        "id = COALESCE((SELECT id FROM {table} WHERE id = $1{filter}), \
         (SELECT id FROM {table} WHERE name = $1{filter} LIMIT 1))"
    )
}

/// `$1, $2, …, $n`: the placeholders of an `IN (…)` list.
pub fn placeholders(n: usize) -> String {
    (1..=n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `$first, …`: the `n` placeholders of an `IN (…)` list after `first - 1` other parameters.
pub fn placeholders_from(first: usize, n: usize) -> String {
    (first..first + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The row lock a read takes inside a write transaction (PostgreSQL only: on SQLite the write
/// transaction already excludes every other writer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lock {
    /// A plain read.
    None,
    /// `FOR SHARE`: the row cannot change until commit; other readers may share it.
    Share,
    /// `FOR UPDATE`: the row is this transaction's until commit (a read-modify-write).
    Update,
}

impl Lock {
    pub(super) fn clause(self) -> &'static str {
        match self {
            Lock::None => "",
            Lock::Share => " FOR SHARE",
            Lock::Update => " FOR UPDATE",
        }
    }
}

/// A new record id (a random UUID), as every table keys its rows.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Rows per multi-row statement (two or three parameters each: far below SQLite's and
/// PostgreSQL's parameter limits).
pub const ROW_BATCH: usize = 500;
