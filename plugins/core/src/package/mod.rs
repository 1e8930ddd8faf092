//! Datasets: the `package_*` actions (and `dataset_purge`, `bulk_update_*`,
//! `current_package_list_with_resources`), and the write path that `package_create`,
//! `package_update` and the other dataset writes share: validation, owner organization,
//! resources, tags, the stored row and its memberships.

use std::collections::{BTreeMap, HashMap, HashSet};

use catalog_framework::authz;
use catalog_framework::prelude::*;
use catalog_framework::store::model::COMPUTED_KEYS;
use catalog_framework::store::time::now_iso;
use catalog_framework::store::{self, PackageRow};

use crate::dictize::package_dict;
use crate::formats;
use crate::ids::new_id;
use crate::membership::upsert_member;

pub(crate) mod autocomplete;
pub(crate) mod bulk_update;
pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod list;
pub(crate) mod owner_org_update;
pub(crate) mod revise;
pub(crate) mod search;
pub(crate) mod show;
pub(crate) mod update;

/// [`dict_params!`](crate::dict_params) with the keys of a dataset dict.
macro_rules! dataset_dict_params {
    ($($t:tt)*) => {
        crate::dict_params! {
            [
                /// the name: 2 to 100 lowercase alphanumeric characters, `-` and `_`
                name: crate::InDict<String>,
                /// the title
                title: crate::InDict<String>,
                /// private to its organization
                private: crate::InDict<bool>,
                /// the author's name
                author: crate::InDict<String>,
                /// the author's e-mail address
                author_email: crate::InDict<String>,
                /// the maintainer's name
                maintainer: crate::InDict<String>,
                /// the maintainer's e-mail address
                maintainer_email: crate::InDict<String>,
                /// the id of the license (see license_list)
                license_id: crate::InDict<String>,
                /// a description
                notes: crate::InDict<String>,
                /// the URL of the dataset's source
                url: crate::InDict<String>,
                /// a version (at most 100 characters)
                version: crate::InDict<String>,
                /// the state (`active`, `draft` …)
                state: crate::InDict<String>,
                /// the dataset type, whose schema validates the dict (default `dataset`)
                dataset_type: crate::InDict<String> as "type",
                /// the resources: a list of resource dicts (see resource_create)
                resources: crate::InDict<Value>,
                /// the tags: a list of tag dicts (`name`; `vocabulary_id` for a vocabulary's tag)
                tags: crate::InDict<Value>,
                /// the extras: a list of `{"key": …, "value": …}` dicts
                extras: crate::InDict<Value>,
                /// the groups: a list of dicts with the `id` or `name` of each
                groups: crate::InDict<Value>,
                /// the id or name of the owning organization
                owner_org: crate::InDict<String>,
                /// plugins' private data, a dict (sysadmins only)
                plugin_data: crate::InDict<Value>,
            ]
            $($t)*
        }
    };
}
pub(crate) use dataset_dict_params;

/// Resource columns cleared when absent on update; the other columns keep their value.
const RESOURCE_CLEARED: &[&str] = &[
    "url",
    "description",
    "resource_type",
    "mimetype",
    "mimetype_inner",
];

/// The dataset named by `id` (or `name_or_id`), or 404.
/// In a write call the row is locked until commit: every caller of `load` changes the dataset
/// or reads it back after changing it.
pub(crate) async fn load(ctx: &mut ActionContext, r: &str) -> CkanResult<PackageRow> {
    ctx.package_for_update(r)
        .await?
        .ok_or_else(|| not_found("Package was not found."))
}

pub(crate) async fn show_row(ctx: &mut ActionContext, row: &PackageRow) -> CkanResult<Value> {
    package_dict(ctx, row).await
}

