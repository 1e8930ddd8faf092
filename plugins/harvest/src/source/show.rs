//! `harvest_source_show`, `harvest_source_show_status`, `harvest_source_list`: what anyone who
//! may read the source dataset may read. The api key is shown to sysadmins only.

use catalog_framework::authz::may_read_package;
use catalog_framework::prelude::*;
use catalog_framework::typed::Raw;

use super::{config_for, SOURCE_TYPE};
use crate::dicts;
use crate::store;

action_params! {
    /// Show a harvest source: its dataset dict with its `status` and `active`.
    ///
    /// :param id: the source's id or name
    /// :param url: the source's url (exactly as stored), instead of `id`
    /// :rtype: dictionary
    pub struct HarvestSourceShowParams {
        /// the source's id or name
        id: Option<String>,
        /// the source's url, instead of `id`
        url: Option<String>,
    }
}

pub(crate) async fn harvest_source_show(
    ctx: &mut ActionContext,
    p: HarvestSourceShowParams,
) -> CkanResult<Value> {
    let id = match (p.id, p.url) {
        (Some(id), _) => id,
        (None, Some(url)) => store::source_by_url(ctx.db().await?, &url)
            .await?
            .map(|s| s.id)
            .ok_or_else(|| not_found(""))?,
        (None, None) => return Err(validation().field("id", "Missing value").build()),
    };
    let mut show = Params::new();
    show.insert("id".into(), json!(id));
    let mut d = ctx.call("package_show", show).await?;
    if d["type"] != json!(SOURCE_TYPE) {
        return Err(not_found("Harvest source not found"));
    }
    let source_id = d["id"].as_str().unwrap_or_default().to_string();
    let row = store::source(ctx.db().await?, &source_id).await?;
    if let (true, Some(key)) = (
        ctx.is_sysadmin(),
        row.as_ref().and_then(|r| r.api_key.clone()),
    ) {
        let config = d["config"].as_str().unwrap_or_default().to_string();
        d["config"] = config_for(&config, Some(&key), true);
        d["api_key"] = json!(key);
    }
    d["status"] = dicts::source_status(ctx.db().await?, &source_id).await?;
    d["active"] = json!(d["state"] == json!("active"));
    Ok(d)
}

action_params! {
    /// Show a harvest source's status: how many jobs it had, its last job (with statistics
    /// and error summaries) and how many datasets it keeps.
    ///
    /// :param id: the source's id (or name)
    /// :rtype: dictionary
    pub struct HarvestSourceShowStatusParams {
        /// the source's id (or name)
        id: String,
    }
}

pub(crate) async fn harvest_source_show_status(
    ctx: &mut ActionContext,
    p: HarvestSourceShowStatusParams,
) -> CkanResult<Value> {
    let missing = || not_found(format!("Harvest source {} does not exist", p.id));
    let pkg = ctx
        .package_row(&p.id)
        .await?
        .filter(|r| r.dataset_type == SOURCE_TYPE)
        .ok_or_else(missing)?;
    let mut auth = Params::new();
    auth.insert("id".into(), json!(pkg.id));
    ctx.check_access("harvest_source_show_status", &auth)
        .await?;
    dicts::source_status(ctx.db().await?, &pkg.id).await
}

action_params! {
    /// List harvest sources (the `harvest_source` table's dicts, newest first, at most
    /// `catalog.harvest.harvest_source_limit`), those the caller may read.
    ///
    /// :rtype: list of dictionaries
    pub struct HarvestSourceListParams {
        /// only the sources of this organization (id)
        organization_id: Option<String>,
        /// only active sources
        only_active: bool = false,
        /// only sources due to run (active, scheduled, their next run passed)
        only_to_run: bool = false,
        /// add each source's last job (`last_job_status`)
        return_last_job_status: bool = false,
        /// (unused, CKAN's)
        user: Raw,
    }
}

pub(crate) async fn harvest_source_list(
    ctx: &mut ActionContext,
    p: HarvestSourceListParams,
) -> CkanResult<Value> {
    ctx.check_access("harvest_source_list", &p.__extras).await?;
    let limit = crate::settings(&ctx.app).source_limit;
    let org = match &p.organization_id {
        Some(o) => Some(
            ctx.group_row(o)
                .await?
                .map(|g| g.id)
                .unwrap_or_else(|| o.clone()),
        ),
        None => None,
    };
    let rows = store::sources(ctx.db().await?, p.only_active, org.as_deref(), limit).await?;
    let now = store::now();
    let mut out = Vec::new();
    for s in rows {
        if p.only_to_run
            && !(s.active
                && s.frequency != "MANUAL"
                && s.next_run.as_deref().is_none_or(|n| n <= now.as_str()))
        {
            continue;
        }
        if !may_read_package(ctx, &s.id).await? {
            continue;
        }
        let sysadmin = ctx.is_sysadmin();
        out.push(
            dicts::source_table_dict(ctx.db().await?, &s, p.return_last_job_status, sysadmin)
                .await?,
        );
    }
    Ok(Value::Array(out))
}
