//! Clearing a source's datasets: `harvest_clear`, the background job that clears a big source
//! a batch per transaction, and [`purge_datasets`], which `harvest_source_clear` also uses for a
//! small one.

use std::time::Duration;

use catalog_framework::prelude::*;

use super::finish::catch_up_derived_state;
use super::{harvest_user, write};
use crate::store;

/// `harvest_clear`: purges a source's datasets a batch per transaction, then its history.
pub(crate) struct ClearSource;

#[async_trait]
impl JobHandler for ClearSource {
    fn lane(&self) -> &'static str {
        catalog_framework::jobs::HARVEST_LANE
    }

    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_secs(6 * 3600))
    }

    async fn run(&self, app: &AppState, payload: &Value) -> anyhow::Result<Value> {
        let source_id = payload["source_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let user = harvest_user(app)
            .await
            .map_err(|e| anyhow::anyhow!("{}", e.to_error_object()))?;
        let ids = {
            let mut conn = app.store.pool.acquire().await?;
            store::source_package_ids(&mut conn, &source_id).await?
        };
        let mut purged = 0usize;
        for batch in ids.chunks(200) {
            let batch = batch.to_vec();
            let mut ctx = ActionContext::new(app.clone(), Some(user.clone()));
            ctx.ignore_auth = true;
            ctx.background = true;
            let n = ctx
                .run_write("harvest_clear", move |ctx| {
                    Box::pin(async move {
                        let n = purge_datasets(ctx, &batch).await?;
                        Ok(json!(n))
                    })
                })
                .await
                .map_err(|e| anyhow::anyhow!("{}", e.to_error_object()))?;
            purged += n.as_u64().unwrap_or(0) as usize;
        }
        let id = source_id.clone();
        write(app, move |c| {
            Box::pin(async move { store::clear_history(c, &id, false).await })
        })
        .await?;
        catch_up_derived_state(app).await;
        Ok(json!({"purged": purged}))
    }
}

/// Purges the datasets that still exist among `ids` in the caller's transaction; answers how
/// many it purged.
pub(crate) async fn purge_datasets(ctx: &mut ActionContext, ids: &[String]) -> CkanResult<usize> {
    let mut n = 0;
    for id in ids {
        if ctx.package_row(id).await?.is_none() {
            continue;
        }
        let mut purge = Params::new();
        purge.insert("id".into(), json!(id));
        ctx.call_ignoring_auth("dataset_purge", purge).await?;
        n += 1;
    }
    Ok(n)
}
