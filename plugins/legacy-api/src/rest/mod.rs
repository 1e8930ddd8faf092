//! The Model API (seed "Model API", spec §10.2) under `/api/rest`, `/api/1/rest` and
//! `/api/2/rest`: registers (`dataset` alias `package`, `group`, `tag`, `rating`, `revision`,
//! `licenses`, `user`, `activity`), their entities and sub-registers (a dataset's
//! relationships, revisions and activity). Each request becomes one or more Action API calls as
//! the caller; the answers are CKAN 2.7's REST forms.

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::response::Response;
use axum::routing::any;
use axum::Router;
use catalog_framework::prelude::*;
use catalog_framework::web::{bare_error, mark_sequence};
use percent_encoding::percent_decode_str;

use crate::common::{bad_request, not_found_error, LegacyRequest};

mod dataset;
mod group;
mod misc;
pub(crate) mod rating;
mod refs;
mod relationship;
mod shared;

use shared::Answer;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/rest/{*path}", any(handle))
        .route("/api/1/rest/{*path}", any(handle))
        .route("/api/2/rest/{*path}", any(handle))
}

/// The registers CKAN 2.7's routes accept; any other is an unknown path.
const REGISTERS: [&str; 10] = [
    "package", "dataset", "resource", "tag", "group", "revision", "licenses", "rating", "user",
    "activity",
];

/// The eight relationship types, each a sub-register of a dataset.
pub(crate) const RELATIONSHIP_TYPES: [&str; 8] = [
    "depends_on",
    "dependency_of",
    "derives_from",
    "has_derivation",
    "child_of",
    "parent_of",
    "links_to",
    "linked_from",
];

/// What a REST path names: `register[/id[/sub[/id2]]]`.
#[derive(Debug)]
pub(crate) struct Target {
    pub register: String,
    pub id: Option<String>,
    pub sub: Option<String>,
    pub id2: Option<String>,
}

impl Target {
    fn parse(path: &str) -> Option<Target> {
        let decoded: Vec<String> = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned())
            .collect();
        let segs: Vec<&str> = decoded.iter().map(String::as_str).collect();
        if segs.is_empty() || segs.len() > 4 || !REGISTERS.contains(&segs[0]) {
            return None;
        }
        let register = if segs[0] == "package" {
            "dataset"
        } else {
            segs[0]
        };
        Some(Target {
            register: register.to_string(),
            id: segs.get(1).map(|s| s.to_string()),
            sub: segs.get(2).map(|s| s.to_string()),
            id2: segs.get(3).map(|s| s.to_string()),
        })
    }
}

async fn handle(State(app): State<AppState>, req: Request) -> Response {
    // The path is read raw and decoded leniently: a segment that is not UTF-8 is an unknown
    // name (404), not axum's plain-text 400.
    let raw = req.uri().path().to_string();
    let path = raw.split_once("/rest/").map_or("", |(_, rest)| rest);
    let target = Target::parse(path);
    // The body is read before anything is refused, so the connection stays usable.
    let lr = match LegacyRequest::read(app, req).await {
        Ok(lr) => lr,
        Err(resp) => return resp,
    };
    let Some(target) = target else {
        return not_found_error("");
    };
    let answer = match lr.method {
        Method::GET | Method::HEAD => match (&target.id, &target.sub, &target.id2) {
            (None, _, _) => list(&lr, &target).await,
            (Some(id), None, _) => show(&lr, &target, id).await,
            (Some(id), Some(sub), None) => list_sub(&lr, &target, id, sub).await,
            (Some(id), Some(sub), Some(id2)) => show_sub(&lr, &target, id, sub, id2).await,
        },
        Method::POST => match (&target.id, &target.sub) {
            (None, _) => create(&lr, &target).await,
            (Some(id), None) => update(&lr, &target, id).await,
            (Some(id), Some(sub)) => create_sub(&lr, &target, id, sub).await,
        },
        Method::PUT => match (&target.id, &target.sub, &target.id2) {
            (Some(id), None, _) => update(&lr, &target, id).await,
            (Some(id), Some(sub), Some(id2)) => update_sub(&lr, &target, id, sub, id2).await,
            _ => Err(bad_request(&format!(
                "Cannot update entity of this type: {}",
                target.register
            ))),
        },
        Method::DELETE => match (&target.id, &target.sub, &target.id2) {
            (Some(id), None, _) => delete(&lr, &target, id).await,
            (Some(id), Some(sub), Some(id2)) => delete_sub(&lr, &target, id, sub, id2).await,
            _ => Err(bad_request(&format!(
                "Cannot delete entity of this type: {} {}",
                target.register,
                target.sub.as_deref().unwrap_or("")
            ))),
        },
        _ => Err(bare_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "Bad request - Method not allowed",
        )),
    };
    let mut response = answer.unwrap_or_else(|e| e);
    if lr.method != Method::GET && response.status().is_success() {
        mark_sequence(&lr.app, &mut response);
    }
    response
}

async fn list(lr: &LegacyRequest, t: &Target) -> Answer {
    match t.register.as_str() {
        "dataset" => dataset::list(lr).await,
        "group" => group::list(lr).await,
        "tag" => misc::tag_list(lr).await,
        "licenses" => misc::licenses(lr).await,
        "revision" => misc::revision_list(lr).await,
        other => Err(bad_request(&format!(
            "Cannot list entity of this type: {other}"
        ))),
    }
}

