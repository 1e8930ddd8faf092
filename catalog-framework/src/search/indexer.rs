//! Keeps the search index in step with the store.
//!
//! Every write to a dataset (its row or its memberships) inserts a row into `search_outbox`,
//! by database triggers, in the same transaction as the write. After a write action commits,
//! [`SearchService::sync`] drains the outbox into the backend before the response is sent, so
//! a search right after a successful write sees it. A crash between the commit and the sync
//! leaves the rows in the outbox; the next start drains them.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use serde_json::{json, Value};

use super::{IndexDocument, SearchBackend};
use crate::authz::dataset_labels;
use crate::context::{ActionContext, AppState};
use crate::store::RowExt;

/// Datasets drained from the outbox per backend batch.
const BATCH: i64 = 500;

/// The chosen backend plus the indexer's bookkeeping.
pub struct SearchService {
    pub backend: Arc<dyn SearchBackend>,
    /// One drain at a time; a writer that waits here finds its rows already indexed.
    sync_lock: tokio::sync::Mutex<()>,
    /// While a rebuild runs: the datasets changed meanwhile, replayed into the new index.
    rebuild_dirty: std::sync::Mutex<Option<HashSet<String>>>,
}

/// What a rebuild did.
#[derive(Debug, Default)]
pub struct RebuildReport {
    pub indexed: usize,
    /// `(dataset id, error)` of the datasets that could not be indexed.
    pub failed: Vec<(String, String)>,
}

/// What `search-index check` found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    pub checked: usize,
    /// In the store and searchable, but not in the index.
    pub missing: Vec<String>,
    /// In the index with another `metadata_modified` than the store's.
    pub stale: Vec<String>,
    /// In the index but gone from the store (or removed as deleted).
    pub extra: Vec<String>,
}

impl SearchService {
    pub fn new(backend: Arc<dyn SearchBackend>) -> SearchService {
        SearchService {
            backend,
            sync_lock: Default::default(),
            rebuild_dirty: Default::default(),
        }
    }

    /// Drains the outbox into the index. Returns how many datasets were (re)indexed or removed.
    pub async fn sync(app: &AppState) -> anyhow::Result<usize> {
        let svc = &app.search;
        let _guard = svc.sync_lock.lock().await;
        let mut total = 0;
        loop {
            let rows =
                sqlx::query("SELECT seq, package_id FROM search_outbox ORDER BY seq LIMIT $1")
                    .bind(BATCH)
                    .fetch_all(&app.store.pool)
                    .await?;
            if rows.is_empty() {
                return Ok(total);
            }
            let seqs: Vec<String> = rows.iter().map(|r| r.i("seq").to_string()).collect();
            let ids: BTreeSet<String> = rows.iter().map(|r| r.s("package_id")).collect();
            // Before the documents are built, so that they are not built from the cache.
            app.package_cache.invalidate(&ids);
            let (upserts, deletes) = documents(app, &ids).await?;
            total += ids.len();
            svc.backend.apply(upserts, deletes).await?;
            if let Some(dirty) = svc.rebuild_dirty.lock().expect("poisoned").as_mut() {
                dirty.extend(ids.iter().cloned());
            }
            // Exactly the rows read: on PostgreSQL a lower seq may still commit later.
            let _w = app.store.lock_writes().await;
            sqlx::query(&format!(
                "DELETE FROM search_outbox WHERE seq IN ({})",
                seqs.join(",")
            ))
            .execute(&app.store.pool)
            .await?;
        }
    }

    /// Rebuilds the whole index into a fresh one, swapped in at the end; the old index serves
    /// meanwhile. Datasets that fail are skipped and reported. `progress(done, total)`.
    pub async fn rebuild(
        app: &AppState,
        progress: &(dyn Fn(usize, usize) + Send + Sync),
    ) -> anyhow::Result<RebuildReport> {
        let svc = &app.search;
        *svc.rebuild_dirty.lock().expect("poisoned") = Some(HashSet::new());
        let result = Self::rebuild_inner(app, progress).await;
        *svc.rebuild_dirty.lock().expect("poisoned") = None;
        result
    }

    async fn rebuild_inner(
        app: &AppState,
        progress: &(dyn Fn(usize, usize) + Send + Sync),
    ) -> anyhow::Result<RebuildReport> {
        let svc = &app.search;
        let ids: Vec<String> = sqlx::query("SELECT id FROM package ORDER BY id")
            .fetch_all(&app.store.pool)
            .await?
            .iter()
            .map(|r| r.s("id"))
            .collect();
        let mut report = RebuildReport::default();
        let mut target = svc.backend.rebuild().await?;
        progress(0, ids.len());
        for chunk in ids.chunks(BATCH as usize) {
            let set: BTreeSet<String> = chunk.iter().cloned().collect();
            let (docs, failed) = documents_lenient(app, &set).await;
            report.indexed += docs.len();
            report.failed.extend(failed);
            target.add(docs).await?;
            progress(report.indexed + report.failed.len(), ids.len());
        }
        // Replay what changed meanwhile, then swap, with the drain held off so nothing slips
        // between the replay and the swap.
        let _guard = svc.sync_lock.lock().await;
        let dirty: BTreeSet<String> = svc
            .rebuild_dirty
            .lock()
            .expect("poisoned")
            .take()
            .unwrap_or_default()
            .into_iter()
            .collect();
        if !dirty.is_empty() {
            let (docs, deletes) = documents(app, &dirty).await?;
            target.add(docs).await?;
            target.delete(deletes).await?;
        }
        target.finish().await?;
        Ok(report)
    }

