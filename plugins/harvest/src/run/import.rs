//! A page's records to datasets: one harvest object per record, unchanged records skipped by
//! content hash, the others written in batches (a failed batch again one record at a time),
//! each dataset with the object that records it. Also what the import does to a record's
//! dict: the source's bookkeeping dropped, the common config keys applied, the harvest extras
//! added, resource ids kept or freed, a free name found.

use std::collections::{HashMap, HashSet};

use catalog_framework::prelude::*;
use catalog_framework::store::Principal;

use super::{harvest_user, hash_hex, write, Run};
use crate::harvester::{Record, Source};
use crate::store::{self, report, state, ObjectRow};

/// What a page's records came to.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    imported: usize,
    unchanged: usize,
    errored: usize,
}

/// One record to write, with what is known of its dataset here.
#[derive(Clone)]
struct Item {
    object_id: String,
    guid: String,
    dataset: Map<String, Value>,
    /// The dataset of the source and guid, if one exists (in any state).
    existing: Option<String>,
}

/// The content hash of a record: its dataset dict and what the import adds from the source.
pub(super) fn content_hash(dataset: &Map<String, Value>, source: &Source) -> String {
    hash_hex(&[
        &Value::Object(dataset.clone()).to_string(),
        &Value::Object(source.config.clone()).to_string(),
        &source.title,
        source.owner_org.as_deref().unwrap_or(""),
    ])
}

/// A page's records: each recorded as an object of the job, the changed ones written as
/// datasets; answers what they came to.
pub(super) async fn process_records(run: &Run, records: Vec<Record>) -> anyhow::Result<Value> {
    let (records, repeated) = first_of_each_guid(records);
    let guids: Vec<String> = records.iter().map(|r| r.guid.clone()).collect();
    let known = Known::load(run, &guids).await?;
    let plan = plan(run, records, &known);
    insert_objects(&run.app, plan.new_objects).await?;
    let mut counts = Counts {
        unchanged: plan.unchanged,
        ..Counts::default()
    };
    import_items(run, &plan.items, &mut counts).await?;
    Ok(json!({
        "imported": counts.imported,
        "not_modified": counts.unchanged,
        "errored": counts.errored,
        "repeated_guids": repeated,
    }))
}

/// One record per guid in a page (the first); answers them and how many others there were.
fn first_of_each_guid(records: Vec<Record>) -> (Vec<Record>, usize) {
    let mut seen = HashSet::new();
    let mut repeated = 0usize;
    let records: Vec<Record> = records
        .into_iter()
        .filter(|r| {
            let fresh = seen.insert(r.guid.clone());
            if !fresh {
                repeated += 1;
            }
            fresh
        })
        .collect();
    (records, repeated)
}

/// What the store knows of a page's guids.
struct Known {
    /// The job's own objects of them (the page was read before).
    done: HashMap<String, ObjectRow>,
    /// The source's current objects of them.
    currents: HashMap<String, ObjectRow>,
    /// The state of each dataset those current objects name, by id.
    live: HashMap<String, String>,
}

impl Known {
    async fn load(run: &Run, guids: &[String]) -> anyhow::Result<Known> {
        let mut conn = run.app.store.pool.acquire().await?;
        let done: HashMap<String, ObjectRow> =
            store::job_objects_by_guid(&mut conn, &run.job.id, guids)
                .await?
                .into_iter()
                .map(|o| (o.guid.clone(), o))
                .collect();
        let currents: HashMap<String, ObjectRow> =
            store::current_objects_by_guid(&mut conn, &run.source.id, guids)
                .await?
                .into_iter()
                .map(|o| (o.guid.clone(), o))
                .collect();
        let ids: Vec<String> = currents
            .values()
            .filter_map(|o| o.package_id.clone())
            .collect();
        let live: HashMap<String, String> =
            catalog_framework::store::package_summaries(&mut conn, &ids)
                .await?
                .into_iter()
                .map(|p| (p.id, p.state))
                .collect();
        Ok(Known {
            done,
            currents,
            live,
        })
    }
}