/// CKAN's `plugin_data` of a dataset write (`[ignore_missing, json_object,
/// ignore_not_sysadmin]`, and `package_dict_save` storing it only when truthy): a value that
/// is not a JSON object is an error for anyone; a sysadmin's non-empty object is returned (as
/// JSON text) to be stored; anything else, and any non-sysadmin's, is ignored and the stored
/// plugin data stays.
fn plugin_data_input(
    ctx: &ActionContext,
    p: &Params,
    errs: &mut ValidationBuilder,
) -> CkanResult<Option<String>> {
    match p.get("plugin_data") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::Object(m)) => Ok(if ctx.is_sysadmin() && !m.is_empty() {
            Some(serde_json::to_string(m)?)
        } else {
            None
        }),
        Some(_) => {
            errs.push("plugin_data", "The value should be a valid JSON object");
            Ok(None)
        }
    }
}

/// Stores a dataset's plugin data, when the write carries some (see [`plugin_data_input`]).
async fn write_plugin_data(
    ctx: &mut ActionContext,
    id: &str,
    plugin_data: Option<&str>,
) -> CkanResult<()> {
    if let Some(d) = plugin_data {
        store::set_package_plugin_data(ctx.db().await?, id, Some(d)).await?;
    }
    Ok(())
}

/// `package_show`'s `plugin_data` (with `include_plugin_data`, for sysadmins): the stored
/// object, or null; placed among the dict's sorted keys.
pub(crate) async fn add_plugin_data(ctx: &mut ActionContext, dict: &mut Value) -> CkanResult<()> {
    let Some(m) = dict.as_object_mut() else {
        return Ok(());
    };
    let id = m
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let stored = store::package_plugin_data(ctx.db().await?, &id).await?;
    let value: Value = match stored {
        Some(s) => serde_json::from_str(&s)?,
        None => Value::Null,
    };
    let at = m
        .keys()
        .position(|k| k.as_str() > "plugin_data" || k == "relationships_as_object")
        .unwrap_or(m.len());
    m.shift_insert(at, "plugin_data".into(), value);
    Ok(())
}

/// Resolves `owner_org` for a write, with CKAN's `owner_org_validator` rules.
async fn resolve_owner_org(
    ctx: &mut ActionContext,
    value: Option<&Value>,
    package: Option<&PackageRow>,
    errs: &mut ValidationBuilder,
) -> CkanResult<Option<String>> {
    let current = package.and_then(|p| p.owner_org.as_deref());
    let unowned_ok = ctx.config().catalog.auth.create_unowned_dataset;
    let raw = match value {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.is_empty() => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            errs.push("owner_org", "Organization does not exist");
            return Ok(None);
        }
    };
    let Some(raw) = raw else {
        // CKAN's validator asks this of everyone, sysadmins included.
        if !unowned_ok {
            errs.push("owner_org", "An organization must be provided");
        }
        return Ok(None);
    };
    let org = ctx
        .group_row_for_check(&raw)
        .await?
        .filter(|g| g.is_organization && g.state != "deleted");
    let Some(org) = org else {
        errs.push("owner_org", "Organization does not exist");
        return Ok(None);
    };
    if current != Some(org.id.as_str())
        && !ctx.ignore_auth
        && !authz::has_permission(ctx, &org.id, "create_dataset").await?
    {
        errs.push("owner_org", "You cannot add a dataset to this organization");
    }
    if let Some(pkg) = package {
        if current != Some(org.id.as_str()) && collaborator_may_not_move(ctx, pkg).await? {
            errs.push(
                "owner_org",
                "You cannot move this dataset to another organization",
            );
        }
    }
    Ok(Some(org.id))
}

