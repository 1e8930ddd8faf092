//! `ckan`: another CKAN (or this catalog) through its Action API, as ckanext-harvest's CKAN
//! harvester reads it — `package_search` pages sorted by id, remote ids and names kept, the
//! organization and group filters, incremental runs from the last error-free one — and what
//! it lacks: datasets gone from the source are deleted (`delete_missing`, on by default; an
//! incremental run lists the source's ids for that, and each missing one is checked with
//! `package_show` before it goes).

use catalog_framework::fetch::FetchError;
use catalog_framework::prelude::*;

use crate::harvester::{GatherContext, Harvester, HarvesterInfo, Page, Record, Source};

/// The harvester.
pub(crate) struct CkanHarvester;

/// Datasets per search page (ckanext-harvest's 100); `rows` in the config changes it.
const DEFAULT_ROWS: u64 = 100;
/// Ids per page of an incremental run's listing.
const LIST_ROWS: u64 = 1000;

fn base(source: &Source) -> String {
    source.url.trim().trim_end_matches('/').to_string()
}

fn headers(source: &Source) -> Vec<(&'static str, String)> {
    let mut h = vec![("Accept", "application/json".to_string())];
    if let Some(key) = &source.api_key {
        h.push(("Authorization", key.clone()));
    }
    if let Some(ua) = source.config.get("user_agent").and_then(Value::as_str) {
        h.push(("User-Agent", ua.to_string()));
    }
    h
}

/// The `fq` terms of the organization and group filters.
fn filter_terms(c: &Map<String, Value>) -> Vec<String> {
    let names = |key: &str| -> Vec<String> {
        c.get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut terms = Vec::new();
    for (field, include, exclude) in [
        (
            "organization",
            "organizations_filter_include",
            "organizations_filter_exclude",
        ),
        ("groups", "groups_filter_include", "groups_filter_exclude"),
    ] {
        let inc = names(include);
        if !inc.is_empty() {
            terms.push(
                inc.iter()
                    .map(|n| format!("{field}:{n}"))
                    .collect::<Vec<_>>()
                    .join(" OR "),
            );
        } else {
            terms.extend(names(exclude).iter().map(|n| format!("-{field}:{n}")));
        }
    }
    terms
}

/// A time an incremental run starts from: an hour before the last good run's gather began
/// (ckanext-harvest's margin), in Solr's form.
fn since_term(since: &str) -> Option<String> {
    let t = catalog_framework::store::time::parse_iso(since)?;
    let from = t - chrono::Duration::hours(1);
    Some(format!(
        "metadata_modified:[{}Z TO *]",
        from.format("%Y-%m-%dT%H:%M:%S%.6f")
    ))
}

/// Reads one Action API answer's `result`.
async fn call(cx: &GatherContext<'_>, url: &str) -> Result<Value, String> {
    let (_, body) = cx
        .app
        .fetcher
        .to_bytes(cx.fetch, url, &headers(cx.source))
        .await
        .map_err(|e| match e {
            FetchError::Status { status, url } => format!("HTTP error: {status} {url}"),
            other => format!("Request error: {other}"),
        })?;
    let v: Value = serde_json::from_slice(&body).map_err(|_| {
        let head: String = String::from_utf8_lossy(&body).chars().take(200).collect();
        format!("Response from remote CKAN was not JSON: {head:?}")
    })?;
    if v.get("success") != Some(&json!(true)) {
        return Err(format!(
            "The remote CKAN answered with an error: {}",
            v.get("error").cloned().unwrap_or(Value::Null)
        ));
    }
    Ok(v.get("result").cloned().unwrap_or(Value::Null))
}

fn search_url(base: &str, rows: u64, start: u64, fq: &[String], fl: Option<&str>) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    q.append_pair("rows", &rows.to_string());
    q.append_pair("start", &start.to_string());
    q.append_pair("sort", "id asc");
    if !fq.is_empty() {
        q.append_pair("fq", &fq.join(" "));
    }
    if let Some(fl) = fl {
        q.append_pair("fl", fl);
    }
    format!("{base}/api/3/action/package_search?{}", q.finish())
}

/// Whether a run deletes what the source no longer has.
fn deletes(c: &Map<String, Value>) -> bool {
    !matches!(c.get("delete_missing"), Some(Value::Bool(false)))
}

#[async_trait]
impl Harvester for CkanHarvester {
    fn info(&self) -> HarvesterInfo {
        HarvesterInfo {
            name: "ckan",
            title: "CKAN",
            description: "Harvests remote CKAN instances",
        }
    }

    fn validate_config(&self, _app: &AppState, c: &Map<String, Value>) -> Result<(), String> {
        check_config(self, c)
    }

    fn first_page(&self, _source: &Source) -> Value {
        json!({"phase": "search", "start": 0})
    }

