//! Harvesting (ckanext-harvest's API, with ckanext-dcat's harvesters): a harvest source is a
//! dataset of type `harvest` in an organization; a job reads the source page by page, each page
//! a durable background job, and keeps one dataset per source and guid in step with it —
//! created, updated when its content changed, left alone when not, deleted when a complete run
//! no longer finds it. See docs/HARVEST.md and docs/adr/0010-harvesting.md.
//!
//! # Where things live
//!
//! The source actions are in `source/` and the job actions in `job/`, by verb; a phase of a
//! run is one file of `run/`.
//!
//! - `source/`: the `harvest` dataset type and its sync to the source row (`mod.rs`);
//!   `create.rs` (`harvest_source_create`, `_update`, `_patch`), `show.rs` (`_show`,
//!   `_show_status`, `_list`), `delete.rs` (`_delete`, `_clear`, `_job_history_clear`).
//! - `job/`: `create.rs` (`harvest_job_create`, `harvest_send_job_to_gather_queue`,
//!   `harvest_job_create_all`, `harvest_jobs_run`), `show.rs` (`harvest_job_show`, `_list`,
//!   `_report`), `abort.rs` (`harvest_job_abort`).
//! - `object.rs`: `harvest_object_show`, `harvest_object_list`, `harvesters_info_show`.
//! - `run/`: the engine. `mod.rs` starts a run and holds the `Run` context every phase
//!   shares; `gather.rs` is a page job (`harvest_gather`), `import.rs` a page's records to
//!   datasets, `finish.rs` the end of a run (`harvest_finish`: deletions, stuck jobs),
//!   `clear.rs` the clearing of a source's datasets (`harvest_clear`), `dry_run.rs` a read
//!   that writes nothing.
//! - `store/`: the harvest tables, one file per table (`sources.rs`, `jobs.rs`, `objects.rs`,
//!   `errors.rs`), `history.rs` for deleting across them, `values.rs` for statuses and states.
//! - `harvester.rs`: the extension point, [`harvester::Harvester`]; `harvesters/` the three
//!   built-in ones; `config.rs` the config keys every harvester takes.
//! - `dicts.rs`: the dicts the actions answer with; `auth.rs`: their auth functions;
//!   `settings.rs`: `catalog.harvest.*`.
//! - `scheduler.rs`: `serve`'s schedule; `cli.rs`: `catalog harvest …`.
#![forbid(unsafe_code)]

mod auth;
mod cli;
pub mod config;
mod dicts;
pub mod harvester;
mod harvesters;
mod job;
mod object;
mod run;
mod scheduler;
pub mod settings;
mod source;
mod store;

use catalog_framework::prelude::*;

use auth::{Anyone, LoggedIn, SourceRead, SourceUpdate, SysadminOnly};
pub use harvester::{GatherContext, Harvester, HarvesterInfo, Page, Record, Source};
pub use settings::HarvestSettings;

#[doc(hidden)]
pub mod __private {
    pub use catalog_framework::register_at;
}

/// The plugin: its tables and its settings.
pub struct HarvestPlugin;

const MIGRATIONS: &[Migration] = &[Migration {
    version: "0001_harvest",
    sqlite: include_str!("../migrations/0001_sqlite.sql"),
    postgres: include_str!("../migrations/0001_postgres.sql"),
}];

impl Plugin for HarvestPlugin {
    fn name(&self) -> &'static str {
        "harvest"
    }

    fn migrations(&self) -> &'static [Migration] {
        MIGRATIONS
    }

    fn configure(&self, setup: &mut Setup<'_>) -> anyhow::Result<()> {
        setup.insert(HarvestSettings::from_config(setup.config)?);
        Ok(())
    }

    fn worker_queues(&self) -> Vec<(&'static str, usize)> {
        vec![(run::QUEUE, 1)]
    }
}

/// The checked `catalog.harvest.*` settings.
pub(crate) fn settings(app: &AppState) -> &HarvestSettings {
    static DEFAULT: std::sync::OnceLock<HarvestSettings> = std::sync::OnceLock::new();
    app.extension::<HarvestSettings>()
        .unwrap_or_else(|| DEFAULT.get_or_init(HarvestSettings::default))
}

/// Hides harvest sources from dataset searches that do not ask for them (ckanext-harvest's
/// `before_dataset_search`): `-dataset_type:harvest` joins `fq` unless it names
/// `dataset_type:harvest`.
struct HideSources;

#[async_trait]
impl ChainedAction for HideSources {
    async fn run(
        &self,
        next: &dyn Action,
        ctx: &mut ActionContext,
        mut params: Params,
    ) -> CkanResult<Value> {
        let fq = match params.get("fq") {
            Some(Value::String(s)) => s.clone(),
            None | Some(Value::Null) => String::new(),
            // Other types are the search's to refuse.
            Some(_) => return next.run(ctx, params).await,
        };
        if !fq.contains("dataset_type:harvest") {
            let joined = if fq.trim().is_empty() {
                "-dataset_type:harvest".to_string()
            } else {
                format!("{fq} -dataset_type:harvest")
            };
            params.insert("fq".into(), json!(joined));
        }
        next.run(ctx, params).await
    }
}