async fn show(lr: &LegacyRequest, t: &Target, id: &str) -> Answer {
    match t.register.as_str() {
        "dataset" => dataset::show(lr, id).await,
        "group" => group::show(lr, id).await,
        "tag" => misc::tag_show(lr, id).await,
        "revision" => misc::revision_show(lr, id).await,
        "rating" => rating::show(lr, id).await,
        other => Err(bad_request(&format!(
            "Cannot read entity of this type: {other}"
        ))),
    }
}

async fn list_sub(lr: &LegacyRequest, t: &Target, id: &str, sub: &str) -> Answer {
    match (t.register.as_str(), sub) {
        ("dataset", "relationships") => relationship::list(lr, id, None, None).await,
        ("dataset", rel) if RELATIONSHIP_TYPES.contains(&rel) => {
            relationship::list(lr, id, Some(rel), None).await
        }
        ("dataset", "revisions") => misc::dataset_revisions(lr, id).await,
        ("dataset", "activity") => misc::activity(lr, "package_activity_list", id).await,
        ("group", "activity") => misc::activity(lr, "group_activity_list", id).await,
        ("user", "activity") => misc::activity(lr, "user_activity_list", id).await,
        ("user", "dashboard_activity") => misc::dashboard(lr).await,
        ("activity", "details") => misc::activity(lr, "activity_detail_list", id).await,
        (other, _) => Err(bad_request(&format!(
            "Cannot list entity of this type: {other}"
        ))),
    }
}

async fn show_sub(lr: &LegacyRequest, t: &Target, id: &str, sub: &str, id2: &str) -> Answer {
    match (t.register.as_str(), sub) {
        ("dataset", "relationships") => relationship::list(lr, id, None, Some(id2)).await,
        ("dataset", rel) if RELATIONSHIP_TYPES.contains(&rel) => {
            relationship::list(lr, id, Some(rel), Some(id2)).await
        }
        (other, _) => Err(bad_request(&format!(
            "Cannot read entity of this type: {other}"
        ))),
    }
}

async fn create(lr: &LegacyRequest, t: &Target) -> Answer {
    match t.register.as_str() {
        "dataset" => dataset::create(lr).await,
        "group" => group::create(lr).await,
        "rating" => rating::create(lr).await,
        other => Err(bad_request(&format!(
            "Cannot create new entity of this type: {other} None"
        ))),
    }
}

async fn create_sub(lr: &LegacyRequest, t: &Target, id: &str, sub: &str) -> Answer {
    match (t.register.as_str(), sub) {
        ("dataset", "relationships") => relationship::create(lr, id, None, t.id2.as_deref()).await,
        ("dataset", rel) if RELATIONSHIP_TYPES.contains(&rel) => {
            relationship::create(lr, id, Some(rel), t.id2.as_deref()).await
        }
        (other, sub) => Err(bad_request(&format!(
            "Cannot create new entity of this type: {other} {sub}"
        ))),
    }
}

async fn update(lr: &LegacyRequest, t: &Target, id: &str) -> Answer {
    match t.register.as_str() {
        "dataset" => dataset::update(lr, id).await,
        "group" => group::update(lr, id).await,
        other => Err(bad_request(&format!(
            "Cannot update entity of this type: {other}"
        ))),
    }
}

async fn update_sub(lr: &LegacyRequest, t: &Target, id: &str, sub: &str, id2: &str) -> Answer {
    match (t.register.as_str(), sub) {
        ("dataset", rel) if RELATIONSHIP_TYPES.contains(&rel) => {
            relationship::update(lr, id, rel, id2).await
        }
        (other, _) => Err(bad_request(&format!(
            "Cannot update entity of this type: {other}"
        ))),
    }
}

async fn delete(lr: &LegacyRequest, t: &Target, id: &str) -> Answer {
    match t.register.as_str() {
        "dataset" => dataset::delete(lr, id).await,
        "group" => group::delete(lr, id).await,
        other => Err(bad_request(&format!(
            "Cannot delete entity of this type: {other} "
        ))),
    }
}

async fn delete_sub(lr: &LegacyRequest, t: &Target, id: &str, sub: &str, id2: &str) -> Answer {
    match (t.register.as_str(), sub) {
        ("dataset", rel) if RELATIONSHIP_TYPES.contains(&rel) => {
            relationship::delete(lr, id, rel, id2).await
        }
        (other, sub) => Err(bad_request(&format!(
            "Cannot delete entity of this type: {other} {sub}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_a_register_and_its_parts() {
        let t = Target::parse("package/abc/child_of/def").unwrap();
        assert_eq!(t.register, "dataset");
        assert_eq!(t.id.as_deref(), Some("abc"));
        assert_eq!(t.sub.as_deref(), Some("child_of"));
        assert_eq!(t.id2.as_deref(), Some("def"));
        assert!(Target::parse("nosuch").is_none());
        assert!(Target::parse("").is_none());
        assert!(Target::parse("dataset/a/b/c/d").is_none());
        let t = Target::parse("licenses").unwrap();
        assert!(t.id.is_none());
    }
}
