//! Dataset relationships under the dataset register: `/rest/dataset/<ref>/relationships`,
//! `/<ref>/<type>`, `/<ref>/relationships/<ref2>` and the entity `/<ref>/<type>/<ref2>`.
//! Lists and dicts are `{subject, type, object, comment}` read from `<ref>`'s side, the
//! datasets referred to by name (v1) or id (v2).

use catalog_framework::prelude::*;

use super::refs::{self, Table};
use super::shared::{empty_ok, fail, params, Answer};
use crate::common::LegacyRequest;

/// Relationship dicts with their dataset references in the request version's form.
async fn in_version(lr: &LegacyRequest, list: Value) -> CkanResult<Vec<Value>> {
    let items = list.as_array().cloned().unwrap_or_default();
    let field = |r: &Value, k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    // Every reference of the list converted in one go (one connection), subject then object.
    let references: Vec<String> = items
        .iter()
        .flat_map(|r| [field(r, "subject"), field(r, "object")])
        .collect();
    let converted = refs::convert(lr, Table::Package, &references).await?;
    Ok(items
        .iter()
        .zip(converted.chunks(2))
        .map(|(r, pair)| {
            json!({
                "subject": pair[0],
                "type": r.get("type").cloned().unwrap_or(Value::Null),
                "object": pair[1],
                "comment": r.get("comment").cloned().unwrap_or(json!("")),
            })
        })
        .collect())
}

/// The relationships of a dataset the caller may read, for its REST form.
pub(crate) async fn of_dataset(lr: &LegacyRequest, pkg_id: &str) -> CkanResult<Vec<Value>> {
    let list = lr
        .run(
            "package_relationships_list",
            params(json!({ "id": pkg_id })),
        )
        .await?;
    in_version(lr, list).await
}

/// `GET /rest/dataset/<ref>/relationships[/<ref2>]` and `/<ref>/<type>[/<ref2>]`; a typed query
/// with no match is 404.
pub(super) async fn list(
    lr: &LegacyRequest,
    id: &str,
    rel: Option<&str>,
    id2: Option<&str>,
) -> Answer {
    let mut p = params(json!({ "id": id }));
    if let Some(r) = rel {
        p.insert("rel".into(), json!(r));
    }
    if let Some(o) = id2 {
        p.insert("id2".into(), json!(o));
    }
    let list = lr
        .run("package_relationships_list", p)
        .await
        .map_err(fail)?;
    let out = in_version(lr, list).await.map_err(fail)?;
    Ok(lr.ok(&Value::Array(out)))
}

/// The request body of a relationship write; these URLs carry everything, so an empty body
/// is an empty object here.
#[allow(clippy::result_large_err)] // as LegacyRequest::body_object
fn body(lr: &LegacyRequest) -> Result<Params, axum::response::Response> {
    if lr.body.iter().all(u8::is_ascii_whitespace) {
        Ok(Params::new())
    } else {
        lr.body_object()
    }
}

/// `POST` to any relationship URL: the body's `object`, `type` and `comment` fill in (and
/// override) what the URL names, as CKAN 2.7's `package_relationship_create_rest`.
pub(super) async fn create(
    lr: &LegacyRequest,
    id: &str,
    rel: Option<&str>,
    id2: Option<&str>,
) -> Answer {
    let b = body(lr)?;
    let subject = b
        .get("subject")
        .and_then(Value::as_str)
        .unwrap_or(id)
        .to_string();
    let object = b
        .get("object")
        .and_then(Value::as_str)
        .or(id2)
        .unwrap_or("")
        .to_string();
    let rel = b
        .get("type")
        .and_then(Value::as_str)
        .or(rel)
        .unwrap_or("")
        .to_string();
    let mut p = params(json!({"subject": subject, "object": object, "type": rel}));
    if let Some(c) = b.get("comment") {
        p.insert("comment".into(), c.clone());
    }
    let created = lr
        .run("package_relationship_create", p)
        .await
        .map_err(fail)?;
    let out = in_version(lr, json!([created]))
        .await
        .map_err(fail)?
        .pop()
        .unwrap_or(Value::Null);
    let location = format!(
        "{}/api/{}/rest/dataset/{}/{}/{}",
        lr.api_base(),
        lr.version.number(),
        out["subject"].as_str().unwrap_or(""),
        out["type"].as_str().unwrap_or(""),
        out["object"].as_str().unwrap_or("")
    );
    Ok(lr.created(&location, &out))
}

/// `PUT /rest/dataset/<ref>/<type>/<ref2>`: only the comment changes (the URL's subject, type
/// and object win over the body's).
pub(super) async fn update(lr: &LegacyRequest, id: &str, rel: &str, id2: &str) -> Answer {
    let b = body(lr)?;
    let mut p = params(json!({"subject": id, "object": id2, "type": rel}));
    if let Some(c) = b.get("comment") {
        p.insert("comment".into(), c.clone());
    }
    let updated = lr
        .run("package_relationship_update", p)
        .await
        .map_err(fail)?;
    let out = in_version(lr, json!([updated]))
        .await
        .map_err(fail)?
        .pop()
        .unwrap_or(Value::Null);
    Ok(lr.ok(&out))
}

/// `DELETE /rest/dataset/<ref>/<type>/<ref2>`: 200, no body.
pub(super) async fn delete(lr: &LegacyRequest, id: &str, rel: &str, id2: &str) -> Answer {
    lr.run(
        "package_relationship_delete",
        params(json!({"subject": id, "object": id2, "type": rel})),
    )
    .await
    .map_err(fail)?;
    Ok(empty_ok())
}
