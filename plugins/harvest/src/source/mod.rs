//! Harvest sources: datasets of type `harvest` (ckanext-harvest's `IDatasetForm`) whose
//! `harvest_source` row the plugin keeps in step with the dataset, whatever action wrote it.
//!
//! - [`HarvestSourceSchema`] checks what needs no store (required `url` and `source_type`,
//!   `frequency`, `config` as JSON) and keeps `source_type`, `frequency` and `config` as
//!   fields of the dataset; `show` trims the dict to ckanext-harvest's show schema and spreads
//!   the config's keys at the top level.
//! - [`SourceSync`] (an event subscriber, in the writing transaction) checks what needs the
//!   registry and the store — a registered source type, the harvester's own config check, a
//!   url no other source has with the same config, a url the server may fetch — and writes
//!   the `harvest_source` row; a deleted source is deactivated and its new jobs aborted.
//! - A source's `api_key` never enters the dataset: `harvest_source_create`/`_update`/`_patch`
//!   take it out of `config` and keep it in the source row, and only sysadmins see it.

pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod show;

use catalog_framework::prelude::*;
use catalog_framework::store::PackageRow;
use catalog_plugin_schema::DefaultDatasetSchema;

use crate::harvester::{self, Source};
use crate::store::{self, SourceRow};

/// The dataset type of a harvest source.
pub(crate) const SOURCE_TYPE: &str = "harvest";

/// ckanext-harvest's `UPDATE_FREQUENCIES`.
pub(crate) const FREQUENCIES: &[&str] =
    &["MANUAL", "MONTHLY", "WEEKLY", "BIWEEKLY", "DAILY", "ALWAYS"];

/// The keys ckanext-harvest's show schema keeps (the config's keys are added to them).
const SHOWN_KEYS: &[&str] = &[
    "id",
    "name",
    "title",
    "type",
    "url",
    "notes",
    "owner_org",
    "organization",
    "private",
    "state",
    "metadata_created",
    "metadata_modified",
    "creator_user_id",
    "source_type",
    "frequency",
    "config",
    "extras",
    "resources",
    "tags",
    "groups",
    "relationships_as_subject",
    "relationships_as_object",
];

/// A url as the uniqueness check compares it (ckanext-harvest's `harvest_source_url_validator`):
/// no query, parameters or fragment, no default port, no trailing `/`.
pub(crate) fn normalize_url(url: &str) -> String {
    let url = url.trim();
    let Ok(mut u) = reqwest::Url::parse(url) else {
        return url.trim_end_matches('/').to_string();
    };
    u.set_query(None);
    // A default port (`:80` for http, `:443` for https) is dropped by the parser itself.
    u.set_fragment(None);
    let mut s = u.to_string();
    // `;params` of the last path segment.
    if let Some(semi) = s.rfind(';') {
        if !s[semi..].contains('/') {
            s.truncate(semi);
        }
    }
    s.trim_end_matches('/').to_string()
}

/// The config text as shown: with the source's api key put back for those who may see it.
pub(crate) fn config_for(config: &str, api_key: Option<&str>, show_key: bool) -> Value {
    let (true, Some(key)) = (show_key, api_key) else {
        return json!(config);
    };
    let mut obj = match serde_json::from_str::<Value>(config) {
        Ok(Value::Object(o)) => o,
        _ => Map::new(),
    };
    obj.insert("api_key".into(), json!(key));
    json!(Value::Object(obj).to_string())
}

/// The config object of a source (empty when there is none or it is not an object).
pub(crate) fn config_object(config: &str) -> Map<String, Value> {
    match serde_json::from_str::<Value>(config) {
        Ok(Value::Object(o)) => o,
        _ => Map::new(),
    }
}

/// What the harvester of a source is handed.
pub(crate) fn harvester_source(row: &SourceRow, owner_org: Option<String>) -> Source {
    Source {
        id: row.id.clone(),
        url: row.url.clone(),
        title: row.title.clone(),
        owner_org,
        config: config_object(&row.config),
        api_key: row.api_key.clone(),
    }
}

/// Datasets of type `harvest`.
pub(crate) struct HarvestSourceSchema;