    /// Compares the index with the store.
    pub async fn check(app: &AppState) -> anyhow::Result<CheckReport> {
        let remove_deleted = app.config.catalog.search.remove_deleted_packages;
        let rows = sqlx::query("SELECT id, state, metadata_modified FROM package")
            .fetch_all(&app.store.pool)
            .await?;
        let indexed: std::collections::HashMap<String, String> =
            app.search.backend.indexed().await?.into_iter().collect();
        let mut report = CheckReport::default();
        let mut expected = HashSet::new();
        for r in &rows {
            let id = r.s("id");
            if remove_deleted && r.s("state") == "deleted" {
                continue;
            }
            report.checked += 1;
            match indexed.get(&id) {
                None => report.missing.push(id.clone()),
                Some(m) if *m != r.s("metadata_modified") => report.stale.push(id.clone()),
                Some(_) => {}
            }
            expected.insert(id);
        }
        report.extra = indexed
            .keys()
            .filter(|id| !expected.contains(*id))
            .cloned()
            .collect();
        report.missing.sort();
        report.stale.sort();
        report.extra.sort();
        Ok(report)
    }
}

/// The index documents of `ids`, and the ids to remove (purged, or deleted when deleted
/// datasets are not kept). Any failure fails the batch: the outbox keeps it for a retry.
async fn documents(
    app: &AppState,
    ids: &BTreeSet<String>,
) -> anyhow::Result<(Vec<IndexDocument>, Vec<String>)> {
    let mut upserts = Vec::new();
    let mut deletes = Vec::new();
    let mut vocabularies = None;
    for id in ids {
        match document_with(app, id, &mut vocabularies).await? {
            Some(doc) => upserts.push(doc),
            None => deletes.push(id.clone()),
        }
    }
    Ok((upserts, deletes))
}

/// Like [`documents`] for a rebuild: a failing dataset is reported and skipped.
async fn documents_lenient(
    app: &AppState,
    ids: &BTreeSet<String>,
) -> (Vec<IndexDocument>, Vec<(String, String)>) {
    let mut docs = Vec::new();
    let mut failed = Vec::new();
    let mut vocabularies = None;
    for id in ids {
        match document_with(app, id, &mut vocabularies).await {
            Ok(Some(doc)) => docs.push(doc),
            Ok(None) => {}
            Err(e) => failed.push((id.clone(), e.to_string())),
        }
    }
    (docs, failed)
}

/// Drains the outbox every few seconds: picks up changes made by other processes (the CLI,
/// other API nodes) and retries after a failed sync.
pub fn spawn_background_sync(app: AppState) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(2));
        loop {
            tick.tick().await;
            if let Err(e) = SearchService::sync(&app).await {
                tracing::warn!(error = %e, "background search index sync failed");
            }
            // Site settings another node changed at run time.
            match app.store.pool.acquire().await {
                Ok(mut conn) => {
                    if let Err(e) = app.runtime.refresh(&mut conn).await {
                        tracing::warn!(error = %e, "reloading the runtime configuration failed");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "reloading the runtime configuration failed"),
            }
        }
    })
}

/// The index document of one dataset, `None` if it must not be in the index.
pub async fn document(app: &AppState, id: &str) -> anyhow::Result<Option<IndexDocument>> {
    document_with(app, id, &mut None).await
}

/// [`document`], with the vocabulary names (id → name) read once for a batch of documents:
/// `vocabularies` is filled at the first dataset that has a vocabulary tag.
async fn document_with(
    app: &AppState,
    id: &str,
    vocabularies: &mut Option<std::collections::HashMap<String, String>>,
) -> anyhow::Result<Option<IndexDocument>> {
    let mut ctx = ActionContext::new(app.clone(), None);
    ctx.ignore_auth = true;
    // Read through the call's bundle cache: package_show below reuses this one statement.
    let bundle = ctx
        .package_bundle(id)
        .await
        .map_err(|e| anyhow::anyhow!("reading dataset {id}: {e:?}"))?;
    let Some(row) = bundle.map(|b| b.row.clone()).filter(|r| r.id == id) else {
        return Ok(None);
    };
    if row.state == "deleted" && app.config.catalog.search.remove_deleted_packages {
        return Ok(None);
    }
    let mut params = serde_json::Map::new();
    params.insert("id".into(), json!(id));
    let dict: Value = ctx
        .call("package_show", params)
        .await
        .map_err(|e| anyhow::anyhow!("package_show {id}: {e:?}"))?;
    let labels = dataset_labels(&row, app.config.catalog.auth.allow_dataset_collaborators);
    let has_vocabulary_tags = dict["tags"].as_array().is_some_and(|tags| {
        tags.iter()
            .any(|t| t["vocabulary_id"].as_str().is_some_and(|v| !v.is_empty()))
    });
    if has_vocabulary_tags && vocabularies.is_none() {
        let conn = ctx
            .db()
            .await
            .map_err(|e| anyhow::anyhow!("reading vocabularies: {e:?}"))?;
        let names = crate::store::vocabularies(conn)
            .await?
            .into_iter()
            .map(|v| (v.id, v.name))
            .collect();
        *vocabularies = Some(names);
    }
    let empty = std::collections::HashMap::new();
    Ok(Some(IndexDocument::from_package_with_vocabularies(
        &dict,
        &labels,
        &app.config.catalog.site_id,
        &app.config.catalog.extra_resource_fields,
        vocabularies.as_ref().unwrap_or(&empty),
    )))
}
