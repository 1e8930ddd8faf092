//! Task status (`task_status`): what background tasks report about an entity, one row per
//! `(entity_id, task_type, key)`, and term translations (`term_translation`).

use sqlx::AnyConnection;

/// One task status row.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct TaskStatusRow {
    pub id: String,
    pub entity_id: String,
    pub entity_type: String,
    pub task_type: String,
    pub key: String,
    pub value: String,
    pub state: Option<String>,
    pub error: Option<String>,
    pub last_updated: Option<String>,
}

const COLUMNS: &str =
    "id, entity_id, entity_type, task_type, key, value, state, error, last_updated";

/// A task status by id.
pub async fn task_status_by_id(
    conn: &mut AnyConnection,
    id: &str,
) -> sqlx::Result<Option<TaskStatusRow>> {
    sqlx::query_as(&format!("SELECT {COLUMNS} FROM task_status WHERE id = $1"))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await
}

/// A task status by its natural key.
pub async fn task_status_by_key(
    conn: &mut AnyConnection,
    entity_id: &str,
    task_type: &str,
    key: &str,
) -> sqlx::Result<Option<TaskStatusRow>> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM task_status WHERE entity_id = $1 AND task_type = $2 AND key = $3"
    ))
    .bind(entity_id)
    .bind(task_type)
    .bind(key)
    .fetch_optional(&mut *conn)
    .await
}

/// The task statuses of one entity, by task type and key.
pub async fn task_statuses_of(
    conn: &mut AnyConnection,
    entity_id: &str,
) -> sqlx::Result<Vec<TaskStatusRow>> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM task_status WHERE entity_id = $1 ORDER BY task_type, key"
    ))
    .bind(entity_id)
    .fetch_all(&mut *conn)
    .await
}

/// Writes a task status: a new row, or the row of this id rewritten.
pub async fn save_task_status(conn: &mut AnyConnection, t: &TaskStatusRow) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO task_status (id, entity_id, entity_type, task_type, key, value, state, error, last_updated) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
         ON CONFLICT (id) DO UPDATE SET entity_id = excluded.entity_id, entity_type = excluded.entity_type, \
         task_type = excluded.task_type, key = excluded.key, value = excluded.value, state = excluded.state, \
         error = excluded.error, last_updated = excluded.last_updated",
    )
    .bind(&t.id)
    .bind(&t.entity_id)
    .bind(&t.entity_type)
    .bind(&t.task_type)
    .bind(&t.key)
    .bind(&t.value)
    .bind(&t.state)
    .bind(&t.error)
    .bind(&t.last_updated)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Deletes a task status by id.
pub async fn delete_task_status(conn: &mut AnyConnection, id: &str) -> sqlx::Result<()> {
    sqlx::query("DELETE FROM task_status WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// One term translation: `(term, term_translation, lang_code)`.
pub type TermTranslation = (String, String, String);

/// Sets the translation of a term into a language, replacing the previous one (which then
/// lists last, as CKAN's rewritten row does).
pub async fn save_term_translation(
    conn: &mut AnyConnection,
    term: &str,
    translation: &str,
    lang_code: &str,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO term_translation (term, term_translation, lang_code, seq) \
         VALUES ($1, $2, $3, (SELECT COALESCE(MAX(seq), 0) + 1 FROM term_translation)) \
         ON CONFLICT (term, lang_code) DO UPDATE SET term_translation = excluded.term_translation, seq = excluded.seq",
    )
    .bind(term)
    .bind(translation)
    .bind(lang_code)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The translations of these terms (`None`: of every term), into these languages (`None`: any).
/// In table order; with languages, by term and language (the order CKAN's index gives).
pub async fn term_translations(
    conn: &mut AnyConnection,
    terms: Option<&[String]>,
    lang_codes: Option<&[String]>,
) -> sqlx::Result<Vec<TermTranslation>> {
    let mut sql =
        "SELECT term, term_translation, lang_code FROM term_translation WHERE 1 = 1".to_string();
    let mut bound = 0;
    for (col, list) in [("term", terms), ("lang_code", lang_codes)] {
        if let Some(list) = list {
            if list.is_empty() {
                return Ok(Vec::new());
            }
            sql.push_str(&format!(
                " AND {col} IN ({})",
                super::rows::placeholders_from(bound + 1, list.len())
            ));
            bound += list.len();
        }
    }
    sql.push_str(if lang_codes.is_some() {
        " ORDER BY term, lang_code"
    } else {
        " ORDER BY seq"
    });
    let mut q = sqlx::query_as(&sql);
    for t in terms
        .into_iter()
        .flatten()
        .chain(lang_codes.into_iter().flatten())
    {
        q = q.bind(t);
    }
    q.fetch_all(&mut *conn).await
}

/// The runtime-edited configuration (`system_info`): `(key, value)`.
pub async fn system_info(conn: &mut AnyConnection) -> sqlx::Result<Vec<(String, String)>> {
    sqlx::query_as("SELECT key, value FROM system_info ORDER BY key")
        .fetch_all(&mut *conn)
        .await
}

/// Sets a runtime-edited configuration value.
pub async fn set_system_info(
    conn: &mut AnyConnection,
    key: &str,
    value: &str,
    updated: &str,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO system_info (key, value, updated) VALUES ($1, $2, $3) \
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated = excluded.updated",
    )
    .bind(key)
    .bind(value)
    .bind(updated)
    .execute(&mut *conn)
    .await?;
    Ok(())
}