    async fn gather_page(&self, cx: &GatherContext<'_>, cursor: &Value) -> Result<Page, String> {
        let base = base(cx.source);
        let c = &cx.source.config;
        let listing = cursor["phase"] == json!("list");
        let start = cursor["start"].as_u64().unwrap_or(0);
        let rows = if listing {
            LIST_ROWS
        } else {
            c.get("rows")
                .and_then(Value::as_u64)
                .unwrap_or(DEFAULT_ROWS)
        };
        let mut fq = filter_terms(c);
        let incremental = cx.since.and_then(since_term);
        if !listing {
            fq.extend(incremental.clone());
        }
        let url = search_url(&base, rows, start, &fq, listing.then_some("id"));
        let result = call(cx, &url).await.map_err(|e| {
            format!(
                "Error sending request to search remote CKAN instance {base} using URL '{url}'. Error: {e}"
            )
        })?;
        let results = result
            .get("results")
            .and_then(Value::as_array)
            .cloned()
            .ok_or_else(|| format!("Response from remote CKAN had no results list: {url}"))?;
        let ids: Vec<String> = results
            .iter()
            .filter_map(|d| d.get("id").and_then(Value::as_str).map(str::to_string))
            .collect();
        let page_hash = ids.join(",");
        if !ids.is_empty() && cursor["last"].as_str() == Some(page_hash.as_str()) {
            return Err(format!("The paging doesn't seem to work. URL: {url}"));
        }
        let mut page = Page::default();
        for d in results {
            let Some(obj) = d.as_object() else { continue };
            let Some(id) = obj.get("id").and_then(Value::as_str) else {
                page.errors
                    .push(format!("A remote dataset without an id was skipped: {url}"));
                continue;
            };
            if listing {
                page.records.push(Record {
                    guid: id.to_string(),
                    dataset: None,
                    content: None,
                    modified: None,
                });
                continue;
            }
            if obj.get("type").and_then(Value::as_str) == Some(crate::source::SOURCE_TYPE) {
                continue;
            }
            page.records.push(Record {
                guid: id.to_string(),
                dataset: Some(obj.clone()),
                content: Some(d.to_string()),
                modified: obj
                    .get("metadata_modified")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            });
        }
        page.next = if !ids.is_empty() {
            Some(json!({"phase": cursor["phase"], "start": start + rows, "last": page_hash}))
        } else if !listing && incremental.is_some() && deletes(c) {
            Some(json!({"phase": "list", "start": 0}))
        } else {
            None
        };
        if !listing && start == 0 && ids.is_empty() && incremental.is_none() {
            page.errors
                .push(format!("No datasets found at CKAN: {base}"));
        }
        Ok(page)
    }

    async fn confirm_missing(
        &self,
        cx: &GatherContext<'_>,
        guids: Vec<String>,
    ) -> Result<Vec<String>, String> {
        let base = base(cx.source);
        let mut gone = Vec::new();
        for id in guids {
            let url = format!(
                "{base}/api/3/action/package_show?{}",
                form_urlencoded::Serializer::new(String::new())
                    .append_pair("id", &id)
                    .finish()
            );
            match cx
                .app
                .fetcher
                .to_bytes(cx.fetch, &url, &headers(cx.source))
                .await
            {
                Ok((_, body)) => {
                    let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let r = &v["result"];
                    let alive = v["success"] == json!(true)
                        && r["state"] == json!("active")
                        && r["private"] != json!(true);
                    if !alive {
                        gone.push(id);
                    }
                }
                Err(FetchError::Status {
                    status: 403 | 404, ..
                }) => gone.push(id),
                Err(e) => return Err(format!("{url}: {e}")),
            }
        }
        Ok(gone)
    }

    fn keeps_source_id(&self) -> bool {
        true
    }

    async fn prepare(
        &self,
        ctx: &mut ActionContext,
        source: &Source,
        d: &mut Map<String, Value>,
    ) -> Result<(), String> {
        let c = &source.config;
        // Groups: only with remote_groups (ckanext-harvest drops them otherwise).
        let remote_groups: Vec<Map<String, Value>> = d
            .remove("groups")
            .and_then(|g| g.as_array().cloned())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|g| g.as_object().cloned())
            .collect();
        let mode = c.get("remote_groups").and_then(Value::as_str);
        if matches!(mode, Some("only_local" | "create")) {
            let mut kept = Vec::new();
            for g in remote_groups {
                if let Some(name) = local_group(ctx, &g, false).await? {
                    kept.push(json!({"name": name}));
                } else if mode == Some("create") {
                    kept.push(json!({"name": create_group(ctx, &g, false).await?}));
                }
            }
            d.insert("groups".into(), Value::Array(kept));
        }
        // The organization: the source's, unless remote_orgs finds (or makes) the remote one.
        let remote_org = d
            .get("organization")
            .and_then(Value::as_object)
            .cloned()
            .or_else(|| {
                d.get("owner_org")
                    .and_then(Value::as_str)
                    .map(|id| json!({"id": id}).as_object().cloned().unwrap_or_default())
            });
        d.remove("owner_org");
        // A remote catalog's resources may carry any text as a mimetype (CKAN stores it); this
        // catalog takes only a media type or an IRI (issue 46), so another value is left out rather than
        // refusing the whole dataset.
        if let Some(resources) = d.get_mut("resources").and_then(Value::as_array_mut) {
            for r in resources.iter_mut().filter_map(Value::as_object_mut) {
                for key in ["mimetype", "mimetype_inner"] {
                    let bad = r.get(key).and_then(Value::as_str).is_some_and(|m| {
                        !m.is_empty() && !catalog_framework::validators::is_mimetype_value(m)
                    });
                    if bad {
                        r.remove(key);
                    }
                }
            }
        }
        let org_mode = c.get("remote_orgs").and_then(Value::as_str);
        if let (Some(m @ ("only_local" | "create")), Some(org)) = (org_mode, remote_org) {
            let local = match local_group(ctx, &org, true).await? {
                Some(name) => Some(name),
                None if m == "create" && org.contains_key("name") => {
                    Some(create_group(ctx, &org, true).await?)
                }
                None => None,
            };
            if let Some(name) = local {
                d.insert("owner_org".into(), json!(name));
            }
        }
        Ok(())
    }
}

