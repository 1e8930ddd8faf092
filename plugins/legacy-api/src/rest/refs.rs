//! References to datasets and groups as each version writes them: version 1 by name, version 2
//! by id (spec §10.1). Inputs accept either; outputs follow the request's version.

use catalog_framework::prelude::*;
use catalog_framework::store;
use sqlx::AnyConnection;

use crate::common::{LegacyRequest, Version};

/// The table a reference points into.
#[derive(Clone, Copy)]
pub(crate) enum Table {
    Package,
    Group,
}

/// The `(id, name)` of the row a reference (id or name) names.
async fn lookup(
    conn: &mut AnyConnection,
    table: Table,
    reference: &str,
) -> CkanResult<Option<(String, String)>> {
    Ok(match table {
        Table::Package => store::package_ref(conn, reference).await?,
        Table::Group => store::group_ref(conn, reference).await?,
    })
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

/// References `(id, name)` in the version's form, sorted.
pub(crate) fn in_version(lr: &LegacyRequest, rows: Vec<(String, String)>) -> Vec<String> {
    let mut out: Vec<String> = rows
        .into_iter()
        .map(|(id, name)| pick(lr.version, id, name))
        .collect();
    out.sort();
    out
}
