//! Dataset actions: create, show, update, patch, delete, purge, lists, owner org, bulk updates.

use std::collections::HashSet;

use catalog_framework::authz;
use catalog_framework::prelude::*;
use catalog_framework::store_queries::PackageRow;
use catalog_framework::time::now_iso;

use crate::dictize::package_dict;
use crate::formats;

/// Fields `package_update` clears when absent (CKAN's "remove if not provided").
const CLEARED_ON_UPDATE: &[&str] = &[
    "title",
    "version",
    "url",
    "author",
    "author_email",
    "maintainer",
    "maintainer_email",
    "notes",
    "license_id",
];

/// Resource columns cleared when absent on update; the other columns keep their value.
const RESOURCE_CLEARED: &[&str] = &[
    "url",
    "description",
    "resource_type",
    "mimetype",
    "mimetype_inner",
];

pub(crate) fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

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

pub async fn package_show(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let id = match p.get("id").or_else(|| p.get("name_or_id")) {
        None | Some(Value::Null) => return Err(missing("name_or_id")),
        Some(v) => v
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| validation().field("id", "Must be a string").build())?,
    };
    let cacheable = !ctx.in_write();
    let generation = ctx.app.package_cache.generation();
    let cached = if cacheable {
        ctx.app.package_cache.get(&id)
    } else {
        None
    };
    let row = match &cached {
        Some(hit) => hit.row.clone(),
        None => ctx.package_row(&id).await?.ok_or_else(|| not_found(""))?,
    };
    let mut auth = Params::new();
    auth.insert("id".into(), json!(row.id));
    ctx.check_access("package_show", &auth).await?;
    if let Some(hit) = cached {
        return Ok(hit.dict.clone());
    }
    let dict = show_row(ctx, &row).await?;
    if cacheable {
        ctx.app.package_cache.put(
            generation,
            catalog_framework::cache::CachedPackage {
                row,
                dict: dict.clone(),
            },
        );
    }
    Ok(dict)
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
        if !unowned_ok && !ctx.is_sysadmin() {
            errs.push("owner_org", "An organization must be provided");
        }
        return Ok(None);
    };
    let org = ctx
        .group_row(&raw)
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
    let collaborates = catalog_framework::store_queries::user_collaborations(ctx.db().await?, &uid)
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
                let Some(norm) = catalog_plugin_schema::uuid_parse(id) else {
                    e.insert("id".into(), json!(["Invalid id provided"]));
                    any_err = true;
                    slot_errs.push(Value::Object(e));
                    continue;
                };
                let owner: Option<(String,)> =
                    sqlx::query_as("SELECT package_id FROM resource WHERE id = $1")
                        .bind(&norm)
                        .fetch_optional(ctx.db().await?)
                        .await?;
                if owner.is_some_and(|(p,)| p != package_id) {
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
                m.retain(|k, _| catalog_plugin_schema::RESOURCE_COLUMNS.contains(&k.as_str()));
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
                for k in catalog_plugin_schema::RESOURCE_COLUMNS {
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

/// Stored tags with ids; creates free tags on first use. A few statements per 500 tags, not
/// per tag: a dataset may carry up to `catalog.limits.max_tags_per_dataset` of them.
async fn prepare_tags(
    ctx: &mut ActionContext,
    tags: &[Value],
    errs: &mut ValidationBuilder,
) -> CkanResult<Vec<Value>> {
    let mut names: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for t in tags {
        let name = t["name"].as_str().unwrap_or_default().to_string();
        let vocab_ref = t["vocabulary_id"].as_str().unwrap_or("").to_string();
        if !seen.insert((name.clone(), vocab_ref.clone())) {
            continue;
        }
        if !vocab_ref.is_empty() {
            errs.push("tags", "Tag vocabulary was not found.");
            continue;
        }
        names.push(name);
    }
    // One order for every writer, so that two writers adding the same new tags wait for each
    // other instead of deadlocking.
    names.sort_unstable();
    let mut ids: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for chunk in names.chunks(TAG_BATCH) {
        // Insert-if-absent, then read: two writers adding the same new tag at once both
        // succeed (on PostgreSQL the second waits for the first and inserts nothing).
        let values: Vec<String> = (0..chunk.len())
            .map(|i| format!("(${}, ${}, '')", 2 * i + 1, 2 * i + 2))
            .collect();
        let sql = format!(
            "INSERT INTO tag (id, name, vocabulary_id) VALUES {} ON CONFLICT (name, vocabulary_id) DO NOTHING",
            values.join(", ")
        );
        let mut insert = sqlx::query(&sql);
        for name in chunk {
            insert = insert.bind(new_id()).bind(name);
        }
        let conn = ctx.db().await?;
        insert.execute(&mut *conn).await?;
        for (id, name) in
            catalog_framework::store_queries::free_tags_by_name(&mut *conn, chunk).await?
        {
            ids.insert(name, id);
        }
    }
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let id = ids
            .remove(&name)
            .ok_or_else(|| internal(format!("tag {name} vanished")))?;
        out.push(json!({"display_name": name, "id": id, "name": name, "state": "active", "vocabulary_id": null}));
    }
    Ok(out)
}

/// Rows per multi-row statement (two or three parameters each: far below SQLite's and
/// PostgreSQL's parameter limits).
const TAG_BATCH: usize = 500;

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
async fn write(
    ctx: &mut ActionContext,
    doc: &Map<String, Value>,
    is_new: bool,
    groups: Option<Vec<String>>,
) -> CkanResult<()> {
    let id = doc["id"].as_str().unwrap_or_default().to_string();
    let s = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_string);
    let data = serde_json::to_string(doc)?;
    let conn = ctx.db().await?;
    let sql = if is_new {
        "INSERT INTO package (id, name, type, state, private, owner_org, creator_user_id, metadata_created, metadata_modified, data) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
    } else {
        "UPDATE package SET name = $2, type = $3, state = $4, private = $5, owner_org = $6, creator_user_id = $7, \
         metadata_created = $8, metadata_modified = $9, data = $10 WHERE id = $1"
    };
    sqlx::query(sql)
        .bind(&id)
        .bind(s("name"))
        .bind(s("type"))
        .bind(s("state"))
        .bind(doc.get("private").and_then(Value::as_bool).unwrap_or(false))
        .bind(s("owner_org"))
        .bind(s("creator_user_id"))
        .bind(s("metadata_created"))
        .bind(s("metadata_modified"))
        .bind(data)
        .execute(&mut *conn)
        .await?;

    // Resource index rows: active ones listed, others deleted.
    sqlx::query("UPDATE resource SET state = 'deleted' WHERE package_id = $1")
        .bind(&id)
        .execute(&mut *conn)
        .await?;
    let resources: Vec<&Value> = doc
        .get("resources")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    for chunk in resources.chunks(TAG_BATCH) {
        let values: Vec<String> = (0..chunk.len())
            .map(|i| format!("(${}, $1, ${}, 'active')", 2 * i + 2, 2 * i + 3))
            .collect();
        let sql = format!(
            "INSERT INTO resource (id, package_id, name, state) VALUES {} \
             ON CONFLICT (id) DO UPDATE SET package_id = excluded.package_id, name = excluded.name, state = 'active'",
            values.join(", ")
        );
        let mut q = sqlx::query(&sql).bind(&id);
        for r in chunk {
            q = q.bind(r["id"].as_str()).bind(r["name"].as_str());
        }
        q.execute(&mut *conn).await?;
    }
    sqlx::query("UPDATE package_tag SET state = 'deleted' WHERE package_id = $1")
        .bind(&id)
        .execute(&mut *conn)
        .await?;
    let tags: Vec<&Value> = doc
        .get("tags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    for chunk in tags.chunks(TAG_BATCH) {
        let values: Vec<String> = (0..chunk.len())
            .map(|i| format!("($1, ${}, 'active')", i + 2))
            .collect();
        let sql = format!(
            "INSERT INTO package_tag (package_id, tag_id, state) VALUES {} \
             ON CONFLICT (package_id, tag_id) DO UPDATE SET state = 'active'",
            values.join(", ")
        );
        let mut q = sqlx::query(&sql).bind(&id);
        for t in chunk {
            q = q.bind(t["id"].as_str());
        }
        q.execute(&mut *conn).await?;
    }
    // Organization membership row, as CKAN's package_owner_org_update keeps it.
    sqlx::query(
        "UPDATE member SET state = 'deleted' WHERE table_name = 'package' AND table_id = $1 AND capacity = 'organization' \
         AND ($2 IS NULL OR group_id <> $2)",
    )
    .bind(&id)
    .bind(s("owner_org"))
    .execute(&mut *conn)
    .await?;
    if let Some(org) = s("owner_org") {
        let exists: Option<(String,)> = sqlx::query_as(
            "SELECT id FROM member WHERE table_name = 'package' AND table_id = $1 AND group_id = $2 AND capacity = 'organization'",
        )
        .bind(&id)
        .bind(&org)
        .fetch_optional(&mut *conn)
        .await?;
        match exists {
            Some((mid,)) => {
                sqlx::query("UPDATE member SET state = 'active' WHERE id = $1")
                    .bind(mid)
                    .execute(&mut *conn)
                    .await?;
            }
            None => {
                sqlx::query(
                    "INSERT INTO member (id, group_id, table_name, table_id, capacity, state) VALUES ($1, $2, 'package', $3, 'organization', 'active')",
                )
                .bind(new_id())
                .bind(&org)
                .bind(&id)
                .execute(&mut *conn)
                .await?;
            }
        }
    }
    if let Some(groups) = groups {
        crate::group::set_package_groups(ctx, &id, &groups).await?;
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
    let conn = ctx.db().await?;
    let holder: Option<(String, String)> =
        sqlx::query_as("SELECT id, state FROM package WHERE name = $1")
            .bind(name)
            .fetch_optional(&mut *conn)
            .await?;
    match holder {
        Some((id, _)) if id == own_id => {}
        Some((id, state)) if state == "deleted" => {
            let renamed: Option<(String,)> =
                sqlx::query_as("SELECT id FROM package WHERE name = $1")
                    .bind(&id)
                    .fetch_optional(&mut *conn)
                    .await?;
            if renamed.is_none() {
                // The freed dataset takes its id as name, in its row and in its document.
                let (data,): (String,) = sqlx::query_as("SELECT data FROM package WHERE id = $1")
                    .bind(&id)
                    .fetch_one(&mut *conn)
                    .await?;
                let mut doc: Map<String, Value> = serde_json::from_str(&data)?;
                doc.insert("name".into(), json!(id));
                sqlx::query("UPDATE package SET name = id, data = $2 WHERE id = $1")
                    .bind(&id)
                    .bind(serde_json::to_string(&doc)?)
                    .execute(&mut *conn)
                    .await?;
            } else {
                errs.push("name", "That URL is already in use.");
            }
        }
        Some(_) => errs.push("name", "That URL is already in use."),
        None => {}
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
    catalog_plugin_schema::check_dataset_limits(data, &ctx.config().catalog.limits, &mut errs);
    catalog_plugin_schema::check_state(
        data.get("state"),
        catalog_plugin_schema::DATASET_STATES,
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

pub async fn package_create(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let mut errs = ValidationBuilder::default();
    catalog_plugin_schema::check_type(p.get("type"), &mut errs);
    errs.finish()?;
    ctx.check_access("package_create", &p).await?;
    let dataset_type = p
        .get("type")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or("dataset")
        .to_string();
    let mut data = p.clone();
    schema_validate(ctx, &dataset_type, &mut data, SchemaOp::Create)?;
    let mut errs = ValidationBuilder::default();
    let id = match data.get("id").and_then(Value::as_str) {
        Some(given) if !ctx.is_sysadmin() && !ctx.ignore_auth => {
            let _ = given;
            errs.push("id", "The input field id was not expected.");
            new_id()
        }
        Some(given) => {
            let norm = catalog_plugin_schema::uuid_parse(given).unwrap_or_default();
            if ctx.package_row(&norm).await?.is_some_and(|r| r.id == norm) {
                errs.push("id", "Dataset id already exists");
            }
            norm
        }
        None => new_id(),
    };
    let name = data
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    claim_name(ctx, &name, &id, &mut errs).await?;
    let owner_org = resolve_owner_org(ctx, data.get("owner_org"), None, &mut errs).await?;
    let private = data
        .get("private")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if private && owner_org.is_none() {
        errs.push("private", "Datasets with no organization can't be private.");
    }
    let input_resources = data
        .get("resources")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let resources = prepare_resources(ctx, &id, &input_resources, &[], &mut errs).await?;
    let input_tags = data
        .get("tags")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let tags = prepare_tags(ctx, &input_tags, &mut errs).await?;
    errs.finish()?;
    let groups = match data.get("groups") {
        Some(g) => Some(resolve_groups(ctx, g).await?),
        None => None,
    };
    let now = now_iso();
    let state = if ctx.is_sysadmin() || ctx.ignore_auth {
        data.get("state")
            .and_then(Value::as_str)
            .unwrap_or("active")
            .to_string()
    } else {
        "active".to_string()
    };
    let modified = match data.get("metadata_modified").and_then(Value::as_str) {
        Some(m) if ctx.is_sysadmin() => m.to_string(),
        _ => now.clone(),
    };
    let mut doc = Map::new();
    for f in catalog_plugin_schema::STRING_FIELDS {
        doc.insert((*f).into(), data.get(*f).cloned().unwrap_or(Value::Null));
    }
    doc.insert("type".into(), json!(dataset_type));
    doc.insert("id".into(), json!(id));
    doc.insert("name".into(), json!(name));
    doc.insert("state".into(), json!(state));
    doc.insert("private".into(), json!(private));
    doc.insert("owner_org".into(), json!(owner_org));
    doc.insert("creator_user_id".into(), json!(ctx.user_id()));
    doc.insert("metadata_created".into(), json!(now));
    doc.insert("metadata_modified".into(), json!(modified));
    doc.insert(
        "extras".into(),
        data.get("extras").cloned().unwrap_or(json!([])),
    );
    doc.insert("tags".into(), Value::Array(tags));
    doc.insert("resources".into(), Value::Array(resources));
    keep_custom_fields(&data, &mut doc);
    write(ctx, &doc, true, groups).await?;
    let row = load(ctx, &id).await?;
    show_row(ctx, &row).await
}

/// Keys `package_show` computes; never stored from input.
const COMPUTED_KEYS: &[&str] = &[
    "num_resources",
    "num_tags",
    "organization",
    "isopen",
    "license_title",
    "license_url",
    "relationships_as_object",
    "relationships_as_subject",
];

/// Stores the top-level fields a custom dataset schema kept beyond CKAN's own (the default
/// schema drops unknown keys, so this only matters for plugin schemas); on update, a custom
/// field absent from the new dict goes, as with replace semantics.
fn keep_custom_fields(data: &Params, doc: &mut Map<String, Value>) {
    let known = catalog_plugin_schema::SCHEMA_FIELDS;
    doc.retain(|k, _| known.contains(&k.as_str()));
    for (k, v) in data {
        if !known.contains(&k.as_str()) && !COMPUTED_KEYS.contains(&k.as_str()) {
            doc.insert(k.clone(), v.clone());
        }
    }
}

/// `package_update` with replace semantics (spec/ckan-write-auth-legacy.md §1.4).
pub async fn package_update(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let r = match p.get("id").or_else(|| p.get("name")) {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(v) if !v.is_null() && !v.is_string() => {
            return Err(validation().field("id", "Must be a string").build())
        }
        _ => {
            let mut e = ValidationBuilder::default();
            e.set("id", json!("Missing value"));
            return Err(e.build());
        }
    };
    let row = load(ctx, &r).await?;
    let mut auth = p.clone();
    auth.insert("id".into(), json!(row.id));
    ctx.check_access("package_update", &auth).await?;
    let old: Map<String, Value> = serde_json::from_str(&row.data)?;
    let mut data = p.clone();
    data.insert("id".into(), json!(row.id));
    data.remove("type");
    schema_validate(ctx, &row.dataset_type, &mut data, SchemaOp::Update)?;
    let mut errs = ValidationBuilder::default();
    let mut doc = old.clone();
    for f in CLEARED_ON_UPDATE {
        doc.insert((*f).into(), data.get(*f).cloned().unwrap_or(Value::Null));
    }
    if let Some(n) = data.get("name").and_then(Value::as_str) {
        claim_name(ctx, n, &row.id, &mut errs).await?;
        doc.insert("name".into(), json!(n));
    }
    if data.contains_key("owner_org") {
        let org = resolve_owner_org(ctx, data.get("owner_org"), Some(&row), &mut errs).await?;
        doc.insert("owner_org".into(), json!(org));
    }
    if let Some(pv) = data.get("private") {
        doc.insert("private".into(), pv.clone());
    }
    if doc.get("private").and_then(Value::as_bool).unwrap_or(false)
        && doc.get("owner_org").is_none_or(Value::is_null)
    {
        errs.push("private", "Datasets with no organization can't be private.");
    }
    if let Some(st) = data.get("state").and_then(Value::as_str) {
        // Checked by `schema_validate`.
        doc.insert("state".into(), json!(st));
    }
    doc.insert(
        "extras".into(),
        data.get("extras").cloned().unwrap_or(json!([])),
    );
    let input_tags = data
        .get("tags")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    doc.insert(
        "tags".into(),
        Value::Array(prepare_tags(ctx, &input_tags, &mut errs).await?),
    );
    if let Some(rs) = data.get("resources").and_then(Value::as_array).cloned() {
        let existing = old
            .get("resources")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        doc.insert(
            "resources".into(),
            Value::Array(prepare_resources(ctx, &row.id, &rs, &existing, &mut errs).await?),
        );
    }
    errs.finish()?;
    let groups = match data.get("groups") {
        Some(g) => Some(resolve_groups(ctx, g).await?),
        None => None,
    };
    keep_custom_fields(&data, &mut doc);
    let mut compare_old = old.clone();
    compare_old.remove("metadata_modified");
    let mut compare_new = doc.clone();
    compare_new.remove("metadata_modified");
    let changed = compare_old != compare_new || groups.is_some();
    let modified = match data.get("metadata_modified").and_then(Value::as_str) {
        Some(m) if ctx.is_sysadmin() => m.to_string(),
        _ if changed => now_iso(),
        _ => row.metadata_modified.clone(),
    };
    doc.insert("metadata_modified".into(), json!(modified));
    write(ctx, &doc, false, groups).await?;
    let row = load(ctx, &row.id).await?;
    show_row(ctx, &row).await
}

pub async fn package_patch(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    if ctx.user.is_none() && !ctx.ignore_auth {
        return Err(not_authorized(
            "Action package_patch requires an authenticated user",
        ));
    }
    let r = req_str(&p, "id")?;
    let row = load(ctx, &r).await?;
    let mut auth = Params::new();
    auth.insert("id".into(), json!(row.id));
    ctx.check_access("package_update", &auth).await?;
    let current = show_row(ctx, &row).await?;
    let mut merged = current.as_object().cloned().unwrap_or_default();
    merged.remove("metadata_modified");
    for (k, v) in p {
        merged.insert(k, v);
    }
    merged.insert("id".into(), json!(row.id));
    package_update(ctx, merged).await
}

pub async fn package_delete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let r = req_str(&p, "id")?;
    let row = ctx
        .package_for_update(&r)
        .await?
        .ok_or_else(|| not_found(""))?;
    let mut auth = Params::new();
    auth.insert("id".into(), json!(row.id));
    ctx.check_access("package_delete", &auth).await?;
    let mut doc: Map<String, Value> = serde_json::from_str(&row.data)?;
    doc.insert("state".into(), json!("deleted"));
    doc.insert("metadata_modified".into(), json!(now_iso()));
    let conn = ctx.db().await?;
    sqlx::query(
        "UPDATE package SET state = 'deleted', metadata_modified = $2, data = $3 WHERE id = $1",
    )
    .bind(&row.id)
    .bind(doc["metadata_modified"].as_str())
    .bind(serde_json::to_string(&doc)?)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "UPDATE member SET state = 'deleted' WHERE table_name = 'package' AND table_id = $1",
    )
    .bind(&row.id)
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM collaborator WHERE package_id = $1")
        .bind(&row.id)
        .execute(&mut *conn)
        .await?;
    Ok(Value::Null)
}

pub async fn dataset_purge(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let r = req_str(&p, "id")?;
    let row = ctx
        .package_for_update(&r)
        .await?
        .ok_or_else(|| not_found("Dataset was not found"))?;
    ctx.check_access("dataset_purge", &p).await?;
    let conn = ctx.db().await?;
    for sql in [
        "DELETE FROM member WHERE table_name = 'package' AND table_id = $1",
        "DELETE FROM collaborator WHERE package_id = $1",
        "DELETE FROM package_tag WHERE package_id = $1",
        "DELETE FROM resource WHERE package_id = $1",
        "DELETE FROM package WHERE id = $1",
    ] {
        sqlx::query(sql).bind(&row.id).execute(&mut *conn).await?;
    }
    Ok(Value::Null)
}

pub async fn package_list(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let limit = natural(&p, "limit")?
        .filter(|l| *l > 0)
        .unwrap_or(i64::MAX / 2);
    let offset = natural(&p, "offset")?.unwrap_or(0);
    ctx.check_access("package_list", &p).await?;
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT name FROM package WHERE state = 'active' AND private = false ORDER BY name LIMIT $1 OFFSET $2",
    )
    .bind(limit)
    .bind(offset)
    .fetch_all(ctx.db().await?)
    .await?;
    Ok(json!(rows.into_iter().map(|r| r.0).collect::<Vec<_>>()))
}

/// Rows of visible datasets, newest change first (the database stands in for the search index).
async fn recent_rows(
    ctx: &mut ActionContext,
    limit: i64,
    offset: i64,
) -> CkanResult<Vec<PackageRow>> {
    let private_clause = if ctx.is_sysadmin() {
        ""
    } else {
        " AND private = false"
    };
    let sql = format!(
        "SELECT id FROM package WHERE state = 'active'{private_clause} ORDER BY metadata_modified DESC LIMIT $1 OFFSET $2"
    );
    let ids: Vec<(String,)> = sqlx::query_as(&sql)
        .bind(limit)
        .bind(offset)
        .fetch_all(ctx.db().await?)
        .await?;
    let mut out = Vec::new();
    for (id,) in ids {
        out.push(load(ctx, &id).await?);
    }
    Ok(out)
}

pub async fn current_package_list_with_resources(
    ctx: &mut ActionContext,
    p: Params,
) -> CkanResult<Value> {
    let limit = natural(&p, "limit")?;
    let page = positive(&p, "page")?;
    let offset = match (natural(&p, "offset")?, page, limit) {
        (Some(o), _, _) => o,
        (None, Some(pg), Some(l)) => (pg - 1) * l,
        _ => 0,
    };
    ctx.check_access("current_package_list_with_resources", &p)
        .await?;
    let rows_max = ctx.config().catalog.search.rows_max;
    let limit = limit.filter(|l| *l > 0).unwrap_or(10).min(rows_max);
    let rows = recent_rows(ctx, limit, offset).await?;
    let mut out = Vec::new();
    for r in rows {
        out.push(show_row(ctx, &r).await?);
    }
    Ok(Value::Array(out))
}

pub async fn package_owner_org_update(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let r = req_str(&p, "id")?;
    ctx.check_access("package_owner_org_update", &p).await?;
    let row = load(ctx, &r).await?;
    let org = match p
        .get("organization_id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        None => None,
        Some(o) => Some(
            ctx.group_row(o)
                .await?
                .filter(|g| g.is_organization)
                .ok_or_else(|| not_found("Organization was not found."))?
                .id,
        ),
    };
    let mut doc: Map<String, Value> = serde_json::from_str(&row.data)?;
    doc.insert("owner_org".into(), json!(org));
    write(ctx, &doc, false, None).await?;
    Ok(Value::Null)
}

async fn bulk(
    ctx: &mut ActionContext,
    p: Params,
    action: &str,
    patch: Params,
) -> CkanResult<Value> {
    let datasets = str_list(&p, "datasets")?.ok_or_else(|| missing("datasets"))?;
    let org_id = req_str(&p, "org_id")?;
    let org = ctx
        .group_row(&org_id)
        .await?
        .ok_or_else(|| not_found("Organization was not found."))?;
    let mut auth = p.clone();
    auth.insert("org_id".into(), json!(org.id));
    ctx.check_access(action, &auth).await?;
    for id in datasets {
        let row = ctx.package_for_update(&id).await?;
        let Some(row) =
            row.filter(|r| r.id == id && r.owner_org.as_deref() == Some(org.id.as_str()))
        else {
            continue;
        };
        let mut doc: Map<String, Value> = serde_json::from_str(&row.data)?;
        for (k, v) in &patch {
            doc.insert(k.clone(), v.clone());
        }
        doc.insert("metadata_modified".into(), json!(now_iso()));
        write(ctx, &doc, false, None).await?;
        if doc["state"] == "deleted" {
            sqlx::query("UPDATE member SET state = 'deleted' WHERE table_name = 'package' AND table_id = $1")
                .bind(&row.id)
                .execute(ctx.db().await?)
                .await?;
        }
    }
    Ok(Value::Null)
}

pub async fn bulk_update_private(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let patch = json!({"private": true})
        .as_object()
        .cloned()
        .unwrap_or_default();
    bulk(ctx, p, "bulk_update_private", patch).await
}

pub async fn bulk_update_public(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let patch = json!({"private": false})
        .as_object()
        .cloned()
        .unwrap_or_default();
    bulk(ctx, p, "bulk_update_public", patch).await
}

pub async fn bulk_update_delete(ctx: &mut ActionContext, p: Params) -> CkanResult<Value> {
    let patch = json!({"state": "deleted"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    bulk(ctx, p, "bulk_update_delete", patch).await
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