/// The name of the local group (or organization) with the remote one's id, else its name.
async fn local_group(
    ctx: &mut ActionContext,
    remote: &Map<String, Value>,
    organization: bool,
) -> Result<Option<String>, String> {
    for key in ["id", "name"] {
        if let Some(r) = remote.get(key).and_then(Value::as_str) {
            let found = ctx
                .group_row(r)
                .await
                .map_err(|e| e.to_error_object().to_string())?;
            if let Some(g) =
                found.filter(|g| g.is_organization == organization && g.state == "active")
            {
                return Ok(Some(g.name));
            }
        }
    }
    Ok(None)
}

/// Creates a local group or organization from the remote one's dict (as embedded in the
/// dataset): its name, title, description and image.
async fn create_group(
    ctx: &mut ActionContext,
    remote: &Map<String, Value>,
    organization: bool,
) -> Result<String, String> {
    let mut p = Params::new();
    for key in ["name", "title", "description", "image_url"] {
        if let Some(v) = remote.get(key).filter(|v| v.is_string()) {
            p.insert(key.into(), v.clone());
        }
    }
    let action = if organization {
        "organization_create"
    } else {
        "group_create"
    };
    let made = ctx
        .call(action, p)
        .await
        .map_err(|e| format!("{action}: {}", e.to_error_object()))?;
    Ok(made["name"].as_str().unwrap_or_default().to_string())
}

/// The config checks that need no app (what `validate_config` runs).
fn check_config(_h: &CkanHarvester, c: &Map<String, Value>) -> Result<(), String> {
    crate::config::validate_common(c)?;
    if c.get("api_version").is_some_and(|v| !v.is_i64()) {
        return Err("api_version must be an integer".into());
    }
    if c.get("read_only").is_some_and(|v| !v.is_boolean()) {
        return Err("read_only must be boolean".into());
    }
    for key in [
        "api_key",
        "user_agent",
        "user",
        "remote_groups",
        "remote_orgs",
    ] {
        if c.get(key).is_some_and(|v| !v.is_string()) {
            return Err(format!("{key} must be a string"));
        }
    }
    for (a, b, what) in [
        (
            "organizations_filter_include",
            "organizations_filter_exclude",
            "organizations",
        ),
        ("groups_filter_include", "groups_filter_exclude", "groups"),
    ] {
        if c.contains_key(a) && c.contains_key(b) {
            return Err(format!(
                "Harvest configuration cannot contain both {a} and {b}"
            ));
        }
        for key in [a, b] {
            if let Some(v) = c.get(key) {
                if !v.as_array().is_some_and(|l| l.iter().all(Value::is_string)) {
                    return Err(format!("{key} must be a list of {what} names"));
                }
            }
        }
    }
    if let Some(r) = c.get("rows") {
        if !r.as_u64().is_some_and(|n| (1..=1000).contains(&n)) {
            return Err("rows must be a whole number from 1 to 1000".into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_become_fq_terms() {
        let c = json!({"organizations_filter_include": ["a", "b"], "groups_filter_exclude": ["x"]});
        assert_eq!(
            filter_terms(c.as_object().unwrap()),
            vec!["organization:a OR organization:b", "-groups:x"]
        );
    }

    #[test]
    fn incremental_runs_start_an_hour_early() {
        assert_eq!(
            since_term("2024-05-01T10:00:01.500000").unwrap(),
            "metadata_modified:[2024-05-01T09:00:01.500000Z TO *]"
        );
    }

    #[test]
    fn config_is_checked() {
        let h = CkanHarvester;
        let check = |v: Value| check_config(&h, v.as_object().unwrap());
        assert!(check(json!({"api_version": 2, "rows": 500})).is_ok());
        assert_eq!(
            check(json!({"api_version": "2"})),
            Err("api_version must be an integer".into())
        );
        assert!(check(
            json!({"organizations_filter_include": ["a"], "organizations_filter_exclude": ["b"]})
        )
        .unwrap_err()
        .contains("cannot contain both"));
        assert!(check(json!({"rows": 5000})).is_err());
    }
}
