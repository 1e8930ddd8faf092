//! Tags (`tag`).

use sqlx::AnyConnection;

use super::rows::placeholders;

/// The free tags (no vocabulary) of these names that exist: `(id, name)`, in no order.
pub async fn free_tags_by_name(
    conn: &mut AnyConnection,
    names: &[String],
) -> sqlx::Result<Vec<(String, String)>> {
    let mut out = Vec::with_capacity(names.len());
    for chunk in names.chunks(500) {
        let sql = format!(
            "SELECT id, name FROM tag WHERE vocabulary_id = '' AND name IN ({})",
            placeholders(chunk.len())
        );
        let mut q = sqlx::query_as::<_, (String, String)>(&sql);
        for n in chunk {
            q = q.bind(n);
        }
        out.extend(q.fetch_all(&mut *conn).await?);
    }
    Ok(out)
}

/// The ids of these free tags, creating the absent ones: `name → id`. Insert-if-absent, then
/// read, so two writers adding the same new tag at once both succeed (on PostgreSQL the second
/// waits for the first and inserts nothing). Pass the names sorted: one order for every writer,
/// so two writers adding the same new tags wait for each other instead of deadlocking.
pub async fn ensure_free_tags(
    conn: &mut AnyConnection,
    names: &[String],
) -> sqlx::Result<std::collections::HashMap<String, String>> {
    let mut ids = std::collections::HashMap::with_capacity(names.len());
    for chunk in names.chunks(super::ROW_BATCH) {
        let values: Vec<String> = (0..chunk.len())
            .map(|i| format!("(${}, ${}, '')", 2 * i + 1, 2 * i + 2))
            .collect();
        let sql = format!(
            "INSERT INTO tag (id, name, vocabulary_id) VALUES {} ON CONFLICT (name, vocabulary_id) DO NOTHING",
            values.join(", ")
        );
        let mut insert = sqlx::query(&sql);
        for name in chunk {
            insert = insert.bind(super::new_id()).bind(name);
        }
        insert.execute(&mut *conn).await?;
        for (id, name) in free_tags_by_name(&mut *conn, chunk).await? {
            ids.insert(name, id);
        }
    }
    Ok(ids)
}

/// A free tag (no vocabulary) by id or name: `(id, name)`.
pub async fn free_tag_by_ref(
    conn: &mut AnyConnection,
    r: &str,
) -> sqlx::Result<Option<(String, String)>> {
    sqlx::query_as(
        "SELECT id, name FROM tag WHERE (id = $1 OR name = $1) AND vocabulary_id = '' LIMIT 1",
    )
    .bind(r)
    .fetch_optional(&mut *conn)
    .await
}
