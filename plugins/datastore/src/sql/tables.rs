//! The tables a query names and reads: resource ids and aliases in the SQL replaced by the
//! tables' internal names, and the caller's read access to the resources behind the tables
//! the store reports (`datastore_search_sql`'s auth).

use std::collections::BTreeMap;

use catalog_framework::prelude::*;
use catalog_framework::store::Backend;
use sqlx::Row;

use super::answer::query_error;
use super::lex;

/// Distinct table names a query may give (quoted or after FROM/JOIN), at most.
const MAX_TABLE_NAMES: usize = 1_000;

/// The tokens that may name a table, with the name: a quoted name anywhere; a bare one only
/// where a table is named (after FROM or JOIN), so an alias that is also a common word does
/// not change other queries. Only tokens before `end` (the trailing `;`s left out).
fn table_names<'t>(
    sql: &'t str,
    toks: &'t [lex::Token],
    end: usize,
) -> impl Iterator<Item = (&'t lex::Token, &'t str)> {
    toks.iter()
        .enumerate()
        .filter(move |(_, t)| t.span.end <= end)
        .filter_map(move |(i, t)| {
            let after_from = i.checked_sub(1).is_some_and(|p| {
                toks[p].kind == lex::Kind::Word && {
                    let w = &sql[toks[p].span.clone()];
                    w.eq_ignore_ascii_case("from") || w.eq_ignore_ascii_case("join")
                }
            });
            match &t.kind {
                lex::Kind::Quoted(n) => Some((t, n.as_str())),
                lex::Kind::Word if after_from => Some((t, &sql[t.span.clone()])),
                _ => None,
            }
        })
}

/// The internal table names of the resources the SQL names (by id or alias), and the SQL
/// with each name replaced; `tables` maps internal names back to those names (for messages).
pub(super) async fn rewrite(
    ctx: &mut ActionContext,
    sql: &str,
    toks: &[lex::Token],
    backend: Backend,
) -> CkanResult<(String, BTreeMap<String, String>)> {
    // The statement without its trailing `;`s (it is wrapped in a subquery).
    let end = toks
        .iter()
        .rposition(|t| !t.is_op(sql, ";"))
        .map_or(0, |p| toks[p].span.end);
    let mut candidates: Vec<&str> = table_names(sql, toks, end)
        .map(|(_, n)| n)
        .filter(|n| !n.is_empty() && n.len() <= 100)
        .collect();
    candidates.sort_unstable();
    candidates.dedup();
    if candidates.len() > MAX_TABLE_NAMES {
        return Err(query_error(format!(
            "The query names more than {MAX_TABLE_NAMES} quoted names or tables"
        )));
    }
    let mut by_name: BTreeMap<String, String> = BTreeMap::new();
    for chunk in candidates.chunks(200) {
        let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("${i}")).collect();
        let marks = marks.join(", ");
        // Resource ids and aliases in one query (the same values serve both halves).
        let q = format!(
            "SELECT resource_id AS name, table_name FROM datastore_table WHERE resource_id IN ({marks}) \
             UNION ALL SELECT a.alias AS name, t.table_name AS table_name FROM datastore_alias a \
             JOIN datastore_table t ON t.resource_id = a.resource_id WHERE a.alias IN ({marks})"
        );
        let mut query = sqlx::query(&q);
        for c in chunk {
            query = query.bind(c.to_string());
        }
        for row in query.fetch_all(ctx.db().await?).await? {
            by_name.insert(row.try_get("name")?, row.try_get("table_name")?);
        }
    }
    let mut out = String::with_capacity(sql.len() + 64);
    let mut last = 0;
    for (t, name) in table_names(sql, toks, end) {
        if let Some(table) = by_name.get(name) {
            out.push_str(&sql[last..t.span.start]);
            out.push_str(&match backend {
                Backend::Postgres => format!("datastore.{}", crate::types::quote(table)),
                Backend::Sqlite => crate::types::quote(table),
            });
            last = t.span.end;
        }
    }
    out.push_str(&sql[last..end]);
    let tables = by_name.into_iter().map(|(n, t)| (t, n)).collect();
    Ok((out, tables))
}

/// The resource ids of internal table names the store reports (all must be DataStore
/// tables); `None` for a name that is not one.
async fn resources_of(
    ctx: &mut ActionContext,
    names: &[String],
) -> CkanResult<Result<Vec<String>, String>> {
    let mut out = Vec::new();
    for name in names {
        let id: Option<String> =
            sqlx::query("SELECT resource_id FROM datastore_table WHERE table_name = $1")
                .bind(name)
                .fetch_optional(ctx.db().await?)
                .await?
                .map(|r| r.try_get("resource_id"))
                .transpose()?;
        match id {
            Some(id) => out.push(id),
            None => return Ok(Err(name.clone())),
        }
    }
    Ok(Ok(out))
}

/// CKAN's `datastore_search_sql` auth: read access to every resource the query reads.
pub(crate) struct SqlAuth;

#[async_trait]
impl AuthFunction for SqlAuth {
    fn allow_anonymous(&self) -> bool {
        true
    }
    async fn check(&self, ctx: &mut ActionContext, data: &Params) -> CkanResult<()> {
        let ids: Vec<String> = data
            .get("resource_ids")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        for id in ids {
            let res = match ctx
                .call_ignoring_auth(
                    "resource_show",
                    Params::from_iter([("id".into(), json!(id))]),
                )
                .await
            {
                Ok(r) => r,
                Err(e) if e.kind == ErrorKind::NotFound => {
                    return Err(not_authorized("Not authorized to read resource."))
                }
                Err(e) => return Err(e),
            };
            let mut p = Params::new();
            p.insert("resource_id".into(), res["id"].clone());
            p.insert("package_id".into(), res["package_id"].clone());
            if !crate::auth::dataset_allows(ctx, "package_show", &p).await? {
                return Err(not_authorized("Not authorized to read resource."));
            }
        }
        Ok(())
    }
}

/// Checks the caller may read the resources behind `tables` (internal names).
pub(crate) async fn check_tables(ctx: &mut ActionContext, tables: &[String]) -> CkanResult<()> {
    let ids = match resources_of(ctx, tables).await? {
        Ok(ids) => ids,
        Err(_) => return Err(not_authorized("Not authorized to read resource.")),
    };
    let mut p = Params::new();
    p.insert("resource_ids".into(), json!(ids));
    ctx.check_access("datastore_search_sql", &p).await
}

/// Replaces internal table names in a store's message with the resource ids they stand for.
pub(crate) fn unrename(msg: &str, tables: &BTreeMap<String, String>) -> String {
    let mut out = msg.replace("datastore.", "");
    for (table, id) in tables {
        out = out.replace(table, id);
    }
    out
}