/// What a page's records call for: the objects to record and the datasets to write.
#[derive(Default)]
struct Plan {
    new_objects: Vec<ObjectRow>,
    items: Vec<Item>,
    /// Records left alone (their object says `not modified`).
    unchanged: usize,
}

/// Sorts a page's records: those this job already finished are skipped, those whose content
/// hash is unchanged (and whose dataset is active) get an object `not modified`, the others
/// a waiting object and an item to write.
fn plan(run: &Run, records: Vec<Record>, known: &Known) -> Plan {
    let force = run.job.force_all
        || run.source.config.get("force_all").and_then(Value::as_bool) == Some(true);
    let now = store::now();
    let mut plan = Plan::default();
    for r in records {
        let existing_object = known.done.get(&r.guid);
        if existing_object.is_some_and(|o| o.state == state::COMPLETE || o.state == state::ERROR) {
            continue;
        }
        let current = known.currents.get(&r.guid);
        let package = current.and_then(|c| c.package_id.clone());
        let package_state = package.as_ref().and_then(|p| known.live.get(p));
        let hash = r.dataset.as_ref().map(|d| content_hash(d, &run.source));
        let unchanged = match (&r.dataset, current) {
            (None, _) => true,
            (Some(_), Some(c)) => {
                !force
                    && c.content_hash.is_some()
                    && c.content_hash == hash
                    && package_state.is_some_and(|s| s == "active")
            }
            (Some(_), None) => false,
        };
        let object_id = existing_object
            .map(|o| o.id.clone())
            .unwrap_or_else(catalog_framework::store::new_id);
        if existing_object.is_none() {
            plan.new_objects.push(ObjectRow {
                id: object_id.clone(),
                guid: r.guid.clone(),
                current: false,
                gathered: now.clone(),
                fetch_started: None,
                content: r.content.clone(),
                fetch_finished: None,
                import_started: None,
                import_finished: None,
                state: if unchanged {
                    state::COMPLETE.into()
                } else {
                    state::WAITING.into()
                },
                metadata_modified_date: r.modified.clone(),
                retry_times: 0,
                harvest_job_id: run.job.id.clone(),
                harvest_source_id: run.source.id.clone(),
                package_id: if unchanged { package.clone() } else { None },
                report_status: if unchanged {
                    Some(report::NOT_MODIFIED.into())
                } else {
                    None
                },
                content_hash: hash.clone(),
            });
        }
        if unchanged {
            plan.unchanged += 1;
            continue;
        }
        plan.items.push(Item {
            object_id,
            guid: r.guid,
            dataset: r.dataset.unwrap_or_default(),
            existing: package.filter(|p| known.live.contains_key(p)),
        });
    }
    plan
}

/// Records a page's new objects, 200 per write.
async fn insert_objects(app: &AppState, new_objects: Vec<ObjectRow>) -> anyhow::Result<()> {
    for chunk in new_objects.chunks(200) {
        let chunk = chunk.to_vec();
        write(app, move |c| {
            Box::pin(async move {
                for o in &chunk {
                    store::insert_object(c, o).await?;
                }
                Ok(())
            })
        })
        .await?;
    }
    Ok(())
}

/// Writes the items in batches; a batch that fails is written again one item at a time, so
/// that only the failing records are errors. The job's activity is noted after each batch.
async fn import_items(run: &Run, items: &[Item], counts: &mut Counts) -> anyhow::Result<()> {
    let app = &run.app;
    let user = harvest_user(app)
        .await
        .map_err(|e| anyhow::anyhow!("{}", e.to_error_object()))?;
    for batch in items.chunks(run.settings.batch_size) {
        match import_batch(run, &user, batch).await {
            Ok(()) => counts.imported += batch.len(),
            Err(_) if batch.len() > 1 => {
                for one in batch {
                    match import_batch(run, &user, std::slice::from_ref(one)).await {
                        Ok(()) => counts.imported += 1,
                        Err(e) => {
                            counts.errored += 1;
                            record_import_error(app, &one.object_id, &e).await?;
                        }
                    }
                }
            }
            Err(e) => {
                counts.errored += 1;
                record_import_error(app, &batch[0].object_id, &e).await?;
            }
        }
        let id = run.job.id.clone();
        write(app, move |c| {
            Box::pin(async move { store::touch_job(c, &id).await })
        })
        .await?;
    }
    Ok(())
}

