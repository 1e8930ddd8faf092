//! The group register (`/rest/group`): the REST form of a group or organization (extras as an
//! object, `packages` as sorted dataset references) and its writes.

use catalog_framework::prelude::*;
use catalog_framework::store;

use super::refs;
use super::shared::{empty_ok, extras_object, fail, merged_extras, params, Answer};
use crate::common::LegacyRequest;

/// `GET /rest/group`: the active groups (not organizations), by name (v1) or id (v2).
pub(super) async fn list(lr: &LegacyRequest) -> Answer {
    let groups = lr
        .run("group_list", params(json!({ "all_fields": true })))
        .await
        .map_err(fail)?;
    let key = if lr.version.refs_by_name() {
        "name"
    } else {
        "id"
    };
    let refs: Vec<Value> = groups
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| g.get(key).cloned())
        .collect();
    Ok(lr.ok(&Value::Array(refs)))
}

/// `GET /rest/group/<ref>`.
pub(super) async fn show(lr: &LegacyRequest, id: &str) -> Answer {
    let form = rest_form(lr, id).await.map_err(fail)?;
    Ok(lr.ok(&form))
}

/// A group (or organization) in the REST form, read as the caller.
async fn rest_form(lr: &LegacyRequest, id: &str) -> CkanResult<Value> {
    let g = lr
        .run(
            "group_show",
            params(json!({"id": id, "include_datasets": false})),
        )
        .await?;
    let Value::Object(mut d) = g else {
        return Err(internal("group_show did not answer an object"));
    };
    let extras = extras_object(&d);
    d.insert("extras".into(), Value::Object(extras));
    let group_id = d
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let is_org = d
        .get("is_organization")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut ctx = lr.context();
    let conn = ctx.db().await?;
    let rows = if is_org {
        store::organization_public_package_refs(conn, &group_id).await?
    } else {
        store::group_public_package_refs(conn, &group_id).await?
    };
    let packages = refs::in_version(lr, rows);
    d.insert("packages".into(), json!(packages));
    Ok(Value::Object(d))
}

/// The REST input as Action API parameters: `packages` references become `{"id": ref}` (a
/// name or an id), `extras` an object merged over `current` (a `null` value deletes a key).
fn from_api(body: Params, current: Option<&Map<String, Value>>) -> Params {
    let mut out = Params::new();
    for (key, value) in body {
        let value = match (key.as_str(), value) {
            ("packages", Value::Array(items)) => Value::Array(
                items
                    .into_iter()
                    .map(|p| match p {
                        Value::String(s) => json!({ "id": s }),
                        other => other,
                    })
                    .collect(),
            ),
            ("extras", Value::Object(given)) => merged_extras(current, given, |v| v),
            (_, v) => v,
        };
        out.insert(key, value);
    }
    out
}

/// `POST /rest/group`: 201, `Location: …/rest/group/<id>`, the group's REST form.
pub(super) async fn create(lr: &LegacyRequest) -> Answer {
    let body = lr.body_object()?;
    let created = lr
        .run("group_create", from_api(body, None))
        .await
        .map_err(fail)?;
    let id = created.get("id").and_then(Value::as_str).unwrap_or("");
    let form = rest_form(lr, id).await.map_err(fail)?;
    let location = format!("{}{}/{id}", lr.api_base(), lr.path.trim_end_matches('/'));
    Ok(lr.created(&location, &form))
}

/// `PUT` or `POST /rest/group/<ref>`: given fields replace, absent ones (member lists
/// included) keep their values.
pub(super) async fn update(lr: &LegacyRequest, id: &str) -> Answer {
    let body = lr.body_object()?;
    let current = rest_form(lr, id).await.map_err(fail)?;
    let current_id = current.get("id").and_then(Value::as_str).unwrap_or("");
    let is_org = current
        .get("is_organization")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut input = from_api(body, current.get("extras").and_then(Value::as_object));
    input.insert("id".into(), json!(current_id));
    let action = if is_org {
        "organization_patch"
    } else {
        "group_patch"
    };
    lr.run(action, input).await.map_err(fail)?;
    let form = rest_form(lr, current_id).await.map_err(fail)?;
    Ok(lr.ok(&form))
}

/// `DELETE /rest/group/<ref>`: 200, no body.
pub(super) async fn delete(lr: &LegacyRequest, id: &str) -> Answer {
    let current = lr
        .run(
            "group_show",
            params(json!({"id": id, "include_datasets": false})),
        )
        .await
        .map_err(fail)?;
    let is_org = current
        .get("is_organization")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let action = if is_org {
        "organization_delete"
    } else {
        "group_delete"
    };
    let gid = current.get("id").cloned().unwrap_or(Value::Null);
    lr.run(action, params(json!({ "id": gid })))
        .await
        .map_err(fail)?;
    Ok(empty_ok())
}
