//! Tags (`tag`) and tag vocabularies (`vocabulary`). A free tag has `vocabulary_id` `''`.

use sqlx::AnyConnection;

use super::rows::{id_or_name, placeholders_from};

/// The free tags (no vocabulary) of these names that exist: `(id, name)`, in no order.
pub async fn free_tags_by_name(
    conn: &mut AnyConnection,
    names: &[String],
) -> sqlx::Result<Vec<(String, String)>> {
    tags_by_name(conn, "", names).await
}

/// The tags of these names in a vocabulary (`''`: free tags) that exist: `(id, name)`.
pub async fn tags_by_name(
    conn: &mut AnyConnection,
    vocabulary_id: &str,
    names: &[String],
) -> sqlx::Result<Vec<(String, String)>> {
    let mut out = Vec::with_capacity(names.len());
    for chunk in names.chunks(500) {
        let sql = format!(
            "SELECT id, name FROM tag WHERE vocabulary_id = $1 AND name IN ({})",
            placeholders_from(2, chunk.len())
        );
        let mut q = sqlx::query_as::<_, (String, String)>(&sql).bind(vocabulary_id);
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
    sqlx::query_as(&format!(
        "SELECT id, name FROM tag WHERE {}",
        id_or_name("tag", " AND vocabulary_id = ''")
    ))
    .bind(r)
    .fetch_optional(&mut *conn)
    .await
}

/// A tag vocabulary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VocabularyRow {
    pub id: String,
    pub name: String,
}

/// A vocabulary by id or name.
pub async fn vocabulary_by_ref(
    conn: &mut AnyConnection,
    r: &str,
) -> sqlx::Result<Option<VocabularyRow>> {
    let row: Option<(String, String)> = sqlx::query_as(&format!(
        "SELECT id, name FROM vocabulary WHERE {}",
        id_or_name("vocabulary", "")
    ))
    .bind(r)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(|(id, name)| VocabularyRow { id, name }))
}

/// Every vocabulary, by name.
pub async fn vocabularies(conn: &mut AnyConnection) -> sqlx::Result<Vec<VocabularyRow>> {
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT id, name FROM vocabulary ORDER BY seq, name")
            .fetch_all(&mut *conn)
            .await?;
    Ok(rows
        .into_iter()
        .map(|(id, name)| VocabularyRow { id, name })
        .collect())
}

/// Adds a vocabulary; `false` if its id or name is taken (nothing written).
pub async fn insert_vocabulary(conn: &mut AnyConnection, v: &VocabularyRow) -> sqlx::Result<bool> {
    let r = sqlx::query(
        "INSERT INTO vocabulary (id, name, seq) \
         SELECT $1, $2, COALESCE(MAX(seq), 0) + 1 FROM vocabulary WHERE true ON CONFLICT DO NOTHING",
    )
        .bind(&v.id)
        .bind(&v.name)
        .execute(&mut *conn)
        .await?;
    Ok(r.rows_affected() == 1)
}

/// Renames a vocabulary; `false` if the name is taken by another one.
pub async fn rename_vocabulary(
    conn: &mut AnyConnection,
    id: &str,
    name: &str,
) -> sqlx::Result<bool> {
    let taken: Option<(String,)> =
        sqlx::query_as("SELECT id FROM vocabulary WHERE name = $1 AND id <> $2")
            .bind(name)
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
    if taken.is_some() {
        return Ok(false);
    }
    sqlx::query("UPDATE vocabulary SET name = $2 WHERE id = $1")
        .bind(id)
        .bind(name)
        .execute(&mut *conn)
        .await?;
    Ok(true)
}

/// Deletes a vocabulary with its tags and their dataset links; returns the ids of the datasets
/// that carried one of its tags.
pub async fn delete_vocabulary(conn: &mut AnyConnection, id: &str) -> sqlx::Result<Vec<String>> {
    let datasets: Vec<(String,)> = sqlx::query_as(
        "SELECT DISTINCT pt.package_id FROM package_tag pt JOIN tag t ON t.id = pt.tag_id \
         WHERE t.vocabulary_id = $1",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    sqlx::query(
        "DELETE FROM package_tag WHERE tag_id IN (SELECT id FROM tag WHERE vocabulary_id = $1)",
    )
    .bind(id)
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM tag WHERE vocabulary_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM vocabulary WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(datasets.into_iter().map(|(d,)| d).collect())
}

/// A vocabulary's tags, `(id, name)` in creation order.
pub async fn vocabulary_tags(
    conn: &mut AnyConnection,
    vocabulary_id: &str,
) -> sqlx::Result<Vec<(String, String)>> {
    sqlx::query_as("SELECT id, name FROM tag WHERE vocabulary_id = $1 ORDER BY seq, name")
        .bind(vocabulary_id)
        .fetch_all(&mut *conn)
        .await
}

/// A tag by id, or by name within a vocabulary (`''`: free tags): `(id, name, vocabulary_id)`.
pub async fn tag_by_ref(
    conn: &mut AnyConnection,
    r: &str,
    vocabulary_id: &str,
) -> sqlx::Result<Option<(String, String, String)>> {
    sqlx::query_as(
        "SELECT id, name, vocabulary_id FROM tag WHERE id = $1 \
         OR (name = $1 AND vocabulary_id = $2) ORDER BY CASE WHEN id = $1 THEN 0 ELSE 1 END LIMIT 1",
    )
    .bind(r)
    .bind(vocabulary_id)
    .fetch_optional(&mut *conn)
    .await
}

/// Adds a tag to a vocabulary, after its other tags; `false` if it is there already.
pub async fn insert_tag(
    conn: &mut AnyConnection,
    id: &str,
    name: &str,
    vocabulary_id: &str,
) -> sqlx::Result<bool> {
    let r = sqlx::query(
        "INSERT INTO tag (id, name, vocabulary_id, seq) \
         SELECT $1, $2, $3, COALESCE(MAX(seq), 0) + 1 FROM tag WHERE vocabulary_id = $3 \
         ON CONFLICT DO NOTHING",
    )
    .bind(id)
    .bind(name)
    .bind(vocabulary_id)
    .execute(&mut *conn)
    .await?;
    Ok(r.rows_affected() == 1)
}

/// Deletes a tag and its dataset links; returns the ids of the datasets that carried it.
pub async fn delete_tag(conn: &mut AnyConnection, id: &str) -> sqlx::Result<Vec<String>> {
    let datasets: Vec<(String,)> =
        sqlx::query_as("SELECT DISTINCT package_id FROM package_tag WHERE tag_id = $1")
            .bind(id)
            .fetch_all(&mut *conn)
            .await?;
    sqlx::query("DELETE FROM package_tag WHERE tag_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM tag WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(datasets.into_iter().map(|(d,)| d).collect())
}