async fn record_import_error(app: &AppState, object_id: &str, e: &CkanError) -> anyhow::Result<()> {
    let message = import_error_message(e);
    let id = object_id.to_string();
    write(app, move |c| {
        Box::pin(async move {
            store::add_object_error(c, &id, &message, "Import").await?;
            store::close_object(c, &id, state::ERROR, report::ERRORED).await?;
            Ok(())
        })
    })
    .await
}

/// An import error as ckanext-harvest words it: a validation error's fields, else the message.
fn import_error_message(e: &CkanError) -> String {
    if e.kind == ErrorKind::Validation {
        let mut body = e.to_error_object();
        if let Some(o) = body.as_object_mut() {
            o.remove("__type");
        }
        format!("Invalid package: {body}")
    } else {
        e.message()
            .map(str::to_string)
            .unwrap_or_else(|| e.to_error_object().to_string())
    }
}

/// Writes a batch of datasets and their objects in one transaction: all or none.
async fn import_batch(run: &Run, user: &Principal, batch: &[Item]) -> CkanResult<()> {
    let mut ctx = ActionContext::new(run.app.clone(), Some(user.clone()));
    ctx.ignore_auth = true;
    ctx.allow_state_change = true;
    // The search index takes the batches up a few at a time (the host's background sync):
    // one index commit per batch would be most of a harvest's time.
    ctx.background = true;
    let started = store::now();
    let (run, batch) = (run.clone(), batch.to_vec());
    ctx.run_write("harvest_import", move |ctx| {
        Box::pin(async move {
            for item in &batch {
                import_one(ctx, &run, item, &started).await?;
            }
            Ok(Value::Null)
        })
    })
    .await?;
    Ok(())
}

/// Keys of a source's dataset dict that are the source's own bookkeeping, never written here.
const DROPPED_KEYS: &[&str] = &[
    "organization",
    "revision_id",
    "metadata_created",
    "metadata_modified",
    "creator_user_id",
    "num_resources",
    "num_tags",
    "relationships_as_subject",
    "relationships_as_object",
    "tracking_summary",
    "isopen",
    "license_title",
    "license_url",
    "state",
    "private",
];

/// Keys of a source's resource dicts never written here.
const DROPPED_RESOURCE_KEYS: &[&str] = &[
    "url_type",
    "revision_id",
    "package_id",
    "position",
    "datastore_active",
    "created",
    "metadata_modified",
    "tracking_summary",
    "state",
];

/// The extras every harvested dataset carries (replacing any the source sent).
const HARVEST_EXTRAS: &[&str] = &[
    "guid",
    "harvest_object_id",
    "harvest_source_id",
    "harvest_source_title",
];

