//! The `resource_view` table: one row per view, its config as a JSON object.

use catalog_framework::prelude::*;
use catalog_framework::store::placeholders;
use catalog_framework::store::RowExt;
use sqlx::any::AnyRow;
use sqlx::AnyConnection;

/// A view as it is stored.
#[derive(Debug, Clone)]
pub(crate) struct ViewRow {
    pub id: String,
    pub resource_id: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub view_type: String,
    pub order: i64,
    /// The view type's settings, keys in alphabetical order.
    pub config: Map<String, Value>,
}

const COLS: &str = "id, resource_id, title, description, view_type, view_order, config";

impl ViewRow {
    fn from_row(r: &AnyRow) -> ViewRow {
        let config = r
            .os("config")
            .and_then(|c| serde_json::from_str::<Map<String, Value>>(&c).ok())
            .unwrap_or_default();
        ViewRow {
            id: r.s("id"),
            resource_id: r.s("resource_id"),
            title: r.os("title"),
            description: r.os("description"),
            view_type: r.s("view_type"),
            order: r.i("view_order"),
            config,
        }
    }

    /// CKAN's view dict: the columns but `order`, the config's keys flattened in, then the
    /// dataset's id.
    pub(crate) fn to_dict(&self, package_id: &str) -> Value {
        let mut d = Map::new();
        d.insert("id".into(), json!(self.id));
        d.insert("resource_id".into(), json!(self.resource_id));
        d.insert("title".into(), json!(self.title));
        d.insert("description".into(), json!(self.description));
        d.insert("view_type".into(), json!(self.view_type));
        for (k, v) in &self.config {
            d.insert(k.clone(), v.clone());
        }
        d.insert("package_id".into(), json!(package_id));
        Value::Object(d)
    }

    /// The row as CKAN's activity data holds it: the columns with `order` and the config
    /// nested, then the dataset's id.
    pub(crate) fn to_activity_data(&self, package_id: &str) -> Value {
        json!({
            "id": self.id,
            "resource_id": self.resource_id,
            "title": self.title,
            "description": self.description,
            "view_type": self.view_type,
            "order": self.order,
            "config": self.config,
            "package_id": package_id,
        })
    }
}

/// One view by id.
pub(crate) async fn get(conn: &mut AnyConnection, id: &str) -> sqlx::Result<Option<ViewRow>> {
    let row = sqlx::query(&format!("SELECT {COLS} FROM resource_view WHERE id = $1"))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(row.as_ref().map(ViewRow::from_row))
}

/// A resource's views in their order.
pub(crate) async fn of_resource(
    conn: &mut AnyConnection,
    resource_id: &str,
) -> sqlx::Result<Vec<ViewRow>> {
    let rows = sqlx::query(&format!(
        "SELECT {COLS} FROM resource_view WHERE resource_id = $1 ORDER BY view_order, id"
    ))
    .bind(resource_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.iter().map(ViewRow::from_row).collect())
}

/// The highest `view_order` of a resource's views.
pub(crate) async fn max_order(
    conn: &mut AnyConnection,
    resource_id: &str,
) -> sqlx::Result<Option<i64>> {
    let row = sqlx::query("SELECT MAX(view_order) AS m FROM resource_view WHERE resource_id = $1")
        .bind(resource_id)
        .fetch_one(&mut *conn)
        .await?;
    Ok(row.oi("m"))
}

/// Writes a new view.
pub(crate) async fn insert(conn: &mut AnyConnection, v: &ViewRow) -> CkanResult<()> {
    sqlx::query(&format!(
        "INSERT INTO resource_view ({COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7)"
    ))
    .bind(&v.id)
    .bind(&v.resource_id)
    .bind(&v.title)
    .bind(&v.description)
    .bind(&v.view_type)
    .bind(v.order)
    .bind(serde_json::to_string(&v.config)?)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Rewrites a view's columns (all but its id).
pub(crate) async fn update(conn: &mut AnyConnection, v: &ViewRow) -> CkanResult<()> {
    sqlx::query(
        "UPDATE resource_view SET resource_id = $2, title = $3, description = $4, \
         view_type = $5, view_order = $6, config = $7 WHERE id = $1",
    )
    .bind(&v.id)
    .bind(&v.resource_id)
    .bind(&v.title)
    .bind(&v.description)
    .bind(&v.view_type)
    .bind(v.order)
    .bind(serde_json::to_string(&v.config)?)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Sets the order of views: `ids[i]` gets `first + i`.
pub(crate) async fn set_order(
    conn: &mut AnyConnection,
    ids: &[String],
    first: i64,
) -> sqlx::Result<()> {
    for (i, id) in ids.iter().enumerate() {
        sqlx::query("UPDATE resource_view SET view_order = $2 WHERE id = $1")
            .bind(id)
            .bind(first + i as i64)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Deletes one view.
pub(crate) async fn delete(conn: &mut AnyConnection, id: &str) -> sqlx::Result<()> {
    sqlx::query("DELETE FROM resource_view WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Deletes every view of these resources.
pub(crate) async fn delete_of_resources(
    conn: &mut AnyConnection,
    resource_ids: &[String],
) -> sqlx::Result<()> {
    for chunk in resource_ids.chunks(500) {
        let sql = format!(
            "DELETE FROM resource_view WHERE resource_id IN ({})",
            placeholders(chunk.len())
        );
        let mut q = sqlx::query(&sql);
        for id in chunk {
            q = q.bind(id);
        }
        q.execute(&mut *conn).await?;
    }
    Ok(())
}

/// Deletes the views of these types, or every view when `types` is empty (CKAN's
/// `ResourceView.delete_all`).
pub(crate) async fn clear(conn: &mut AnyConnection, types: &[String]) -> sqlx::Result<()> {
    if types.is_empty() {
        sqlx::query("DELETE FROM resource_view")
            .execute(&mut *conn)
            .await?;
        return Ok(());
    }
    for chunk in types.chunks(500) {
        let sql = format!(
            "DELETE FROM resource_view WHERE view_type IN ({})",
            placeholders(chunk.len())
        );
        let mut q = sqlx::query(&sql);
        for t in chunk {
            q = q.bind(t);
        }
        q.execute(&mut *conn).await?;
    }
    Ok(())
}
