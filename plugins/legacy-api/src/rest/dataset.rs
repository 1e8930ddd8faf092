//! The dataset register (`/rest/dataset`, alias `package`): the REST form of a dataset (tags as
//! names, extras as an object, group references, ratings, rendered notes, relationships) and
//! the REST input rules (tags as a list or a whitespace-separated string, extras merged with
//! `null` deleting a key, `download_url` as the only resource, absent fields kept on update).

use axum::http::StatusCode;
use catalog_framework::prelude::*;
use catalog_framework::store;
use catalog_framework::web::json_response;

use super::refs;
use super::shared::{empty_ok, extras_object, fail, merged_extras, params, Answer};
use crate::common::{LegacyRequest, Version};

/// Keys a client may read but not send back (spec: "read-only fields").
const READ_ONLY: [&str; 12] = [
    "revision_id",
    "metadata_created",
    "metadata_modified",
    "relationships",
    "ratings_average",
    "ratings_count",
    "ckan_url",
    "notes_rendered",
    "isopen",
    "license",
    "relationships_as_subject",
    "relationships_as_object",
];

/// `GET /rest/dataset`: every active public dataset, by name (v1) or id (v2), sorted by name.
pub(super) async fn list(lr: &LegacyRequest) -> Answer {
    let mut ctx = lr.context();
    let conn = ctx.db().await.map_err(fail)?;
    let rows = store::public_package_refs(conn)
        .await
        .map_err(|e| fail(e.into()))?;
    let refs: Vec<String> = rows
        .into_iter()
        .map(|(id, name)| refs::pick(lr.version, id, name))
        .collect();
    Ok(lr.ok(&json!(refs)))
}

/// `GET /rest/dataset/<ref>`.
pub(super) async fn show(lr: &LegacyRequest, id: &str) -> Answer {
    let form = rest_form(lr, id).await.map_err(fail)?;
    Ok(lr.ok(&form))
}

/// A dataset in the REST form, read as the caller (404/403 as `package_show`).
pub(crate) async fn rest_form(lr: &LegacyRequest, id: &str) -> CkanResult<Value> {
    let pkg = lr.run("package_show", params(json!({ "id": id }))).await?;
    let Value::Object(mut d) = pkg else {
        return Err(internal("package_show did not answer an object"));
    };
    let pkg_id = d
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let name = d
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();

    let tags: Vec<Value> = d
        .get("tags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|t| t.get("vocabulary_id").is_none_or(Value::is_null))
        .filter_map(|t| t.get("name").cloned())
        .collect();
    d.insert("tags".into(), Value::Array(tags));

    let extras = extras_object(&d);
    d.insert("extras".into(), Value::Object(extras));

    let groups: Vec<Value> = d
        .get("groups")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|g| {
            let key = if lr.version.refs_by_name() {
                "name"
            } else {
                "id"
            };
            g.get(key).cloned()
        })
        .collect();
    d.insert("groups".into(), Value::Array(groups));

    if let Some(Value::Array(resources)) = d.get_mut("resources") {
        for r in resources.iter_mut() {
            if let Value::Object(r) = r {
                r.remove("revision_id");
                r.remove("state");
                r.insert("package_id".into(), json!(pkg_id));
            }
        }
    }
    if lr.version == Version::V1 {
        let first_url = d
            .get("resources")
            .and_then(Value::as_array)
            .and_then(|r| r.first())
            .and_then(|r| r.get("url"))
            .cloned();
        if let Some(url) = first_url {
            d.insert("download_url".into(), url);
        }
    }

    let license = d.get("license_title").cloned().unwrap_or(Value::Null);
    d.insert("license".into(), license);
    let (average, count) = super::rating::summary(lr, &pkg_id).await?;
    d.insert("ratings_average".into(), json!(average));
    d.insert("ratings_count".into(), json!(count));

    let site = lr.app.config.site_url().to_string();
    let notes = d
        .get("notes")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let rendered = catalog_framework::markdown::render_off_thread(notes, site.clone()).await?;
    d.insert("notes_rendered".into(), json!(rendered));
    if !site.is_empty() {
        d.insert("ckan_url".into(), json!(format!("{site}/dataset/{name}")));
    }

    d.remove("relationships_as_subject");
    d.remove("relationships_as_object");
    let relationships = super::relationship::of_dataset(lr, &pkg_id).await?;
    d.insert("relationships".into(), Value::Array(relationships));

    let revision = latest_revision(lr, &pkg_id).await?;
    d.insert("revision_id".into(), revision);
    Ok(Value::Object(d))
}

