//! Dataset collaborators (`collaborator`): users given a capacity on one dataset.

use sqlx::any::AnyRow;
use sqlx::AnyConnection;

use super::rows::RowExt;

/// A row of `collaborator`.
#[derive(Debug, Clone)]
pub struct CollaboratorRow {
    pub package_id: String,
    pub user_id: String,
    pub capacity: String,
    /// When the collaboration was created or its capacity last changed (ISO time).
    pub modified: String,
}

impl CollaboratorRow {
    fn from_row(r: &AnyRow) -> CollaboratorRow {
        CollaboratorRow {
            package_id: r.s("package_id"),
            user_id: r.s("user_id"),
            capacity: r.s("capacity"),
            modified: r.s("modified"),
        }
    }
}

/// Makes a user a collaborator of a dataset, or changes the capacity of one who already is.
pub async fn upsert_collaborator(
    conn: &mut AnyConnection,
    package_id: &str,
    user_id: &str,
    capacity: &str,
    modified: &str,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO collaborator (package_id, user_id, capacity, modified) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (package_id, user_id) DO UPDATE SET capacity = $3, modified = $4",
    )
    .bind(package_id)
    .bind(user_id)
    .bind(capacity)
    .bind(modified)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Removes a user from a dataset's collaborators; false when the user was not one.
pub async fn delete_collaborator(
    conn: &mut AnyConnection,
    package_id: &str,
    user_id: &str,
) -> sqlx::Result<bool> {
    let done = sqlx::query("DELETE FROM collaborator WHERE package_id = $1 AND user_id = $2")
        .bind(package_id)
        .bind(user_id)
        .execute(&mut *conn)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// The collaborators of a dataset, the least recently modified first.
pub async fn package_collaborators(
    conn: &mut AnyConnection,
    package_id: &str,
) -> sqlx::Result<Vec<CollaboratorRow>> {
    collaborator_rows(conn, "package_id", package_id).await
}

/// The collaborations of a user (the datasets it collaborates on), the least recently
/// modified first.
pub async fn user_collaboration_rows(
    conn: &mut AnyConnection,
    user_id: &str,
) -> sqlx::Result<Vec<CollaboratorRow>> {
    collaborator_rows(conn, "user_id", user_id).await
}

/// The rows whose `column` (`package_id` or `user_id`: a fixed name, never input) is `id`,
/// the least recently modified first.
async fn collaborator_rows(
    conn: &mut AnyConnection,
    column: &'static str,
    id: &str,
) -> sqlx::Result<Vec<CollaboratorRow>> {
    let sql = format!(
        "SELECT package_id, user_id, capacity, modified FROM collaborator WHERE {column} = $1 ORDER BY modified"
    );
    let rows = sqlx::query(&sql).bind(id).fetch_all(&mut *conn).await?;
    Ok(rows.iter().map(CollaboratorRow::from_row).collect())
}