register_plugin!(HarvestPlugin);
register_dataset_schema!("harvest", source::HarvestSourceSchema);
register_event_subscriber!("harvest", source::SourceSync);
register_chained_action!("package_search", HideSources);
register_job_handler!(run::GATHER_JOB, run::gather::GatherPage);
register_job_handler!(run::FINISH_JOB, run::finish::FinishRun);
register_job_handler!(run::CLEAR_JOB, run::clear::ClearSource);
catalog_framework::register_service!("harvest_scheduler", scheduler::Scheduler);
catalog_framework::register_cli_command!("harvest", cli::HarvestCommand);

register_auth!(
    "harvest_source_create",
    SourceUpdate("User {user} not authorized to create harvest sources")
);
register_auth!(
    "harvest_source_update",
    SourceUpdate("User {user} not authorized to update harvest source {source}")
);
register_auth!(
    "harvest_source_patch",
    SourceUpdate("User {user} not authorized to update harvest source {source}")
);
register_auth!(
    "harvest_source_delete",
    SourceUpdate("User {user} not authorized to delete harvest source {source}")
);
register_auth!(
    "harvest_source_clear",
    SourceUpdate("User {user} not authorized to clear harvest source {source}")
);
register_auth!(
    "harvest_source_job_history_clear",
    SourceUpdate("User {user} not authorized to clear harvest source {source}")
);
register_auth!("harvest_source_show", SourceRead);
register_auth!("harvest_source_show_status", SourceRead);
register_auth!("harvest_source_list", Anyone);
register_auth!("harvesters_info_show", Anyone);
register_auth!("harvest_object_show", Anyone);
register_auth!("harvest_object_list", LoggedIn);
register_auth!(
    "harvest_job_create",
    SourceUpdate("User not authorized to create a job for source {source}")
);
register_auth!(
    "harvest_send_job_to_gather_queue",
    SourceUpdate("User not authorized to create a job for source {source}")
);
register_auth!(
    "harvest_job_show",
    SourceUpdate("User {user} not authorized to see jobs from source {source}")
);
register_auth!(
    "harvest_job_report",
    SourceUpdate("User {user} not authorized to see jobs from source {source}")
);
register_auth!(
    "harvest_job_list",
    SourceUpdate("User {user} not authorized to list jobs for source {source}")
);
register_auth!(
    "harvest_jobs_run",
    SysadminOnly("Only sysadmins can run the pending harvest jobs")
);
register_auth!(
    "harvest_job_abort",
    SysadminOnly("Only sysadmins can abort harvest jobs")
);
register_auth!(
    "harvest_job_create_all",
    SysadminOnly("Only sysadmins can create harvest jobs for all sources")
);

register_typed_actions! {
    write harvest_source_create(source::create::HarvestSourceCreateParams) => source::create::harvest_source_create;
    write harvest_source_update(source::create::HarvestSourceUpdateParams) => source::create::harvest_source_update;
    write harvest_source_patch(source::create::HarvestSourcePatchParams) => source::create::harvest_source_patch;
    write harvest_source_delete(source::delete::HarvestSourceDeleteParams) => source::delete::harvest_source_delete;
    write harvest_source_clear(source::delete::HarvestSourceClearParams) => source::delete::harvest_source_clear;
    write harvest_source_job_history_clear(source::delete::HarvestSourceJobHistoryClearParams) => source::delete::harvest_source_job_history_clear;
    read harvest_source_show(source::show::HarvestSourceShowParams) => source::show::harvest_source_show;
    read harvest_source_show_status(source::show::HarvestSourceShowStatusParams) => source::show::harvest_source_show_status;
    read harvest_source_list(source::show::HarvestSourceListParams) => source::show::harvest_source_list;
    read harvesters_info_show(object::HarvestersInfoShowParams) => object::harvesters_info_show;
    write harvest_job_create(job::create::HarvestJobCreateParams) => job::create::harvest_job_create;
    write harvest_send_job_to_gather_queue(job::create::HarvestSendJobToGatherQueueParams) => job::create::harvest_send_job_to_gather_queue;
    write harvest_job_create_all(job::create::HarvestJobCreateAllParams) => job::create::harvest_job_create_all;
    write harvest_jobs_run(job::create::HarvestJobsRunParams) => job::create::harvest_jobs_run;
    read harvest_job_show(job::show::HarvestJobShowParams) => job::show::harvest_job_show;
    read harvest_job_list(job::show::HarvestJobListParams) => job::show::harvest_job_list;
    read harvest_job_report(job::show::HarvestJobReportParams) => job::show::harvest_job_report;
    write harvest_job_abort(job::abort::HarvestJobAbortParams) => job::abort::harvest_job_abort;
    read harvest_object_show(object::HarvestObjectShowParams) => object::harvest_object_show;
    read harvest_object_list(object::HarvestObjectListParams) => object::harvest_object_list;
}