/// The dataset's latest revision (its newest activity), when the activity plugin is enabled.
async fn latest_revision(lr: &LegacyRequest, pkg_id: &str) -> CkanResult<Value> {
    let ctx = lr.context();
    if !ctx.has_action("package_activity_list") {
        return Ok(Value::Null);
    }
    let list = lr
        .run_ignoring_auth(
            "package_activity_list",
            params(json!({"id": pkg_id, "limit": 1})),
        )
        .await?;
    Ok(list
        .get(0)
        .and_then(|a| a.get("id"))
        .cloned()
        .unwrap_or(Value::Null))
}

/// The REST input turned into Action API parameters. `current_extras` are the dataset's extras
/// before an update: the given extras are merged over them and a `null` value deletes a key.
pub(crate) fn from_api(
    version: Version,
    body: Params,
    current_extras: Option<&Map<String, Value>>,
) -> Params {
    let mut out = Params::new();
    let mut download_url = None;
    for (key, value) in body {
        if READ_ONLY.contains(&key.as_str()) {
            continue;
        }
        let value = match key.as_str() {
            "tags" => match value {
                Value::String(s) => {
                    Value::Array(s.split_whitespace().map(|t| json!({ "name": t })).collect())
                }
                Value::Array(items) => Value::Array(
                    items
                        .into_iter()
                        .map(|t| match t {
                            Value::String(s) => json!({ "name": s }),
                            other => other,
                        })
                        .collect(),
                ),
                other => other,
            },
            "extras" => match value {
                Value::Object(given) => merged_extras(current_extras, given, extra_text),
                other => other,
            },
            "groups" => match value {
                Value::Array(items) => Value::Array(
                    items
                        .into_iter()
                        .map(|g| match g {
                            Value::String(s) if version.refs_by_name() => json!({ "name": s }),
                            Value::String(s) => json!({ "id": s }),
                            other => other,
                        })
                        .collect(),
                ),
                other => other,
            },
            "download_url" => {
                download_url = Some(value);
                continue;
            }
            _ => value,
        };
        out.insert(key, value);
    }
    let no_resources = out
        .get("resources")
        .is_none_or(|r| r.as_array().is_some_and(Vec::is_empty) || r.is_null());
    if let Some(Value::String(url)) = download_url {
        if !url.is_empty() && no_resources {
            out.insert("resources".into(), json!([{ "url": url }]));
        }
    }
    out
}

/// An extra's value as CKAN stores it: a string (numbers and booleans as their JSON text).
fn extra_text(v: Value) -> Value {
    match v {
        Value::String(_) => v,
        other => Value::String(other.to_string()),
    }
}

/// The keys of a dataset whose values CKAN 2.7's schema read as lists of dicts.
const SUBSCHEMA_KEYS: [&str; 6] = [
    "resources",
    "tags",
    "extras",
    "groups",
    "relationships_as_object",
    "relationships_as_subject",
];

/// CKAN 2.7's `DataError` for input its dictization could not even flatten: a list of
/// something else than dicts (or a scalar) where the schema expects a list of dicts. The REST
/// API answered it 400 `Integrity Error` (the Action API of CKAN 2.12 answers 409 instead).
/// The message is CKAN 2.7's, Python 2 type names included.
fn data_error(input: &Params) -> Option<String> {
    for key in SUBSCHEMA_KEYS {
        let type_name = match input.get(key)? {
            Value::Null => continue,
            Value::Array(items) if items.is_empty() => continue,
            Value::Array(items) if items[0].is_object() => {
                if items.iter().all(Value::is_object) {
                    continue;
                }
                return Some("Values in lists need to be dicts".into());
            }
            Value::Array(_) => "list",
            Value::String(_) => "unicode",
            Value::Bool(_) => "bool",
            Value::Number(n) if n.is_f64() => "float",
            Value::Number(_) => "int",
            Value::Object(_) => "dict",
        };
        return Some(format!(
            "Only lists of dicts can be placed against subschema ('{key}',), not <type '{type_name}'>"
        ));
    }
    None
}

/// [`from_api`], refusing what CKAN 2.7 could not flatten (see [`data_error`]).
#[allow(clippy::result_large_err)] // as LegacyRequest::body_object
fn action_input(
    lr: &LegacyRequest,
    body: Params,
    current_extras: Option<&Map<String, Value>>,
) -> Result<Params, axum::response::Response> {
    let input = from_api(lr.version, body.clone(), current_extras);
    match data_error(&input) {
        None => Ok(input),
        Some(message) => Err(json_response(
            StatusCode::BAD_REQUEST,
            &json!({
                "success": false,
                "error": {"__type": "Integrity Error", "message": message, "data": body},
            }),
        )),
    }
}