async fn import_one(
    ctx: &mut ActionContext,
    run: &Run,
    item: &Item,
    started: &str,
) -> CkanResult<()> {
    let mut d = item.dataset.clone();
    // The harvester sees the record whole (the CKAN harvester reads its `organization`).
    run.harvester
        .prepare(ctx, &run.source, &mut d)
        .await
        .map_err(validation_message)?;
    for k in DROPPED_KEYS {
        d.remove(*k);
    }
    apply_common(&mut d, &run.source, &run.job.id, &item.object_id);
    if d.get("owner_org").is_none_or(Value::is_null) {
        if let Some(org) = &run.source.owner_org {
            d.insert("owner_org".into(), json!(org));
        }
    }
    if d.get("type").is_none_or(|t| !t.is_string()) {
        d.insert("type".into(), json!("dataset"));
    }
    let mut extras: Vec<Value> = d
        .get("extras")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|e| {
            !e.get("key")
                .and_then(Value::as_str)
                .is_some_and(|k| HARVEST_EXTRAS.contains(&k))
        })
        .collect();
    for (k, v) in [
        ("guid", item.guid.as_str()),
        ("harvest_object_id", item.object_id.as_str()),
        ("harvest_source_id", run.source.id.as_str()),
        ("harvest_source_title", run.source.title.as_str()),
    ] {
        extras.push(json!({"key": k, "value": v}));
    }
    d.insert("extras".into(), Value::Array(extras));
    let existing = match &item.existing {
        Some(id) => ctx.package_row(id).await?,
        None => None,
    };
    let (package_id, report_status) = match existing {
        Some(pkg) => {
            d.insert("id".into(), json!(pkg.id));
            d.insert("name".into(), json!(pkg.name));
            d.insert("state".into(), json!("active"));
            keep_resource_ids(ctx, &pkg.id, &mut d, run.harvester.keeps_source_id()).await?;
            ctx.call("package_update", d).await?;
            (pkg.id, report::UPDATED)
        }
        None => {
            let keep_id = run.harvester.keeps_source_id()
                && match d.get("id").and_then(Value::as_str) {
                    Some(id) => ctx.package_row(id).await?.is_none(),
                    None => false,
                };
            if !keep_id {
                d.remove("id");
            }
            strip_resource_ids(ctx, &mut d, run.harvester.keeps_source_id()).await?;
            let base = match d.get("name").and_then(Value::as_str) {
                Some(n) if !n.trim().is_empty() => n.to_string(),
                _ => catalog_framework::munge::munge_title_to_name(
                    d.get("title").and_then(Value::as_str).unwrap_or_default(),
                ),
            };
            let name = unique_name(ctx, &base, run.settings.name_append_random).await?;
            d.insert("name".into(), json!(name));
            let saved = ctx.call("package_create", d).await?;
            let id = saved["id"].as_str().unwrap_or_default().to_string();
            (id, report::ADDED)
        }
    };
    let conn = ctx.db().await?;
    store::complete_import(
        conn,
        &item.object_id,
        &run.source.id,
        &item.guid,
        &package_id,
        report_status,
        started,
    )
    .await?;
    Ok(())
}

/// On an update, resources keep their ids: by the source's resource id when the harvester
/// keeps them, else by `uri` (ckanext-dcat), else by `url` (ckanext-dcat's JSON harvester).
async fn keep_resource_ids(
    ctx: &mut ActionContext,
    package_id: &str,
    d: &mut Map<String, Value>,
    keep_source_ids: bool,
) -> CkanResult<()> {
    let Some(row) = ctx.package_row(package_id).await? else {
        return Ok(());
    };
    let stored: Map<String, Value> = serde_json::from_str(&row.data).unwrap_or_default();
    let old: Vec<Map<String, Value>> = stored
        .get("resources")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|r| r.as_object().cloned()).collect())
        .unwrap_or_default();
    let old_ids: HashSet<String> = old
        .iter()
        .filter_map(|r| r.get("id").and_then(Value::as_str).map(str::to_string))
        .collect();
    let mut by_uri: HashMap<String, String> = HashMap::new();
    let mut by_url: HashMap<String, String> = HashMap::new();
    for r in &old {
        let Some(id) = r.get("id").and_then(Value::as_str) else {
            continue;
        };
        if let Some(u) = r
            .get("uri")
            .and_then(Value::as_str)
            .filter(|u| !u.is_empty())
        {
            by_uri
                .entry(u.to_string())
                .or_insert_with(|| id.to_string());
        }
        if let Some(u) = r
            .get("url")
            .and_then(Value::as_str)
            .filter(|u| !u.is_empty())
        {
            by_url
                .entry(u.to_string())
                .or_insert_with(|| id.to_string());
        }
    }
    let mut taken: HashSet<String> = HashSet::new();
    if let Some(Value::Array(resources)) = d.get_mut("resources") {
        for r in resources.iter_mut() {
            let Some(r) = r.as_object_mut() else { continue };
            for k in DROPPED_RESOURCE_KEYS {
                r.remove(*k);
            }
            let own = r.get("id").and_then(Value::as_str).map(str::to_string);
            let chosen = match own {
                Some(id) if keep_source_ids && old_ids.contains(&id) => Some(id),
                _ => {
                    let by = |m: &HashMap<String, String>, key: &str| {
                        r.get(key)
                            .and_then(Value::as_str)
                            .and_then(|u| m.get(u))
                            .cloned()
                    };
                    by(&by_uri, "uri").or_else(|| by(&by_url, "url"))
                }
            };
            match chosen.filter(|id| taken.insert(id.clone())) {
                Some(id) => {
                    r.insert("id".into(), json!(id));
                }
                None => {
                    r.remove("id");
                }
            }
        }
    }
    Ok(())
}

