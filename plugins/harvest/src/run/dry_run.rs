//! A dry run (`catalog harvest dry-run`): a source read as a run would read it, writing
//! nothing.

use std::collections::{HashMap, HashSet};

use catalog_framework::prelude::*;

use super::import::content_hash;
use crate::harvester::{self, GatherContext};
use crate::store::{self, ObjectRow};

/// Reads a source as a run would, writing nothing: how many records would be added, updated,
/// left alone, and how many datasets deleted.
pub(crate) async fn dry_run(
    app: &AppState,
    source_ref: &str,
    force_all: bool,
) -> anyhow::Result<Value> {
    let mut conn = app.store.pool.acquire().await?;
    let pkg = catalog_framework::store::package_by_ref(&mut conn, source_ref)
        .await?
        .filter(|p| p.dataset_type == crate::source::SOURCE_TYPE)
        .ok_or_else(|| anyhow::anyhow!("no harvest source {source_ref}"))?;
    let row = store::source(&mut conn, &pkg.id)
        .await?
        .ok_or_else(|| anyhow::anyhow!("no harvest source {source_ref}"))?;
    let h = harvester::harvester(app, &row.source_type)
        .ok_or_else(|| anyhow::anyhow!("no harvester for source type {}", row.source_type))?;
    let settings = crate::settings(app).clone();
    let fetch = settings.fetch_config(&app.config.catalog.fetch);
    let source = crate::source::harvester_source(&row, pkg.owner_org.clone());
    let since = if force_all {
        None
    } else {
        store::last_error_free_job(&mut conn, &row.id, "")
            .await?
            .and_then(|j| j.gather_started)
    };
    drop(conn);
    let cx = GatherContext {
        app,
        source: &source,
        fetch: &fetch,
        settings: &settings,
        since: since.as_deref(),
    };
    let mut cursor = h.first_page(&source);
    let mut cursors = HashSet::new();
    let mut guids = HashSet::new();
    let (mut pages, mut new, mut changed, mut unchanged) = (0u64, 0u64, 0u64, 0u64);
    let mut errors: Vec<String> = Vec::new();
    loop {
        if pages >= settings.max_pages {
            errors.push(format!("more than {} pages", settings.max_pages));
            break;
        }
        if !cursors.insert(cursor.to_string()) {
            errors.push(format!("the paging comes back to {cursor}"));
            break;
        }
        let page = match h.gather_page(&cx, &cursor).await {
            Ok(p) => p,
            Err(e) => {
                errors.push(e);
                break;
            }
        };
        errors.extend(page.errors.iter().cloned());
        let page_guids: Vec<String> = page.records.iter().map(|r| r.guid.clone()).collect();
        let mut conn = app.store.pool.acquire().await?;
        let currents: HashMap<String, ObjectRow> =
            store::current_objects_by_guid(&mut conn, &row.id, &page_guids)
                .await?
                .into_iter()
                .map(|o| (o.guid.clone(), o))
                .collect();
        drop(conn);
        for r in page.records {
            if !guids.insert(r.guid.clone()) {
                continue;
            }
            match (&r.dataset, currents.get(&r.guid)) {
                (None, _) => unchanged += 1,
                (Some(_), None) => new += 1,
                (Some(d), Some(c)) => {
                    if !force_all && c.content_hash.as_deref() == Some(&content_hash(d, &source)) {
                        unchanged += 1;
                    } else {
                        changed += 1;
                    }
                }
            }
        }
        pages += 1;
        match page.next {
            Some(next) => cursor = next,
            None => break,
        }
    }
    let mut conn = app.store.pool.acquire().await?;
    let current = store::current_guids(&mut conn, &row.id).await?;
    let missing = current.iter().filter(|g| !guids.contains(*g)).count();
    let policy = match source.config.get("delete_missing") {
        Some(Value::Bool(false)) => "keep",
        Some(Value::String(s)) if s == "mark" => "mark",
        _ => "delete",
    };
    Ok(json!({
        "source": pkg.name,
        "pages": pages,
        "records": guids.len(),
        "would_add": new,
        "would_update": changed,
        "not_modified": unchanged,
        "missing_from_source": missing,
        "missing_policy": policy,
        "would_delete": if errors.is_empty() && policy == "delete" { missing } else { 0 },
        "errors": errors,
    }))
}
