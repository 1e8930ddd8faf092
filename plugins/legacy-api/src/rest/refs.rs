//! References to datasets and groups as each version writes them: version 1 by name, version 2
//! by id (spec §10.1). Inputs accept either; outputs follow the request's version.

use catalog_framework::prelude::*;
use sqlx::AnyConnection;

use crate::common::{LegacyRequest, Version};

/// The table a reference points into.
#[derive(Clone, Copy)]
pub(crate) enum Table {
    Package,
    Group,
}

impl Table {
    fn name(self) -> &'static str {
        match self {
            Table::Package => "package",
            Table::Group => "catalog_group",
        }
    }
}

/// The `(id, name)` of the row a reference (id or name) names.
async fn lookup(
    conn: &mut AnyConnection,
    table: Table,
    reference: &str,
) -> CkanResult<Option<(String, String)>> {
    let sql = format!(
        "SELECT id, name FROM {} WHERE id = $1 OR name = $1",
        table.name()
    );
    let row: Option<(String, String)> = sqlx::query_as(&sql)
        .bind(reference)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(row)
}

/// `(id, name)` in the request version's form.
pub(crate) fn pick(version: Version, id: String, name: String) -> String {
    if version.refs_by_name() {
        name
    } else {
        id
    }
}

/// Rewrites references (ids or names) into the request version's form; an unknown one is kept
/// as given.
pub(crate) async fn convert(
    lr: &LegacyRequest,
    table: Table,
    references: &[String],
) -> CkanResult<Vec<String>> {
    let mut ctx = lr.context();
    let conn = ctx.db().await?;
    let mut out = Vec::with_capacity(references.len());
    for r in references {
        out.push(match lookup(conn, table, r).await? {
            Some((id, name)) => pick(lr.version, id, name),
            None => r.clone(),
        });
    }
    Ok(out)
}

/// Public active datasets from a query selecting `id, name` (its one parameter bound to
/// `arg`), in the version's form, sorted.
pub(crate) async fn dataset_list(
    lr: &LegacyRequest,
    sql: &str,
    arg: Option<&str>,
) -> CkanResult<Vec<String>> {
    let mut ctx = lr.context();
    let conn = ctx.db().await?;
    let mut q = sqlx::query_as::<_, (String, String)>(sql);
    if let Some(a) = arg {
        q = q.bind(a.to_string());
    }
    let rows = q.fetch_all(&mut *conn).await?;
    let mut out: Vec<String> = rows
        .into_iter()
        .map(|(id, name)| pick(lr.version, id, name))
        .collect();
    out.sort();
    Ok(out)
}
