//! The smaller registers: tags, licenses, revisions and activity streams.

use catalog_framework::prelude::*;
use catalog_framework::store;

use super::refs::{self, Table};
use super::shared::{fail, params, Answer};
use crate::common::LegacyRequest;

/// `GET /rest/tag`: every free tag's name.
pub(super) async fn tag_list(lr: &LegacyRequest) -> Answer {
    let tags = lr.run("tag_list", Params::new()).await.map_err(fail)?;
    Ok(lr.ok(&tags))
}

/// `GET /rest/tag/<name>`: the public active datasets carrying the free tag, by name (v1) or
/// id (v2), sorted; an unknown tag is 404.
pub(super) async fn tag_show(lr: &LegacyRequest, id_or_name: &str) -> Answer {
    let tag = lr
        .run("tag_show", params(json!({ "id": id_or_name })))
        .await
        .map_err(fail)?;
    // The tag as tag_show found it (by id or by name): its datasets are those of its id.
    let tag_id = tag.get("id").and_then(Value::as_str).unwrap_or_default();
    let mut ctx = lr.context();
    let conn = ctx.db().await.map_err(fail)?;
    let rows = store::tag_public_package_refs(conn, tag_id)
        .await
        .map_err(|e| fail(e.into()))?;
    let list = refs::in_version(lr, rows);
    Ok(lr.ok(&json!(list)))
}

/// `GET /rest/licenses`.
pub(super) async fn licenses(lr: &LegacyRequest) -> Answer {
    let list = lr.run("license_list", Params::new()).await.map_err(fail)?;
    Ok(lr.ok(&list))
}

/// `GET /rest/revision`: revision ids, newest first (at most 50).
pub(super) async fn revision_list(lr: &LegacyRequest) -> Answer {
    let list = lr.run("revision_list", Params::new()).await.map_err(fail)?;
    Ok(lr.ok(&list))
}

/// `GET /rest/revision/<id>`: the revision with the datasets it changed, by name (v1) or id
/// (v2).
pub(super) async fn revision_show(lr: &LegacyRequest, id: &str) -> Answer {
    let mut rev = lr
        .run("revision_show", params(json!({ "id": id })))
        .await
        .map_err(fail)?;
    let packages: Vec<String> = rev
        .get("packages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p.as_str().map(str::to_string))
        .collect();
    let groups: Vec<String> = rev
        .get("groups")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p.as_str().map(str::to_string))
        .collect();
    rev["packages"] = json!(refs::convert(lr, Table::Package, &packages)
        .await
        .map_err(fail)?);
    rev["groups"] = json!(refs::convert(lr, Table::Group, &groups)
        .await
        .map_err(fail)?);
    Ok(lr.ok(&rev))
}

/// `GET /rest/dataset/<ref>/revisions`: the dataset's revisions, newest first.
pub(super) async fn dataset_revisions(lr: &LegacyRequest, id: &str) -> Answer {
    let list = lr
        .run("package_revision_list", params(json!({ "id": id })))
        .await
        .map_err(fail)?;
    Ok(lr.ok(&list))
}

/// An activity list of a dataset, group or user, or an activity's details.
pub(super) async fn activity(lr: &LegacyRequest, action: &str, id: &str) -> Answer {
    let list = lr
        .run(action, params(json!({ "id": id })))
        .await
        .map_err(fail)?;
    Ok(lr.ok(&list))
}

/// `GET /rest/user/<ref>/dashboard_activity`: the caller's dashboard (CKAN ignored the id).
pub(super) async fn dashboard(lr: &LegacyRequest) -> Answer {
    let list = lr
        .run("dashboard_activity_list", Params::new())
        .await
        .map_err(fail)?;
    Ok(lr.ok(&list))
}
