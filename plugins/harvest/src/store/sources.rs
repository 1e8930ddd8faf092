//! `harvest_source`: one row per source, written from its dataset (the api key and the
//! schedule are the row's own).

use catalog_framework::store::RowExt;
use sqlx::any::AnyRow;
use sqlx::AnyConnection;

use super::values::{now, status};

/// One row of `harvest_source`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SourceRow {
    pub(crate) id: String,
    pub(crate) url: String,
    pub(crate) title: String,
    pub(crate) description: String,
    pub(crate) config: String,
    pub(crate) created: String,
    pub(crate) source_type: String,
    pub(crate) active: bool,
    pub(crate) user_id: String,
    pub(crate) publisher_id: String,
    pub(crate) frequency: String,
    pub(crate) next_run: Option<String>,
    pub(crate) api_key: Option<String>,
}

const SOURCE_COLUMNS: &str = "id, url, title, description, config, created, type, active, \
     user_id, publisher_id, frequency, next_run, api_key";

fn source_row(r: &AnyRow) -> SourceRow {
    SourceRow {
        id: r.s("id"),
        url: r.s("url"),
        title: r.s("title"),
        description: r.s("description"),
        config: r.s("config"),
        created: r.s("created"),
        source_type: r.s("type"),
        active: r.b("active"),
        user_id: r.s("user_id"),
        publisher_id: r.s("publisher_id"),
        frequency: r.s("frequency"),
        next_run: r.os("next_run"),
        api_key: r.os("api_key").filter(|k| !k.is_empty()),
    }
}

/// The source of this id.
pub(crate) async fn source(conn: &mut AnyConnection, id: &str) -> sqlx::Result<Option<SourceRow>> {
    let sql = format!("SELECT {SOURCE_COLUMNS} FROM harvest_source WHERE id = $1");
    Ok(sqlx::query(&sql)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
        .as_ref()
        .map(source_row))
}

/// The newest source whose url is exactly this one (`harvest_source_show?url=`).
pub(crate) async fn source_by_url(
    conn: &mut AnyConnection,
    url: &str,
) -> sqlx::Result<Option<SourceRow>> {
    let sql = format!(
        "SELECT {SOURCE_COLUMNS} FROM harvest_source WHERE url = $1 ORDER BY created DESC LIMIT 1"
    );
    Ok(sqlx::query(&sql)
        .bind(url)
        .fetch_optional(&mut *conn)
        .await?
        .as_ref()
        .map(source_row))
}

/// Every source, newest first, at most `limit`; only active ones when asked, only one
/// organization's when given.
pub(crate) async fn sources(
    conn: &mut AnyConnection,
    only_active: bool,
    organization: Option<&str>,
    limit: i64,
) -> sqlx::Result<Vec<SourceRow>> {
    let sql = format!(
        "SELECT {SOURCE_COLUMNS} FROM harvest_source WHERE ($1 = FALSE OR active = TRUE) \
         AND ($2 = '' OR publisher_id = $2) ORDER BY created DESC LIMIT $3"
    );
    Ok(sqlx::query(&sql)
        .bind(only_active)
        .bind(organization.unwrap_or(""))
        .bind(limit)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(source_row)
        .collect())
}

/// Writes a source row from its dataset (insert or replace what the dataset carries); the
/// api key and the schedule are kept.
pub(crate) async fn save_source(conn: &mut AnyConnection, s: &SourceRow) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO harvest_source (id, url, title, description, config, created, type, active, \
         user_id, publisher_id, frequency) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
         ON CONFLICT (id) DO UPDATE SET url = excluded.url, title = excluded.title, \
         config = excluded.config, type = excluded.type, active = excluded.active, \
         publisher_id = excluded.publisher_id, frequency = excluded.frequency",
    )
    .bind(&s.id)
    .bind(&s.url)
    .bind(&s.title)
    .bind(&s.description)
    .bind(&s.config)
    .bind(&s.created)
    .bind(&s.source_type)
    .bind(s.active)
    .bind(&s.user_id)
    .bind(&s.publisher_id)
    .bind(&s.frequency)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Sets (or, with `None`, clears) the source's api key, which only the source row keeps. The
/// row may not exist yet (the dataset's events write it when the call commits): then a row is
/// started with the key, and the dataset's values complete it.
pub(crate) async fn set_api_key(
    conn: &mut AnyConnection,
    id: &str,
    url: &str,
    source_type: &str,
    key: Option<&str>,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO harvest_source (id, url, created, type, api_key) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (id) DO UPDATE SET api_key = excluded.api_key",
    )
    .bind(id)
    .bind(url)
    .bind(now())
    .bind(source_type)
    .bind(key)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Marks the source inactive (its dataset was deleted) and aborts its jobs that have not
/// started, as ckanext-harvest does.
pub(crate) async fn deactivate_source(conn: &mut AnyConnection, id: &str) -> sqlx::Result<()> {
    sqlx::query("UPDATE harvest_source SET active = FALSE WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("UPDATE harvest_job SET status = $2 WHERE source_id = $1 AND status = $3")
        .bind(id)
        .bind(status::ABORTED)
        .bind(status::NEW)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Removes the source row itself (its dataset was purged).
pub(crate) async fn delete_source(conn: &mut AnyConnection, id: &str) -> sqlx::Result<()> {
    sqlx::query("DELETE FROM harvest_source WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Active, scheduled sources whose next run is due at `now`.
pub(crate) async fn due_sources(
    conn: &mut AnyConnection,
    now: &str,
) -> sqlx::Result<Vec<SourceRow>> {
    let sql = format!(
        "SELECT {SOURCE_COLUMNS} FROM harvest_source WHERE active = TRUE \
         AND frequency <> 'MANUAL' AND (next_run IS NULL OR next_run <= $1) ORDER BY created"
    );
    Ok(sqlx::query(&sql)
        .bind(now)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(source_row)
        .collect())
}

/// Moves a source's next run on, only if it still is `seen` (another node's scheduler may
/// have moved it meanwhile): true when this call did.
pub(crate) async fn advance_next_run(
    conn: &mut AnyConnection,
    id: &str,
    seen: Option<&str>,
    next: &str,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE harvest_source SET next_run = $2 WHERE id = $1 \
         AND ((next_run IS NULL AND $3 = '') OR next_run = $3)",
    )
    .bind(id)
    .bind(next)
    .bind(seen.unwrap_or(""))
    .execute(&mut *conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Every source's url and config but `except`'s: the url-uniqueness check compares them
/// normalised. Deleted sources count, as in ckanext-harvest.
pub(crate) async fn source_urls(
    conn: &mut AnyConnection,
    except: Option<&str>,
) -> sqlx::Result<Vec<(String, String)>> {
    let rows = sqlx::query("SELECT url, config FROM harvest_source WHERE id <> $1")
        .bind(except.unwrap_or(""))
        .fetch_all(&mut *conn)
        .await?;
    Ok(rows.iter().map(|r| (r.s("url"), r.s("config"))).collect())
}
