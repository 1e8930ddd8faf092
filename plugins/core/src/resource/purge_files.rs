//! The files of purged resources: `dataset_purge` removes the rows and enqueues, in the same
//! transaction, a job that removes their files from the file store (local directory or object
//! store). The job exists exactly when the purge commits, so a crash between the commit and
//! the removal leaves the job to run again, never a file nobody can reach nor a file removed
//! for a purge that rolled back.

use catalog_framework::jobs::JobOptions;
use catalog_framework::prelude::*;

/// The job kind of [`PurgeFiles`].
pub(crate) const KIND: &str = "purge_resource_files";

/// Resource ids one job names at most (a dataset with more resources enqueues several jobs).
const IDS_PER_JOB: usize = 1000;

/// Of the resources a purge removed (`removed`), those that may have a file: the dataset's
/// resources whose `url_type` is `upload` in its last document (`before`), and the deleted ones,
/// which the document no longer lists. A purge of a dataset of links (a harvested one) enqueues
/// nothing.
pub(crate) fn may_have_files(before: &Value, removed: Vec<String>) -> Vec<String> {
    let listed: std::collections::HashMap<&str, bool> = before["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| Some((r["id"].as_str()?, r["url_type"] == "upload")))
        .collect();
    removed
        .into_iter()
        .filter(|id| listed.get(id.as_str()).copied().unwrap_or(true))
        .collect()
}

/// Enqueues, in the calling action's transaction, the removal of these resources' files.
pub(crate) async fn enqueue(
    ctx: &mut ActionContext,
    dataset_id: &str,
    resource_ids: Vec<String>,
) -> CkanResult<()> {
    for chunk in resource_ids.chunks(IDS_PER_JOB) {
        let opts = JobOptions::default().with_title(format!(
            "Remove the files of dataset {dataset_id}'s purged resources"
        ));
        ctx.enqueue_job(KIND, json!({ "resource_ids": chunk }), opts)
            .await?;
    }
    Ok(())
}

/// Removes the file of each resource in `resource_ids` (a resource without one is skipped), and
/// answers how many ids it went through. Safe to run again: a file already gone is skipped.
pub(crate) struct PurgeFiles;

#[async_trait]
impl JobHandler for PurgeFiles {
    async fn run(&self, app: &AppState, payload: &Value) -> anyhow::Result<Value> {
        let ids = payload
            .get("resource_ids")
            .and_then(Value::as_array)
            .ok_or_else(|| anyhow::anyhow!("resource_ids must be a list of resource ids"))?;
        for id in ids {
            let id = id
                .as_str()
                .ok_or_else(|| anyhow::anyhow!("resource_ids must be a list of strings"))?;
            app.files.delete(id).await?;
        }
        Ok(json!({ "resource_ids": ids.len() }))
    }
}

register_job_handler!(KIND, PurgeFiles);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_uploads_and_deleted_resources_may_have_files() {
        let before = json!({"resources": [
            {"id": "a", "url_type": "upload"},
            {"id": "b", "url_type": ""},
            {"id": "c"},
        ]});
        let removed = ["a", "b", "c", "gone"].map(String::from).to_vec();
        assert_eq!(may_have_files(&before, removed), ["a", "gone"]);
        assert!(may_have_files(&json!({}), Vec::new()).is_empty());
    }
}
