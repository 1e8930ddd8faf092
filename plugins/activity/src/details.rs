//! `activity_detail_list`, the older release's activity details: what a change changed,
//! derived from the data before and after it. The `_html` snippets show a change by its one
//! detail, and `revision_show` reads an activity's data, through here.

use std::collections::HashMap;

use catalog_framework::prelude::*;

use crate::actions::{check_activity_access, load};
use crate::store::{self, ActivityRow};

/// The dataset fields whose change is a change of the dataset itself (not of its resources,
/// extras or tags, which get their own details, nor of what is computed).
fn own_field(key: &str) -> bool {
    !matches!(
        key,
        "resources"
            | "tags"
            | "extras"
            | "groups"
            | "organization"
            | "metadata_modified"
            | "num_resources"
            | "num_tags"
            | "relationships_as_subject"
            | "relationships_as_object"
    )
}

/// A stable id for the `n`th detail of an activity (details are derived on each read).
fn detail_id(activity_id: &str, n: usize) -> String {
    uuid::Uuid::new_v3(
        &uuid::Uuid::NAMESPACE_OID,
        format!("{activity_id}/detail/{n}").as_bytes(),
    )
    .to_string()
}

/// One detail, before its id: (object_id, object_type, activity_type, data).
type Detail = (String, &'static str, &'static str, Value);

/// Items of a list keyed by one of their fields: in their order, and by key.
struct Keyed<'a> {
    order: Vec<(String, &'a Value)>,
    by_key: HashMap<String, &'a Value>,
}

impl<'a> Keyed<'a> {
    fn of(v: Option<&'a Value>, key: &str) -> Keyed<'a> {
        let order: Vec<(String, &Value)> = v
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| Some((i.get(key)?.as_str()?.to_string(), i)))
                    .collect()
            })
            .unwrap_or_default();
        let by_key = order.iter().map(|(k, v)| (k.clone(), *v)).collect();
        Keyed { order, by_key }
    }

    fn get(&self, key: &str) -> Option<&&'a Value> {
        self.by_key.get(key)
    }

    fn contains_key(&self, key: &str) -> bool {
        self.by_key.contains_key(key)
    }

    fn iter(&self) -> impl Iterator<Item = (&String, &&'a Value)> {
        self.order.iter().map(|(k, v)| (k, v))
    }
}

/// What a `changed package` activity changed, as CKAN 2.8's activity details named it: the
/// dataset's own fields (`Package`), each resource (`Resource`), extra (`PackageExtra`) and tag
/// (`tag`) added, changed or removed.
fn package_changes(before: &Value, after: &Value) -> Vec<Detail> {
    let pkg_id = after["id"].as_str().unwrap_or_default().to_string();
    let mut out: Vec<Detail> = Vec::new();
    let (Some(b), Some(a)) = (before.as_object(), after.as_object()) else {
        return out;
    };
    let changed = a
        .iter()
        .filter(|(k, _)| own_field(k))
        .any(|(k, v)| b.get(k) != Some(v))
        || b.keys().any(|k| own_field(k) && !a.contains_key(k));
    if changed {
        out.push((
            pkg_id.clone(),
            "Package",
            "changed",
            json!({"package": after}),
        ));
    }
    let (old, new) = (
        Keyed::of(b.get("resources"), "id"),
        Keyed::of(a.get("resources"), "id"),
    );
    for (id, r) in new.iter() {
        match old.get(id) {
            None => out.push((id.clone(), "Resource", "new", json!({"resource": r}))),
            Some(o) if o != r => {
                out.push((id.clone(), "Resource", "changed", json!({"resource": r})))
            }
            Some(_) => {}
        }
    }
    for (id, r) in old.iter().filter(|(id, _)| !new.contains_key(id)) {
        out.push((id.clone(), "Resource", "deleted", json!({"resource": r})));
    }
    let (old, new) = (
        Keyed::of(b.get("extras"), "key"),
        Keyed::of(a.get("extras"), "key"),
    );
    let extra = |key: &str, e: &Value, state: &str| {
        let id = uuid::Uuid::new_v3(
            &uuid::Uuid::NAMESPACE_OID,
            format!("{pkg_id}/extra/{key}").as_bytes(),
        )
        .to_string();
        let data = json!({"package_extra": {
            "id": id, "key": key, "value": e.get("value"), "package_id": pkg_id, "state": state,
        }});
        (id, data)
    };
    for (key, e) in new.iter() {
        let kind = match old.get(key) {
            None => "new",
            Some(o) if o != e => "changed",
            Some(_) => continue,
        };
        let (id, data) = extra(key, e, "active");
        out.push((id, "PackageExtra", kind, data));
    }
    for (key, e) in old.iter().filter(|(k, _)| !new.contains_key(k)) {
        let (id, data) = extra(key, e, "deleted");
        out.push((id, "PackageExtra", "deleted", data));
    }
    let (old, new) = (
        Keyed::of(b.get("tags"), "name"),
        Keyed::of(a.get("tags"), "name"),
    );
    let tag = |t: &Value, id: &str| -> Detail {
        let tid = t["id"].as_str().unwrap_or(id).to_string();
        (tid, "tag", "", json!({"tag": t, "package": after}))
    };
    for (name, t) in new.iter().filter(|(n, _)| !old.contains_key(n)) {
        let mut d = tag(t, name);
        d.2 = "added";
        out.push(d);
    }
    for (name, t) in old.iter().filter(|(n, _)| !new.contains_key(n)) {
        let mut d = tag(t, name);
        d.2 = "removed";
        out.push(d);
    }
    if out.is_empty() {
        out.push((pkg_id, "Package", "changed", json!({"package": after})));
    }
    out
}