/// CKAN's `owner_org_validator`: unless `allow_collaborators_to_change_owner_org`, an editor
/// or admin collaborator of a dataset may not move it out of its organization, except when
/// they also manage that organization.
async fn collaborator_may_not_move(ctx: &mut ActionContext, pkg: &PackageRow) -> CkanResult<bool> {
    let auth = &ctx.config().catalog.auth;
    if !auth.allow_dataset_collaborators
        || auth.allow_collaborators_to_change_owner_org
        || ctx.is_sysadmin()
        || ctx.ignore_auth
    {
        return Ok(false);
    }
    let Some(uid) = ctx.user_id().map(str::to_string) else {
        return Ok(false);
    };
    let collaborates = catalog_framework::store::user_collaborations(ctx.db().await?, &uid)
        .await?
        .iter()
        .any(|(p, c)| *p == pkg.id && (c == "editor" || c == "admin"));
    if !collaborates {
        return Ok(false);
    }
    Ok(match &pkg.owner_org {
        Some(org) => !authz::has_permission(ctx, org, "manage_group").await?,
        None => true,
    })
}

/// Turns validated resources into stored ones: ids, positions, timestamps, formats.
async fn prepare_resources(
    ctx: &mut ActionContext,
    package_id: &str,
    input: &[Value],
    existing: &[Value],
    errs: &mut ValidationBuilder,
) -> CkanResult<Vec<Value>> {
    let now = now_iso();
    let mut out = Vec::new();
    let mut slot_errs = Vec::new();
    let mut any_err = false;
    let existing: std::collections::HashMap<&str, &Value> = existing
        .iter()
        .filter_map(|x| Some((x["id"].as_str()?, x)))
        .collect();
    for (pos, r) in input.iter().enumerate() {
        let mut r = r.as_object().cloned().unwrap_or_default();
        let mut e = Map::new();
        let supplied_id = r
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let old = supplied_id
            .as_deref()
            .and_then(|id| existing.get(id).copied());
        let id = match (&supplied_id, old) {
            (Some(id), Some(_)) => id.clone(),
            (Some(id), None) => {
                let Some(norm) = catalog_framework::validators::uuid_parse(id) else {
                    e.insert("id".into(), json!(["Invalid id provided"]));
                    any_err = true;
                    slot_errs.push(Value::Object(e));
                    continue;
                };
                let owner = store::resource_package_id(ctx.db().await?, &norm).await?;
                if owner.is_some_and(|p| p != package_id) {
                    e.insert("id".into(), json!(["Resource id already exists."]));
                    any_err = true;
                    slot_errs.push(Value::Object(e));
                    continue;
                }
                norm
            }
            (None, _) => new_id(),
        };
        slot_errs.push(json!({}));
        let mut stored = match old {
            Some(o) => {
                let mut m = o.as_object().cloned().unwrap_or_default();
                // Resource extras are replaced wholesale; cleared columns go when absent.
                m.retain(|k, _| {
                    catalog_framework::validators::RESOURCE_COLUMNS.contains(&k.as_str())
                });
                for k in RESOURCE_CLEARED {
                    if !r.contains_key(*k) {
                        m.insert(
                            (*k).into(),
                            if *k == "url" { json!("") } else { Value::Null },
                        );
                    }
                }
                m
            }
            None => {
                let mut m = Map::new();
                for k in catalog_framework::validators::RESOURCE_COLUMNS {
                    m.insert((*k).into(), Value::Null);
                }
                m.insert("url".into(), json!(""));
                m.insert("hash".into(), json!(""));
                m.insert("created".into(), json!(now));
                m
            }
        };
        r.remove("id");
        let before = stored.clone();
        for (k, v) in r {
            stored.insert(k, v);
        }
        let fmt_empty = stored
            .get("format")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty);
        if fmt_empty && old.is_none() {
            let guessed = stored
                .get("url")
                .and_then(Value::as_str)
                .and_then(formats::guess_from_url);
            stored.insert(
                "format".into(),
                guessed.map(Value::String).unwrap_or(json!("")),
            );
        } else if let Some(f) = stored.get("format").and_then(Value::as_str) {
            let n = formats::normalise(f);
            stored.insert("format".into(), json!(n));
        }
        stored.insert("id".into(), json!(id));
        stored.insert("package_id".into(), json!(package_id));
        stored.insert("position".into(), json!(pos));
        stored.insert("state".into(), json!("active"));
        let changed = old.is_none() || before != stored;
        let modified = if changed {
            json!(now)
        } else {
            before
                .get("metadata_modified")
                .cloned()
                .unwrap_or(json!(now))
        };
        stored.insert("metadata_modified".into(), modified);
        out.push(Value::Object(crate::dictize::sorted(stored)));
    }
    if any_err {
        errs.set("resources", Value::Array(slot_errs));
    }
    Ok(out)
}