impl DatasetSchema for HarvestSourceSchema {
    fn validate(&self, data: &mut Params, ctx: &SchemaContext<'_>) -> CkanResult<()> {
        let source_type = data.remove("source_type");
        let frequency = data.remove("frequency");
        let config = data.remove("config");
        let mut errors = validation();
        if let Err(e) = DefaultDatasetSchema.validate(data, ctx) {
            if e.kind != ErrorKind::Validation {
                return Err(e);
            }
            for (field, messages) in e.body {
                errors.set(&field, messages);
            }
        }
        match data.get("url") {
            Some(Value::String(u)) if !u.trim().is_empty() => {
                let trimmed = u.trim().to_string();
                data.insert("url".into(), json!(trimmed));
            }
            _ => errors.push("url", "Missing value"),
        }
        match &source_type {
            Some(Value::String(t)) if !t.trim().is_empty() => {
                data.insert("source_type".into(), json!(t.trim()));
            }
            Some(v) if !v.is_null() && !v.is_string() => {
                errors.push("source_type", "Must be a string")
            }
            _ => errors.push("source_type", "Missing value"),
        }
        match &frequency {
            None | Some(Value::Null) => {}
            Some(Value::String(f)) => {
                let upper = if f.trim().is_empty() {
                    "MANUAL".to_string()
                } else {
                    f.trim().to_uppercase()
                };
                if FREQUENCIES.contains(&upper.as_str()) {
                    data.insert("frequency".into(), json!(upper));
                } else {
                    errors.push("frequency", format!("Frequency {f} not recognised"));
                }
            }
            Some(other) => errors.push("frequency", format!("Frequency {other} not recognised")),
        }
        match config {
            None | Some(Value::Null) => {}
            Some(Value::String(c)) if c.trim().is_empty() => {
                data.insert("config".into(), json!(""));
            }
            Some(c) => {
                let parsed = match &c {
                    Value::String(text) => serde_json::from_str::<Value>(text),
                    other => Ok(other.clone()),
                };
                match parsed {
                    Ok(Value::Object(o)) if o.contains_key("api_key") => errors.push(
                        "config",
                        "Error parsing the configuration options: api_key is set with \
                         harvest_source_create, harvest_source_update or harvest_source_patch, \
                         which keep it out of the dataset",
                    ),
                    Ok(Value::Object(o)) => {
                        data.insert("config".into(), json!(Value::Object(o).to_string()));
                    }
                    Ok(_) => errors.push(
                        "config",
                        "Error parsing the configuration options: the configuration must be a JSON object",
                    ),
                    Err(e) => errors.push(
                        "config",
                        format!("Error parsing the configuration options: {e}"),
                    ),
                }
            }
        }
        errors.finish()
    }

    fn show(&self, dict: &mut Params) {
        DefaultDatasetSchema.show(dict);
        dict.retain(|k, _| SHOWN_KEYS.contains(&k.as_str()));
        if let Some(Value::Array(extras)) = dict.get("extras") {
            if extras.is_empty() {
                dict.remove("extras");
            }
        }
        let spread = dict
            .get("config")
            .and_then(Value::as_str)
            .filter(|c| !c.trim().is_empty())
            .map(serde_json::from_str::<Value>);
        match spread {
            Some(Ok(Value::Object(o))) => {
                for (k, v) in o {
                    if !dict.contains_key(&k) {
                        dict.insert(k, v);
                    }
                }
            }
            Some(_) => {
                dict.insert("config".into(), Value::Null);
            }
            None => {}
        }
    }
}

/// Keeps `harvest_source` in step with the harvest datasets, and checks what the schema
/// cannot.
pub(crate) struct SourceSync;

