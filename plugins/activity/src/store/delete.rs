//! Removing old activities ([`Selection`]), and counting them.

use catalog_framework::prelude::*;
use catalog_framework::store::placeholders;
use catalog_framework::store::time::format_iso;
use catalog_framework::store::RowExt;
use sqlx::AnyConnection;

use super::{data_of, ActivityRow, COLS};

/// Which activities a deletion removes: a condition on the `activity` table, written for a
/// given alias of it, and the values of its `$N` placeholders.
pub(crate) struct Selection {
    pub condition: fn(&str) -> String,
    pub binds: Vec<String>,
    /// Keep this many of each object's newest activities (`keep`), whatever the condition.
    pub keep: Option<i64>,
}

impl Selection {
    fn sql(&self, alias: &str) -> String {
        let mut sql = (self.condition)(alias);
        if let Some(keep) = self.keep {
            sql = format!(
                "({sql}) AND {alias}.seq IN (SELECT seq FROM (SELECT seq, ROW_NUMBER() OVER \
                 (PARTITION BY object_id ORDER BY timestamp DESC, seq DESC) AS n FROM activity) r \
                 WHERE r.n > {keep})"
            );
        }
        sql
    }

    fn bind<'q>(
        &'q self,
        mut q: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    ) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
        for b in &self.binds {
            q = q.bind(b);
        }
        q
    }
}

/// How many activities a selection holds.
pub(crate) async fn count(conn: &mut AnyConnection, s: &Selection) -> CkanResult<i64> {
    let sql = format!(
        "SELECT COUNT(*) AS n FROM activity WHERE {}",
        s.sql("activity")
    );
    Ok(s.bind(sqlx::query(&sql))
        .fetch_one(&mut *conn)
        .await?
        .i("n"))
}

/// Deletes the selected activities and returns how many. An activity that stays but whose data
/// is a patch against a deleted one is first rewritten as a whole copy, so every remaining
/// activity still reads back exactly.
pub(crate) async fn delete(conn: &mut AnyConnection, s: &Selection) -> CkanResult<u64> {
    let orphans = format!(
        "SELECT c.seq FROM activity c JOIN activity d ON d.seq = c.base_seq \
         WHERE {} AND NOT ({})",
        s.sql("d"),
        s.sql("c")
    );
    let seqs: Vec<i64> = s
        .bind(sqlx::query(&orphans))
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|r| r.i("seq"))
        .collect();
    for chunk in seqs.chunks(500) {
        let sql = format!(
            "SELECT {COLS} FROM activity WHERE seq IN ({})",
            placeholders(chunk.len())
        );
        let mut q = sqlx::query(&sql);
        for seq in chunk {
            q = q.bind(*seq);
        }
        let rows: Vec<ActivityRow> = q
            .fetch_all(&mut *conn)
            .await?
            .iter()
            .map(ActivityRow::from_row)
            .collect();
        let data = data_of(conn, rows).await?;
        for (seq, value) in data.iter().filter(|(seq, _)| chunk.contains(seq)) {
            sqlx::query("UPDATE activity SET base_seq = NULL, depth = 0, data = $1 WHERE seq = $2")
                .bind(serde_json::to_string(value)?)
                .bind(*seq)
                .execute(&mut *conn)
                .await?;
        }
    }
    let sql = format!("DELETE FROM activity WHERE {}", s.sql("activity"));
    Ok(s.bind(sqlx::query(&sql))
        .execute(&mut *conn)
        .await?
        .rows_affected())
}

/// How many activities are older than 1, 30 and 365 days, and how many there are.
pub(crate) async fn age_counts(
    conn: &mut AnyConnection,
    now: chrono::NaiveDateTime,
) -> CkanResult<[i64; 4]> {
    let ago = |days: i64| format_iso(now - chrono::Duration::days(days));
    let row = sqlx::query(
        "SELECT COUNT(CASE WHEN timestamp < $1 THEN 1 END) AS d1, \
         COUNT(CASE WHEN timestamp < $2 THEN 1 END) AS d30, \
         COUNT(CASE WHEN timestamp < $3 THEN 1 END) AS d365, COUNT(*) AS total FROM activity",
    )
    .bind(ago(1))
    .bind(ago(30))
    .bind(ago(365))
    .fetch_one(&mut *conn)
    .await?;
    Ok([row.i("d1"), row.i("d30"), row.i("d365"), row.i("total")])
}