/// Stored tags with ids; creates free tags on first use, and a vocabulary's tags too (as CKAN
/// does: any editor of the dataset may grow a vocabulary so). A few statements per 500 free
/// tags, not per tag: a dataset may carry up to `catalog.limits.max_tags_per_dataset` of them.
async fn prepare_tags(
    ctx: &mut ActionContext,
    tags: &[Value],
    errs: &mut ValidationBuilder,
) -> CkanResult<Vec<Value>> {
    let mut names: Vec<String> = Vec::new();
    let mut vocabulary_names: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut seen = HashSet::new();
    let mut vocab_errs: Vec<Value> = Vec::new();
    // Each vocabulary named once, however many tags name it.
    let mut known_vocabularies: HashMap<String, bool> = HashMap::new();
    for t in tags {
        let name = t["name"].as_str().unwrap_or_default().to_string();
        let vocab_ref = t["vocabulary_id"].as_str().unwrap_or("").to_string();
        if !seen.insert((name.clone(), vocab_ref.clone())) {
            continue;
        }
        if vocab_ref.is_empty() {
            names.push(name);
            continue;
        }
        // Only a vocabulary's id names it here, as in CKAN's `vocabulary_id_exists`.
        let known = match known_vocabularies.get(&vocab_ref) {
            Some(k) => *k,
            None => {
                let k = store::vocabulary_by_ref(ctx.db().await?, &vocab_ref)
                    .await?
                    .is_some_and(|v| v.id == vocab_ref);
                known_vocabularies.insert(vocab_ref.clone(), k);
                k
            }
        };
        if known {
            vocabulary_names.entry(vocab_ref).or_default().push(name);
        } else {
            vocab_errs.push(json!({"vocabulary_id": ["Tag vocabulary was not found."]}));
        }
    }
    if !vocab_errs.is_empty() {
        errs.set("tags", Value::Array(vocab_errs));
        return Ok(Vec::new());
    }
    // One order for every writer, so that two writers adding the same new tags wait for each
    // other instead of deadlocking.
    names.sort_unstable();
    // The tags that exist are read before the write lock (`read_db`); only new ones are
    // written.
    let mut ids: HashMap<String, String> = if names.is_empty() {
        HashMap::new()
    } else {
        store::free_tags_by_name(ctx.read_db().await?, &names)
            .await?
            .into_iter()
            .map(|(id, name)| (name, id))
            .collect()
    };
    let new: Vec<String> = names
        .iter()
        .filter(|n| !ids.contains_key(*n))
        .cloned()
        .collect();
    if !new.is_empty() {
        ids.extend(store::ensure_free_tags(ctx.db().await?, &new).await?);
    }
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let id = ids
            .remove(&name)
            .ok_or_else(|| internal(format!("tag {name} vanished")))?;
        out.push(json!({"display_name": name, "id": id, "name": name, "state": "active", "vocabulary_id": null}));
    }
    for (vocabulary_id, mut names) in vocabulary_names {
        names.sort_unstable();
        let known: HashSet<String> = store::tags_by_name(ctx.db().await?, &vocabulary_id, &names)
            .await?
            .into_iter()
            .map(|(_, n)| n)
            .collect();
        for n in names.iter().filter(|n| !known.contains(*n)) {
            store::insert_tag(ctx.db().await?, &store::new_id(), n, &vocabulary_id).await?;
        }
        for (id, name) in store::tags_by_name(ctx.db().await?, &vocabulary_id, &names).await? {
            out.push(json!({"display_name": name, "id": id, "name": name, "state": "active", "vocabulary_id": vocabulary_id}));
        }
    }
    out.sort_by(|a, b| {
        (a["name"].as_str(), a["vocabulary_id"].as_str())
            .cmp(&(b["name"].as_str(), b["vocabulary_id"].as_str()))
    });
    Ok(out)
}