/// The details of an activity as CKAN's `activity_detail_dictize` shows them.
pub(crate) async fn details(
    ctx: &mut ActionContext,
    a: &ActivityRow,
    data: &Value,
) -> CkanResult<Vec<Value>> {
    let pkg = &data["package"];
    let found: Vec<Detail> = match a.activity_type.as_str() {
        "new package" | "deleted package" => {
            let kind = if a.activity_type == "new package" {
                "new"
            } else {
                "deleted"
            };
            vec![(
                a.object_id.clone(),
                "Package",
                kind,
                json!({"package": pkg}),
            )]
        }
        "changed package" => {
            let conn = ctx.db().await?;
            let before = match store::previous(conn, a).await? {
                Some(p) => {
                    let seq = p.seq;
                    store::data_of(conn, vec![p]).await?.remove(&seq)
                }
                None => None,
            };
            match before {
                Some(b) => package_changes(&b["package"], pkg),
                None => vec![(
                    a.object_id.clone(),
                    "Package",
                    "changed",
                    json!({"package": pkg}),
                )],
            }
        }
        _ => Vec::new(),
    };
    Ok(found
        .into_iter()
        .enumerate()
        .map(|(n, (object_id, object_type, activity_type, data))| {
            json!({
                "id": detail_id(&a.id, n),
                "activity_id": a.id,
                "object_id": object_id,
                "object_type": object_type,
                "activity_type": activity_type,
                "data": data,
            })
        })
        .collect())
}

/// The data of one activity, rebuilt.
pub(crate) async fn data_of_one(ctx: &mut ActionContext, a: ActivityRow) -> CkanResult<Value> {
    let seq = a.seq;
    Ok(store::data_of(ctx.db().await?, vec![a])
        .await?
        .remove(&seq)
        .unwrap_or(Value::Null))
}

action_params! {
    /// Return what an activity changed, as a list of activity details (the older release's
    /// detail records, derived from the data before and after the change): the dataset's own
    /// fields (`Package`), each resource (`Resource`), extra (`PackageExtra`) and tag (`tag`)
    /// added, changed or removed. Whoever may see the activity may list its details.
    pub struct ActivityDetailListParams {
        /// the id of the activity
        id: String,
    }
}

pub(crate) async fn activity_detail_list(
    ctx: &mut ActionContext,
    p: ActivityDetailListParams,
) -> CkanResult<Value> {
    let a = load(ctx, &p.id).await?;
    if !a.activity_type.ends_with("package") {
        return Ok(json!([]));
    }
    check_activity_access(ctx, &a, false).await?;
    let head = a.clone();
    let data = data_of_one(ctx, a).await?;
    Ok(Value::Array(details(ctx, &head, &data).await?))
}

register_typed_actions! {
    read activity_detail_list(ActivityDetailListParams) => activity_detail_list;
}

register_auth!("activity_detail_list", crate::actions::ActivityShowAuth);