#[async_trait]
impl EventSubscriber for SourceSync {
    async fn on_event(&self, ctx: &mut ActionContext, event: &DomainEvent) -> CkanResult<()> {
        if event.entity != Entity::Package {
            return Ok(());
        }
        let is_source = |d: &Option<Value>| {
            d.as_ref()
                .and_then(|d| d.get("type"))
                .and_then(Value::as_str)
                == Some(SOURCE_TYPE)
        };
        match event.change {
            Change::Created | Change::Updated if is_source(&event.after) => {
                let after = event.after.as_ref().and_then(Value::as_object);
                let Some(after) = after else { return Ok(()) };
                check_and_save(ctx, after).await
            }
            Change::Deleted if is_source(&event.before) || is_source(&event.after) => {
                store::deactivate_source(ctx.db().await?, &event.id).await?;
                Ok(())
            }
            Change::Purged if is_source(&event.before) => {
                store::clear_history(ctx.db().await?, &event.id, false).await?;
                store::delete_source(ctx.db().await?, &event.id).await?;
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// The checks that need the registry and the store, then the source row.
async fn check_and_save(ctx: &mut ActionContext, d: &Map<String, Value>) -> CkanResult<()> {
    let id = d
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let url = d
        .get("url")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let source_type = d
        .get("source_type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let config = d
        .get("config")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut errors = validation();
    match harvester::harvester(&ctx.app, &source_type) {
        None => {
            let types: Vec<String> = harvester::source_types(&ctx.app)
                .into_iter()
                .map(|t| format!("'{t}'"))
                .collect();
            errors.push(
                "source_type",
                format!(
                    "Unknown harvester type: {source_type}. Registered types: [{}]",
                    types.join(", ")
                ),
            );
        }
        Some(h) => {
            if let Err(e) = h.validate_config(&ctx.app, &config_object(&config)) {
                errors.push(
                    "config",
                    format!("Error parsing the configuration options: {e}"),
                );
            }
        }
    }
    let settings = crate::settings(&ctx.app);
    let fetch = settings.fetch_config(&ctx.config().catalog.fetch);
    if let Err(e) = check_source_address(&fetch, &url) {
        errors.push("url", e);
    }
    let normalized = normalize_url(&url);
    let clash = store::source_urls(ctx.db().await?, Some(&id))
        .await?
        .into_iter()
        .any(|(u, c)| normalize_url(&u) == normalized && c == config);
    if clash {
        errors.push(
            "url",
            format!(
                "There already is a Harvest Source for this URL (& config): url={normalized} config={config}"
            ),
        );
    }
    errors.finish()?;
    let existing = store::source(ctx.db().await?, &id).await?;
    let row = SourceRow {
        id: id.clone(),
        url,
        title: d
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        description: String::new(),
        config,
        created: existing
            .as_ref()
            .map(|s| s.created.clone())
            .unwrap_or_else(store::now),
        source_type,
        active: d.get("state").and_then(Value::as_str).unwrap_or("active") == "active",
        user_id: String::new(),
        publisher_id: d
            .get("owner_org")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        frequency: d
            .get("frequency")
            .and_then(Value::as_str)
            .unwrap_or("MANUAL")
            .to_string(),
        next_run: None,
        api_key: None,
    };
    store::save_source(ctx.db().await?, &row).await?;
    if !row.active {
        store::deactivate_source(ctx.db().await?, &id).await?;
    }
    Ok(())
}

/// A source url the server may fetch, as far as it can be told without a lookup (this runs
/// inside the writing transaction, and a slow resolver must not hold it):
/// [`catalog_framework::fetch::check_address`]. Every fetch checks again, with every address
/// the name resolves to.
fn check_source_address(
    fetch: &catalog_framework::store::config::FetchConfig,
    url: &str,
) -> Result<(), String> {
    catalog_framework::fetch::check_address(fetch, url)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The source dataset of an id or name, or ckanext-harvest's
/// `Harvest source <id> does not exist`.
pub(crate) async fn dataset(ctx: &mut ActionContext, id_or_name: &str) -> CkanResult<PackageRow> {
    ctx.package_row(id_or_name)
        .await?
        .filter(|p| p.dataset_type == SOURCE_TYPE)
        .ok_or_else(|| not_found(format!("Harvest source {id_or_name} does not exist")))
}

/// [`dataset`], once the caller passes `auth` on it (given the source's id as `source_id`).
pub(crate) async fn dataset_checked(
    ctx: &mut ActionContext,
    id_or_name: &str,
    auth: &str,
) -> CkanResult<PackageRow> {
    let pkg = dataset(ctx, id_or_name).await?;
    let mut p = Params::new();
    p.insert("source_id".into(), json!(pkg.id));
    ctx.check_access(auth, &p).await?;
    Ok(pkg)
}

/// The source dataset and row of an id or name, or CKAN's not-found.
pub(crate) async fn load(
    ctx: &mut ActionContext,
    id_or_name: &str,
) -> CkanResult<(PackageRow, SourceRow)> {
    let pkg = ctx
        .package_row(id_or_name)
        .await?
        .filter(|p| p.dataset_type == SOURCE_TYPE)
        .ok_or_else(|| not_found("Harvest source not found"))?;
    let row = store::source(ctx.db().await?, &pkg.id)
        .await?
        .ok_or_else(|| not_found("Harvest source not found"))?;
    Ok((pkg, row))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_compare_without_query_default_port_and_slash() {
        assert_eq!(
            normalize_url(" http://data.example.org:80/catalog/?page=2#x "),
            "http://data.example.org/catalog"
        );
        assert_eq!(
            normalize_url("https://data.example.org:443/"),
            "https://data.example.org"
        );
        assert_eq!(
            normalize_url("https://data.example.org:8443/a;b"),
            "https://data.example.org:8443/a"
        );
    }

    #[test]
    fn the_api_key_is_shown_only_when_asked() {
        assert_eq!(
            config_for("{\"a\":1}", Some("k"), false),
            json!("{\"a\":1}")
        );
        let shown = config_for("{\"a\":1}", Some("k"), true);
        let parsed: Value = serde_json::from_str(shown.as_str().unwrap()).unwrap();
        assert_eq!(parsed, json!({"a": 1, "api_key": "k"}));
        assert_eq!(config_for("", None, true), json!(""));
    }
}