/// Group refs of a dataset write → active non-organization group ids; unknown refs are skipped.
async fn resolve_groups(ctx: &mut ActionContext, groups: &Value) -> CkanResult<Vec<String>> {
    let mut ids = Vec::new();
    for g in groups.as_array().into_iter().flatten() {
        let r = g
            .get("id")
            .or_else(|| g.get("name"))
            .and_then(Value::as_str)
            .or(g.as_str());
        if let Some(r) = r {
            if let Some(row) = ctx.group_row(r).await? {
                if !row.is_organization && row.state == "active" && !ids.contains(&row.id) {
                    ids.push(row.id);
                }
            }
        }
    }
    Ok(ids)
}

/// Writes the dataset row and everything hanging off it (resources, tags, memberships).
/// `stored`: the row's `data` as the caller read it in this transaction (its row is locked
/// from that read), or `None` for a new dataset.
async fn write(
    ctx: &mut ActionContext,
    doc: &Map<String, Value>,
    stored: Option<&str>,
    groups: Option<Vec<String>>,
) -> CkanResult<()> {
    let is_new = stored.is_none();
    let id = doc["id"].as_str().unwrap_or_default().to_string();
    let s = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_string);
    let data = serde_json::to_string(doc)?;
    // The record before the change, only when some plugin listens for domain events.
    let before: Option<Value> = match stored {
        Some(d) if ctx.wants_events() => Some(serde_json::from_str(d)?),
        _ => None,
    };
    let conn = ctx.db().await?;
    let row = store::PackageWrite {
        id: &id,
        name: doc.get("name").and_then(Value::as_str),
        dataset_type: doc.get("type").and_then(Value::as_str),
        state: doc.get("state").and_then(Value::as_str),
        private: doc.get("private").and_then(Value::as_bool).unwrap_or(false),
        owner_org: doc.get("owner_org").and_then(Value::as_str),
        creator_user_id: doc.get("creator_user_id").and_then(Value::as_str),
        metadata_created: doc.get("metadata_created").and_then(Value::as_str),
        metadata_modified: doc.get("metadata_modified").and_then(Value::as_str),
        data: &data,
    };
    store::write_package_row(&mut *conn, &row, is_new).await?;
    // Resource and tag index rows: the listed ones active, the others deleted.
    let list = |key: &str| -> Vec<&Value> {
        doc.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .collect()
    };
    let resources: Vec<(Option<&str>, Option<&str>)> = list("resources")
        .into_iter()
        .map(|r| (r["id"].as_str(), r["name"].as_str()))
        .collect();
    store::replace_resource_rows(&mut *conn, &id, &resources, is_new).await?;
    let tags: Vec<Option<&str>> = list("tags").into_iter().map(|t| t["id"].as_str()).collect();
    store::replace_package_tags(&mut *conn, &id, &tags, is_new).await?;
    store::set_package_organization(&mut *conn, &id, row.owner_org, is_new).await?;
    if let Some(groups) = groups {
        set_package_groups(ctx, &id, &groups).await?;
    }
    if !is_new {
        crate::relationship::refresh_dataset(ctx, &id, true).await?;
    }
    let was_deleted = before
        .as_ref()
        .is_some_and(|b| b.get("state").and_then(Value::as_str) == Some("deleted"));
    let change = if is_new {
        Change::Created
    } else if s("state").as_deref() == Some("deleted") && !was_deleted {
        Change::Deleted
    } else {
        Change::Updated
    };
    ctx.emit(
        Entity::Package,
        change,
        &id,
        before,
        Some(Value::Object(doc.clone())),
    );
    Ok(())
}

