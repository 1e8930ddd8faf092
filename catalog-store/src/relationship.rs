//! Dataset relationships (`package_relationship`): a subject dataset, a type from the forward
//! half of CKAN's pairs (`depends_on`, `child_of`, `derives_from`, `links_to`), an object
//! dataset and a comment. A relationship written with a reverse type (`dependency_of`, …) is
//! stored with subject and object swapped, as CKAN stores it.

use sqlx::AnyConnection;

/// One relationship as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RelationshipRow {
    pub id: String,
    pub subject_package_id: String,
    pub object_package_id: String,
    #[sqlx(rename = "type")]
    pub rel_type: String,
    pub comment: Option<String>,
    pub state: String,
}

const COLUMNS: &str = "id, subject_package_id, object_package_id, type, comment, state";

/// The active relationships between two datasets (either may be absent: any dataset), stored
/// with `subject` as subject and `object` as object, of this stored type if given.
pub async fn relationships(
    conn: &mut AnyConnection,
    subject: Option<&str>,
    object: Option<&str>,
    rel_type: Option<&str>,
) -> sqlx::Result<Vec<RelationshipRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM package_relationship WHERE state = 'active' \
         AND ($1 = '' OR subject_package_id = $1) AND ($2 = '' OR object_package_id = $2) \
         AND ($3 = '' OR type = $3) ORDER BY seq"
    );
    sqlx::query_as(&sql)
        .bind(subject.unwrap_or(""))
        .bind(object.unwrap_or(""))
        .bind(rel_type.unwrap_or(""))
        .fetch_all(&mut *conn)
        .await
}

/// Every active relationship that names this dataset as subject or as object.
pub async fn relationships_of(
    conn: &mut AnyConnection,
    package_id: &str,
) -> sqlx::Result<Vec<RelationshipRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM package_relationship WHERE state = 'active' \
         AND (subject_package_id = $1 OR object_package_id = $1) ORDER BY seq"
    );
    sqlx::query_as(&sql)
        .bind(package_id)
        .fetch_all(&mut *conn)
        .await
}

/// The relationship of this stored triple, deleted ones included (CKAN revives a deleted one
/// rather than adding a second).
pub async fn relationship_by_triple(
    conn: &mut AnyConnection,
    subject: &str,
    object: &str,
    rel_type: &str,
) -> sqlx::Result<Option<RelationshipRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM package_relationship \
         WHERE subject_package_id = $1 AND object_package_id = $2 AND type = $3 \
         ORDER BY CASE WHEN state = 'active' THEN 0 ELSE 1 END LIMIT 1"
    );
    sqlx::query_as(&sql)
        .bind(subject)
        .bind(object)
        .bind(rel_type)
        .fetch_optional(&mut *conn)
        .await
}

/// Inserts a relationship or, when its id exists, rewrites its comment and state; either way
/// it goes last in the listing order.
pub async fn save_relationship(conn: &mut AnyConnection, r: &RelationshipRow) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO package_relationship (id, subject_package_id, object_package_id, type, comment, state, seq) \
         VALUES ($1, $2, $3, $4, $5, $6, (SELECT COALESCE(MAX(seq), 0) + 1 FROM package_relationship)) \
         ON CONFLICT (id) DO UPDATE SET comment = excluded.comment, state = excluded.state, seq = excluded.seq",
    )
    .bind(&r.id)
    .bind(&r.subject_package_id)
    .bind(&r.object_package_id)
    .bind(&r.rel_type)
    .bind(&r.comment)
    .bind(&r.state)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Removes every relationship of a purged dataset.
pub async fn purge_relationships_of(
    conn: &mut AnyConnection,
    package_id: &str,
) -> sqlx::Result<()> {
    sqlx::query(
        "DELETE FROM package_relationship WHERE subject_package_id = $1 OR object_package_id = $1",
    )
    .bind(package_id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}