/// `POST /rest/dataset`: 201, `Location: <path>/<new id>`, the new dataset's REST form.
pub(super) async fn create(lr: &LegacyRequest) -> Answer {
    let body = lr.body_object()?;
    let input = action_input(lr, body, None)?;
    let created = lr.run("package_create", input).await.map_err(fail)?;
    let id = created.get("id").and_then(Value::as_str).unwrap_or("");
    let form = rest_form(lr, id).await.map_err(fail)?;
    let location = format!(
        "{}{}/{id}",
        lr.api_base(),
        lr.path.trim_end_matches('/').replace("package", "dataset")
    );
    Ok(lr.created(&location, &form))
}

/// `PUT` or `POST /rest/dataset/<ref>`: the given fields replace, absent ones keep their
/// values, extras merge (`null` deletes); `id` is read-only.
pub(super) async fn update(lr: &LegacyRequest, id: &str) -> Answer {
    let body = lr.body_object()?;
    let current = lr
        .run("package_show", params(json!({ "id": id })))
        .await
        .map_err(fail)?;
    let current_id = current.get("id").and_then(Value::as_str).unwrap_or("");
    if let Some(given) = body.get("id") {
        let given_text = given.as_str().unwrap_or("");
        let current_name = current.get("name").and_then(Value::as_str).unwrap_or("");
        if given_text != current_id && given_text != current_name {
            let v = json!({
                "id": format!(
                    "Cannot change value of key from {current_id} to {}. This key is read-only",
                    given_text
                )
            });
            return Err(lr.reply(StatusCode::CONFLICT, &v));
        }
    }
    let current_extras = current.as_object().map(extras_object).unwrap_or_default();
    let mut input = action_input(lr, body, Some(&current_extras))?;
    input.insert("id".into(), json!(current_id));
    lr.run("package_patch", input).await.map_err(fail)?;
    let form = rest_form(lr, current_id).await.map_err(fail)?;
    Ok(lr.ok(&form))
}

/// `DELETE /rest/dataset/<ref>`: the dataset's state becomes `deleted`; 200, no body.
pub(super) async fn delete(lr: &LegacyRequest, id: &str) -> Answer {
    lr.run("package_delete", params(json!({ "id": id })))
        .await
        .map_err(fail)?;
    Ok(empty_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rest_input_becomes_action_parameters() {
        let body = params(json!({
            "name": "x",
            "tags": "a b  c",
            "extras": {"keep": "1", "gone": null, "n": 5},
            "groups": ["g1"],
            "download_url": "http://example.org/f.csv",
            "ratings_average": 3,
            "notes_rendered": "<p>x</p>",
        }));
        let current = params(json!({"gone": "old", "other": "stays"}));
        let out = from_api(Version::V1, body, Some(&current));
        assert_eq!(
            out["tags"],
            json!([{"name": "a"}, {"name": "b"}, {"name": "c"}])
        );
        let mut extras = out["extras"].as_array().unwrap().clone();
        extras.sort_by_key(|e| e["key"].as_str().unwrap().to_string());
        assert_eq!(
            Value::Array(extras),
            json!([
                {"key": "keep", "value": "1"},
                {"key": "n", "value": "5"},
                {"key": "other", "value": "stays"},
            ])
        );
        assert_eq!(out["groups"], json!([{"name": "g1"}]));
        assert_eq!(
            out["resources"],
            json!([{"url": "http://example.org/f.csv"}])
        );
        assert!(!out.contains_key("ratings_average"));
        assert!(!out.contains_key("notes_rendered"));
        assert!(!out.contains_key("download_url"));
    }

    #[test]
    fn version_two_refers_to_groups_by_id_and_resources_win_over_download_url() {
        let body = params(json!({
            "groups": ["0b7c"],
            "tags": ["t1", "t2"],
            "resources": [{"url": "http://a"}],
            "download_url": "http://b",
        }));
        let out = from_api(Version::V2, body, None);
        assert_eq!(out["groups"], json!([{"id": "0b7c"}]));
        assert_eq!(out["tags"], json!([{"name": "t1"}, {"name": "t2"}]));
        assert_eq!(out["resources"], json!([{"url": "http://a"}]));
    }
}