/// Makes the package ∈ groups memberships exactly `groups`.
async fn set_package_groups(
    ctx: &mut ActionContext,
    package_id: &str,
    groups: &[String],
) -> CkanResult<()> {
    let conn = ctx.db().await?;
    store::clear_package_groups(&mut *conn, package_id).await?;
    for g in groups {
        upsert_member(conn, g, "package", package_id, "public").await?;
    }
    Ok(())
}

/// Frees a name held by a deleted dataset (CKAN renames it to its id), or reports it taken.
async fn claim_name(
    ctx: &mut ActionContext,
    name: &str,
    own_id: &str,
    errs: &mut ValidationBuilder,
) -> CkanResult<()> {
    // Read before the write lock (a name taken meanwhile fails the write on the unique key).
    let holder = store::package_name_holder(ctx.read_db().await?, name).await?;
    let taken = match holder {
        Some((id, _)) if id == own_id => false,
        // CKAN frees the name of a deleted dataset by renaming that dataset to its id.
        Some((id, state)) if state == "deleted" => {
            !store::rename_deleted_package_to_id(ctx.db().await?, &id).await?
        }
        Some(_) => true,
        None => false,
    };
    if taken {
        errs.push("name", "That URL is already in use.");
    }
    Ok(())
}

fn schema_validate(
    ctx: &ActionContext,
    dataset_type: &str,
    data: &mut Params,
    op: SchemaOp,
) -> CkanResult<()> {
    // Bounds and states first: whatever schema the type has, no dataset escapes them.
    let mut errs = ValidationBuilder::default();
    catalog_framework::validators::check_dataset_limits(
        data,
        &ctx.config().catalog.limits,
        &mut errs,
    );
    catalog_framework::validators::check_state(
        data.get("state"),
        catalog_framework::validators::DATASET_STATES,
        &mut errs,
    );
    errs.finish()?;
    let schema = ctx
        .app
        .registry
        .schema(dataset_type)
        .cloned()
        .ok_or_else(|| internal("no dataset schema registered"))?;
    schema.validate(
        data,
        &SchemaContext {
            op,
            is_sysadmin: ctx.is_sysadmin(),
            config: ctx.config(),
        },
    )
}

/// Stores the top-level fields a custom dataset schema kept beyond CKAN's own (the default
/// schema drops unknown keys, so this only matters for plugin schemas); on update, a custom
/// field absent from the new dict goes, as with replace semantics.
fn keep_custom_fields(data: &Params, doc: &mut Map<String, Value>) {
    let known = catalog_framework::validators::SCHEMA_FIELDS;
    doc.retain(|k, _| known.contains(&k.as_str()));
    for (k, v) in data {
        if !known.contains(&k.as_str()) && !COMPUTED_KEYS.contains(&k.as_str()) {
            doc.insert(k.clone(), v.clone());
        }
    }
}

#[cfg(test)]
mod custom_field_tests {
    use super::*;

    #[test]
    fn custom_schema_fields_are_stored_and_computed_keys_are_not() {
        let data: Params = json!({"title": "t", "sensor_id": "S-1", "num_tags": 3, "isopen": true})
            .as_object()
            .unwrap()
            .clone();
        let mut doc = json!({"title": "t", "old_custom": 1})
            .as_object()
            .unwrap()
            .clone();
        keep_custom_fields(&data, &mut doc);
        assert_eq!(doc.get("sensor_id"), Some(&json!("S-1")));
        assert!(
            doc.get("old_custom").is_none(),
            "replace semantics drop absent custom fields"
        );
        assert!(doc.get("num_tags").is_none() && doc.get("isopen").is_none());
        assert_eq!(doc.get("title"), Some(&json!("t")));
    }
}
