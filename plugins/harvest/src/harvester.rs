//! The plugin's extension point: a [`Harvester`] reads one kind of source (`source_type`) page
//! by page. The engine (`crate::run`) does the rest the same way for every harvester: one
//! durable background job per page, one harvest object per record, unchanged records skipped
//! by content hash, writes in batches, deletions after a complete walk.

use catalog_framework::prelude::*;
use catalog_framework::store::config::FetchConfig;

use crate::settings::HarvestSettings;

/// What `harvesters_info_show` lists of a harvester (ckanext-harvest's `info()`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HarvesterInfo {
    /// The `source_type` sources name it by.
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
}

/// The source a harvester reads, as the engine hands it over.
#[derive(Debug, Clone)]
pub struct Source {
    pub id: String,
    pub url: String,
    pub title: String,
    /// The source's organization (the harvested datasets' default `owner_org`).
    pub owner_org: Option<String>,
    /// The parsed `config` (an empty object when there is none).
    pub config: Map<String, Value>,
    /// The key sent to the source (the CKAN harvester's `api_key`): only the source row has it.
    pub api_key: Option<String>,
}

/// What a harvester may use while it reads a page.
pub struct GatherContext<'a> {
    pub app: &'a AppState,
    pub source: &'a Source,
    /// The fetch rules (`catalog.fetch.*` with `catalog.harvest.*`'s timeouts, size cap and
    /// allowed hosts): every request to the source goes through the app's fetcher
    /// (`app.fetcher`, under `catalog_framework::fetch`'s rules) with these.
    pub fetch: &'a FetchConfig,
    pub settings: &'a HarvestSettings,
    /// When the run is incremental (not `force_all`, and an earlier run of the source finished
    /// without errors): the time that run's gather started, as stored.
    pub since: Option<&'a str>,
}

/// One record of a source: what becomes (or stays) one dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The source's identity of the record: one dataset per source and guid.
    pub guid: String,
    /// The dataset dict to create or update, or `None` for a record the source only lists
    /// (it still exists and is not modified: the CKAN harvester's listing of an incremental
    /// run, so that deletions can be found).
    pub dataset: Option<Map<String, Value>>,
    /// The record as read (kept on its harvest object, `harvest_object_show`'s `content`).
    pub content: Option<String>,
    /// The record's own modification time, when the source gives one.
    pub modified: Option<String>,
}

/// One page of a source.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Page {
    pub records: Vec<Record>,
    /// Where the next page is (what `gather_page` is called with next), or `None` at the end.
    pub next: Option<Value>,
    /// Gather errors about single records (no guid, unreadable): the walk goes on, but the
    /// run is not error-free, so it deletes nothing.
    pub errors: Vec<String>,
}

/// A harvester of one source type.
#[async_trait]
pub trait Harvester: Send + Sync + 'static {
    /// Its name (the `source_type`), title and description.
    fn info(&self) -> HarvesterInfo;

    /// Checks a source's config object (the app is there to check names against its
    /// registries); the message becomes `Error parsing the configuration options: <message>`.
    fn validate_config(&self, _app: &AppState, config: &Map<String, Value>) -> Result<(), String> {
        crate::config::validate_common(config)
    }

    /// Where the first page is.
    fn first_page(&self, source: &Source) -> Value {
        json!({"url": source.url})
    }

    /// Reads one page. An error is a gather error: the run stops there and deletes nothing.
    async fn gather_page(&self, cx: &GatherContext<'_>, cursor: &Value) -> Result<Page, String>;

    /// Of the guids a complete walk did not see, those really gone from the source (the CKAN
    /// harvester asks for each one). By default all of them.
    async fn confirm_missing(
        &self,
        _cx: &GatherContext<'_>,
        guids: Vec<String>,
    ) -> Result<Vec<String>, String> {
        Ok(guids)
    }

    /// Whether a record's dataset keeps the local name once created (ckanext-dcat's rule), or
    /// takes the source's `name` each time (the CKAN harvester's remote name).
    fn keeps_local_name(&self) -> bool {
        true
    }

    /// Whether a new dataset may take the source record's `id` (the CKAN harvester keeps the
    /// remote ids when they are free here).
    fn keeps_source_id(&self) -> bool {
        false
    }

    /// Last changes to a dataset dict inside the writing transaction, where local lookups are
    /// possible (the CKAN harvester's `remote_groups` / `remote_orgs`). Nothing by default.
    async fn prepare(
        &self,
        _ctx: &mut ActionContext,
        _source: &Source,
        _dataset: &mut Map<String, Value>,
    ) -> Result<(), String> {
        Ok(())
    }
}

catalog_framework::extension_point!(
    /// A [`Harvester`], submitted with [`register_harvester!`](crate::register_harvester).
    pub HarvesterRegistration, Box<dyn Harvester>,
    collected("harvesters", "harvester")
);

/// Registers a [`Harvester`] under its `source_type`: `register_harvester!("ckan", Ckan);`
#[macro_export]
macro_rules! register_harvester {
    ($name:expr, $value:expr) => {
        $crate::__private::register_at!($crate::harvester::HarvesterRegistration, $name, $value, 0);
    };
}

/// The enabled harvester of a source type.
pub(crate) fn harvester(
    app: &AppState,
    source_type: &str,
) -> Option<std::sync::Arc<Box<dyn Harvester>>> {
    app.registry
        .extensions::<HarvesterRegistration>()
        .get(source_type)
        .cloned()
}

/// The enabled source types, sorted (what the unknown-type message lists).
pub(crate) fn source_types(app: &AppState) -> Vec<String> {
    app.registry
        .extensions::<HarvesterRegistration>()
        .keys()
        .cloned()
        .collect()
}
