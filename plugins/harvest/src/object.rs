//! `harvest_object_show`, `harvest_object_list`: a record as harvested, for those who may
//! read its source (ckanext-harvest lets anyone read any object; a private source's records
//! stay private here).

use catalog_framework::authz::may_read_package;
use catalog_framework::prelude::*;

use crate::dicts;
use crate::store;

action_params! {
    /// Show a harvest object: the record as read, its state, report and errors.
    ///
    /// :rtype: dictionary
    pub struct HarvestObjectShowParams {
        /// the object's id
        id: Option<String>,
        /// a dataset's id or name: its current object
        dataset_id: Option<String>,
    }
}

pub(crate) async fn harvest_object_show(
    ctx: &mut ActionContext,
    p: HarvestObjectShowParams,
) -> CkanResult<Value> {
    ctx.check_access("harvest_object_show", &p.__extras).await?;
    let object = match (&p.id, &p.dataset_id) {
        (Some(id), _) => store::object(ctx.db().await?, id).await?,
        (None, Some(d)) => {
            let pkg = ctx
                .package_row(d)
                .await?
                .ok_or_else(|| not_found("Dataset not found"))?;
            store::current_object_of_package(ctx.db().await?, &pkg.id).await?
        }
        (None, None) => {
            return Err(validation_message(
                "Please provide either an \"id\" or a \"dataset_id\" parameter",
            ))
        }
    };
    let object = object.ok_or_else(|| not_found("Harvest object not found"))?;
    if !may_read_package(ctx, &object.harvest_source_id).await? {
        return Err(not_found("Harvest object not found"));
    }
    dicts::object_dict(ctx.db().await?, &object).await
}

action_params! {
    /// List the ids of a source's harvest objects.
    ///
    /// :rtype: list of ids
    pub struct HarvestObjectListParams {
        /// the source's id (or name)
        source_id: String,
        /// only the current objects (one per dataset the source keeps); default true
        only_current: bool = true,
        /// at most this many (default 10,000)
        limit: Option<Positive>,
    }
}

pub(crate) async fn harvest_object_list(
    ctx: &mut ActionContext,
    p: HarvestObjectListParams,
) -> CkanResult<Value> {
    ctx.check_access("harvest_object_list", &p.__extras).await?;
    let pkg = crate::source::dataset(ctx, &p.source_id).await?;
    if !may_read_package(ctx, &pkg.id).await? {
        return Err(not_found(format!(
            "Harvest source {} does not exist",
            p.source_id
        )));
    }
    let limit = p.limit.map_or(10_000, |l| l.0.min(100_000));
    let ids = store::object_ids(ctx.db().await?, &pkg.id, p.only_current, limit).await?;
    Ok(json!(ids))
}

action_params! {
    /// List the harvesters (source types) this catalog has.
    ///
    /// :rtype: list of dictionaries with `name`, `title`, `description`
    pub struct HarvestersInfoShowParams {}
}

pub(crate) async fn harvesters_info_show(
    ctx: &mut ActionContext,
    p: HarvestersInfoShowParams,
) -> CkanResult<Value> {
    ctx.check_access("harvesters_info_show", &p.__extras)
        .await?;
    let out: Vec<Value> = ctx
        .app
        .registry
        .extensions::<crate::harvester::HarvesterRegistration>()
        .values()
        .map(|h| {
            let i = h.info();
            json!({"name": i.name, "title": i.title, "description": i.description,
                   "form_config_interface": "Text", "show_config": true})
        })
        .collect();
    Ok(Value::Array(out))
}