/// On a creation, resources take the source's ids only when the harvester keeps them and no
/// resource here has them.
async fn strip_resource_ids(
    ctx: &mut ActionContext,
    d: &mut Map<String, Value>,
    keep_source_ids: bool,
) -> CkanResult<()> {
    let Some(Value::Array(resources)) = d.get_mut("resources") else {
        return Ok(());
    };
    let mut ids: Vec<String> = Vec::new();
    for r in resources.iter_mut() {
        let Some(r) = r.as_object_mut() else { continue };
        for k in DROPPED_RESOURCE_KEYS {
            r.remove(*k);
        }
        if !keep_source_ids {
            r.remove("id");
        } else if let Some(id) = r.get("id").and_then(Value::as_str) {
            ids.push(id.to_string());
        }
    }
    if ids.is_empty() {
        return Ok(());
    }
    let mut taken: HashSet<String> = HashSet::new();
    for id in &ids {
        if catalog_framework::store::resource_package_id(ctx.db().await?, id)
            .await?
            .is_some()
        {
            taken.insert(id.clone());
        }
    }
    if let Some(Value::Array(resources)) = d.get_mut("resources") {
        let mut seen = HashSet::new();
        for r in resources.iter_mut().filter_map(Value::as_object_mut) {
            let drop = match r.get("id").and_then(Value::as_str) {
                Some(id) => taken.contains(id) || !seen.insert(id.to_string()),
                None => false,
            };
            if drop {
                r.remove("id");
            }
        }
    }
    Ok(())
}

/// A dataset name no dataset has (deleted ones included): the name itself, else with `1` …
/// `999` appended (ckanext-harvest's `number-sequence`), else five random hex digits.
async fn unique_name(ctx: &mut ActionContext, base: &str, random: bool) -> CkanResult<String> {
    let base: String = {
        let b = base.trim().to_lowercase();
        let b = if b.chars().count() < 2 {
            format!(
                "dataset-{}",
                &uuid::Uuid::new_v4().simple().to_string()[..8]
            )
        } else {
            b
        };
        b.chars().take(100).collect()
    };
    let free = |n: Option<(String, String)>| n.is_none();
    if free(catalog_framework::store::package_name_holder(ctx.db().await?, &base).await?) {
        return Ok(base);
    }
    if !random {
        for i in 1..=999u32 {
            let suffix = i.to_string();
            let keep = 100 - suffix.len();
            let candidate = format!("{}{suffix}", base.chars().take(keep).collect::<String>());
            if free(
                catalog_framework::store::package_name_holder(ctx.db().await?, &candidate).await?,
            ) {
                return Ok(candidate);
            }
        }
    }
    loop {
        let hex = &uuid::Uuid::new_v4().simple().to_string()[..5];
        let candidate = format!("{}{hex}", base.chars().take(95).collect::<String>());
        if free(catalog_framework::store::package_name_holder(ctx.db().await?, &candidate).await?) {
            return Ok(candidate);
        }
    }
}

