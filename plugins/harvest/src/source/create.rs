//! `harvest_source_create`, `harvest_source_update`, `harvest_source_patch`: the dataset
//! actions on a dict of type `harvest` (their auth rules: the organization's editors), with
//! the source's `api_key` taken out of `config` and kept in the source row only.

use catalog_framework::prelude::*;
use catalog_framework::typed::InDict;

use super::SOURCE_TYPE;
use crate::dicts;
use crate::store;

action_params! {
    /// Create a harvest source: a dataset of type `harvest` in an organization.
    ///
    /// :rtype: the source's dataset dict, with its `status`
    pub struct HarvestSourceCreateParams {
        /// the source's name (its URL name, as a dataset's)
        name: InDict<String>,
        /// the source's title
        title: InDict<String>,
        /// the address the harvester reads
        url: InDict<String>,
        /// the harvester: `dcat_rdf`, `ckan` or `dcat_json` (`harvesters_info_show` lists them)
        source_type: InDict<String>,
        /// MANUAL (default), MONTHLY, WEEKLY, BIWEEKLY, DAILY or ALWAYS
        frequency: InDict<String>,
        /// the harvester's options, a JSON object as a string
        config: InDict<String>,
        /// the organization the source and its datasets belong to
        owner_org: InDict<String>,
        /// a description of the source
        notes: InDict<String>,
    }
}

action_params! {
    /// Update a harvest source, replacing its fields (`package_update` on it). A `config`
    /// without `api_key` keeps the key the source has; `"api_key": ""` removes it.
    ///
    /// :rtype: the source's dataset dict, with its `status`
    pub struct HarvestSourceUpdateParams {
        /// the source's id or name
        id: InDict<String>,
        /// the address the harvester reads
        url: InDict<String>,
        /// the harvester
        source_type: InDict<String>,
        /// how often it runs
        frequency: InDict<String>,
        /// the harvester's options, a JSON object as a string
        config: InDict<String>,
    }
}

action_params! {
    /// Change some fields of a harvest source (`package_patch` on it).
    ///
    /// :rtype: the source's dataset dict, with its `status`
    pub struct HarvestSourcePatchParams {
        /// the source's id or name
        id: InDict<String>,
    }
}

/// What the caller said of the api key: `None` (nothing), `Some(None)` (remove it),
/// `Some(Some(key))`.
type ApiKey = Option<Option<String>>;

/// Takes `api_key` out of a `config` (a JSON string or object): what goes into the dataset,
/// and the key. A config that is not JSON is left for the schema to refuse.
fn take_api_key(params: &mut Params) -> ApiKey {
    let config = params.get("config")?;
    let mut obj = match config {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(o)) => o,
            _ => return None,
        },
        Value::Object(o) => o.clone(),
        _ => return None,
    };
    let key = obj.remove("api_key")?;
    params.insert("config".into(), json!(Value::Object(obj).to_string()));
    Some(match key {
        Value::String(k) if !k.trim().is_empty() => Some(k.trim().to_string()),
        _ => None,
    })
}

/// Runs a dataset action on the source dict, then keeps the api key and adds the `status`.
async fn write_source(
    ctx: &mut ActionContext,
    action: &str,
    mut params: Params,
) -> CkanResult<Value> {
    let key = take_api_key(&mut params);
    let mut saved = ctx.call(action, params).await?;
    let id = saved["id"].as_str().unwrap_or_default().to_string();
    if let Some(key) = key {
        let url = saved["url"].as_str().unwrap_or_default().to_string();
        let kind = saved["source_type"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        store::set_api_key(ctx.db().await?, &id, &url, &kind, key.as_deref()).await?;
    }
    saved["status"] = dicts::source_status(ctx.db().await?, &id).await?;
    Ok(saved)
}

pub(crate) async fn harvest_source_create(
    ctx: &mut ActionContext,
    p: HarvestSourceCreateParams,
) -> CkanResult<Value> {
    let mut params = p.__extras;
    params.insert("type".into(), json!(SOURCE_TYPE));
    write_source(ctx, "package_create", params).await
}

/// The source named by `id`, or CKAN's not-found: an update never turns another dataset into
/// a source.
async fn existing_source_id(ctx: &mut ActionContext, params: &Params) -> CkanResult<String> {
    let id = match params.get("id").or_else(|| params.get("name")) {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        _ => return Err(validation().field("id", "Missing value").build()),
    };
    let (pkg, _) = super::load(ctx, &id).await?;
    Ok(pkg.id)
}

pub(crate) async fn harvest_source_update(
    ctx: &mut ActionContext,
    p: HarvestSourceUpdateParams,
) -> CkanResult<Value> {
    let mut params = p.__extras;
    let id = existing_source_id(ctx, &params).await?;
    params.insert("id".into(), json!(id));
    params.insert("type".into(), json!(SOURCE_TYPE));
    write_source(ctx, "package_update", params).await
}

pub(crate) async fn harvest_source_patch(
    ctx: &mut ActionContext,
    p: HarvestSourcePatchParams,
) -> CkanResult<Value> {
    let mut params = p.__extras;
    let id = existing_source_id(ctx, &params).await?;
    params.insert("id".into(), json!(id));
    write_source(ctx, "package_patch", params).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_key_leaves_the_config() {
        let mut p: Params = json!({"config": "{\"api_key\": \"s3cret\", \"rows\": 5}"})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(take_api_key(&mut p), Some(Some("s3cret".into())));
        assert_eq!(p["config"], json!("{\"rows\":5}"));
        let mut cleared: Params = json!({"config": {"api_key": ""}})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(take_api_key(&mut cleared), Some(None));
        let mut none: Params = json!({"config": "{}"}).as_object().unwrap().clone();
        assert_eq!(take_api_key(&mut none), None);
        let mut bad: Params = json!({"config": "{not json"}).as_object().unwrap().clone();
        assert_eq!(take_api_key(&mut bad), None);
        assert_eq!(bad["config"], json!("{not json"));
    }
}