/// Applies the common keys to a dataset dict about to be written.
fn apply_common(d: &mut Map<String, Value>, source: &Source, job_id: &str, object_id: &str) {
    let c = &source.config;
    let clean = c.get("clean_tags").and_then(Value::as_bool) == Some(true);
    let mut tags: Vec<Value> = d
        .get("tags")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(Value::Array(defaults)) = c.get("default_tags") {
        for t in defaults {
            let name = t
                .as_str()
                .or_else(|| t.get("name").and_then(Value::as_str))
                .unwrap_or_default();
            if !tags
                .iter()
                .any(|x| x.get("name").and_then(Value::as_str) == Some(name))
            {
                tags.push(json!({"name": name}));
            }
        }
    }
    if clean {
        let mut seen = std::collections::HashSet::new();
        tags = tags
            .into_iter()
            .filter_map(|t| {
                let n = catalog_framework::munge::munge_tag(t.get("name")?.as_str()?);
                (!n.is_empty() && seen.insert(n.clone())).then(|| json!({"name": n}))
            })
            .collect();
    }
    if d.contains_key("tags") || !tags.is_empty() {
        d.insert("tags".into(), Value::Array(tags));
    }
    if let Some(Value::Array(defaults)) = c.get("default_groups") {
        let mut groups: Vec<Value> = d
            .get("groups")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for g in defaults.iter().filter_map(Value::as_str) {
            if !groups.iter().any(|x| {
                x.get("name").and_then(Value::as_str) == Some(g)
                    || x.get("id").and_then(Value::as_str) == Some(g)
            }) {
                groups.push(json!({"name": g}));
            }
        }
        d.insert("groups".into(), Value::Array(groups));
    }
    if let Some(Value::Object(defaults)) = c.get("default_extras") {
        let over = c.get("override_extras").and_then(Value::as_bool) == Some(true);
        let mut extras: Vec<Value> = d
            .get("extras")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (k, v) in defaults {
            let value = match v {
                Value::String(s) => s
                    .replace(
                        "{dataset_id}",
                        d.get("id").and_then(Value::as_str).unwrap_or(""),
                    )
                    .replace("{harvest_source_id}", &source.id)
                    .replace("{harvest_source_url}", source.url.trim_end_matches('/'))
                    .replace("{harvest_source_title}", &source.title)
                    .replace("{harvest_job_id}", job_id)
                    .replace("{harvest_object_id}", object_id),
                other => other.to_string(),
            };
            let at = extras
                .iter()
                .position(|e| e.get("key").and_then(Value::as_str) == Some(k));
            match at {
                Some(i) if over => extras[i] = json!({"key": k, "value": value}),
                Some(_) => {}
                None => extras.push(json!({"key": k, "value": value})),
            }
        }
        d.insert("extras".into(), Value::Array(extras));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(config: Value) -> Source {
        Source {
            id: "src".into(),
            url: "https://remote.example.org/".into(),
            title: "Remote".into(),
            owner_org: None,
            config: config.as_object().cloned().unwrap_or_default(),
            api_key: None,
        }
    }

    #[test]
    fn defaults_are_added_and_extras_formatted() {
        let s = source(json!({
            "default_tags": [{"name": "geo"}, "open data!"],
            "clean_tags": true,
            "default_groups": ["maps"],
            "default_extras": {"origin": "{harvest_source_url}/dataset/{dataset_id}", "kept": "new"},
        }));
        let mut d: Map<String, Value> = json!({"id": "d1", "tags": [{"name": "Geo"}],
            "extras": [{"key": "kept", "value": "old"}]})
        .as_object()
        .unwrap()
        .clone();
        apply_common(&mut d, &s, "job", "obj");
        let tags: Vec<&str> = d["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(tags, vec!["geo", "open-data"]);
        assert_eq!(d["groups"], json!([{"name": "maps"}]));
        assert_eq!(
            d["extras"],
            json!([{"key": "kept", "value": "old"},
                   {"key": "origin", "value": "https://remote.example.org/dataset/d1"}])
        );
    }
}
