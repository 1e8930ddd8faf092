//! Output shapes: the dataset, group/organization and user dicts (spec/ckan-read-api.md §3).

use catalog_framework::prelude::*;
use catalog_framework::store::{GroupRow, PackageRow, UserRow};
use md5::{Digest, Md5};

use crate::{formats, licenses};

/// Inserts `kvs` sorted by key, CKAN's output order.
pub(crate) fn sorted(mut m: Map<String, Value>) -> Map<String, Value> {
    let mut keys: Vec<String> = m.keys().cloned().collect();
    keys.sort();
    let mut out = Map::new();
    for k in keys {
        let v = m.remove(&k).unwrap_or(Value::Null);
        out.insert(k, v);
    }
    out
}

/// The organization summary embedded in a dataset dict.
pub(crate) fn org_summary(g: &GroupRow) -> Value {
    json!({
        "id": g.id, "name": g.name, "title": g.title.clone().unwrap_or_default(), "type": g.group_type,
        "description": g.description.clone().unwrap_or_default(), "image_url": g.image_url.clone().unwrap_or_default(),
        "created": g.created, "is_organization": true, "approval_status": g.approval_status, "state": g.state,
    })
}

fn image_display_url(site_url: &str, image_url: &Option<String>) -> Option<String> {
    match image_url {
        Some(u) if u.starts_with("http") => Some(u.clone()),
        Some(u) if !u.is_empty() => Some(format!("{site_url}/uploads/group/{u}")),
        // CKAN copies an empty image_url as it is; only a null one is left out.
        Some(_) => Some(String::new()),
        None => None,
    }
}

/// A group item inside a dataset dict: six keys, nulls omitted.
pub(crate) fn group_in_package(site_url: &str, g: &GroupRow) -> Value {
    let mut m = Map::new();
    if let Some(d) = &g.description {
        m.insert("description".into(), json!(d));
    }
    m.insert("display_name".into(), json!(g.display_name()));
    m.insert("id".into(), json!(g.id));
    if let Some(u) = image_display_url(site_url, &g.image_url) {
        m.insert("image_display_url".into(), json!(u));
    }
    m.insert("name".into(), json!(g.name));
    if let Some(t) = &g.title {
        m.insert("title".into(), json!(t));
    }
    Value::Object(m)
}

/// Rewrites a stored resource for output: upload URLs, scheme-less URLs, format, nulls dropped.
pub(crate) fn resource_out(site_url: &str, dataset_type: &str, r: &Value) -> Value {
    let mut m = r.as_object().cloned().unwrap_or_default();
    let url_type = m
        .get("url_type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if let Some(url) = m.get("url").and_then(Value::as_str).map(str::to_string) {
        let id = m.get("id").and_then(Value::as_str).unwrap_or("");
        let pkg = m.get("package_id").and_then(Value::as_str).unwrap_or("");
        let new = if url_type == "upload" {
            let file = munge_filename(url.rsplit('/').next().unwrap_or(&url));
            format!("{site_url}/{dataset_type}/{pkg}/resource/{id}/download/{file}")
        } else if !url.is_empty() && !url.contains("://") {
            format!("http://{}", url.trim_start_matches('/'))
        } else {
            url
        };
        m.insert("url".into(), json!(new));
    }
    if let Some(f) = m.get("format").and_then(Value::as_str) {
        let n = formats::normalise(f);
        m.insert("format".into(), json!(n));
    }
    for k in ["url", "format", "hash"] {
        if m.get(k).is_some_and(Value::is_null) {
            m.remove(k);
        }
    }
    Value::Object(sorted(m))
}

/// CKAN's upload filename munging: lowercase, spaces to `-`, only `[a-z0-9_.-]`.
pub(crate) fn munge_filename(name: &str) -> String {
    let s: String = name
        .to_lowercase()
        .replace(' ', "-")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        .collect();
    if s.is_empty() {
        "file".into()
    } else {
        s
    }
}

/// The full `package_show` dict of a stored dataset, shown by its type's schema.
pub(crate) async fn package_dict(ctx: &mut ActionContext, row: &PackageRow) -> CkanResult<Value> {
    package_dict_as(ctx, row, false).await
}

/// The full `package_show` dict of a stored dataset, shown by the default schema (CKAN's
/// `use_default_schema`) when `default_schema`, else by its type's.
pub(crate) async fn package_dict_as(
    ctx: &mut ActionContext,
    row: &PackageRow,
    default_schema: bool,
) -> CkanResult<Value> {
    let mut doc: Map<String, Value> = serde_json::from_str(&row.data)?;
    let site_url = ctx.config().site_url().to_string();
    let bundle = ctx
        .package_bundle(&row.id)
        .await?
        .ok_or_else(|| not_found("Package was not found."))?;
    let org = bundle.organization.clone();
    let group_rows = bundle.groups.clone();
    doc.insert(
        "organization".into(),
        org.as_ref().map(org_summary).unwrap_or(Value::Null),
    );
    let mut groups: Vec<GroupRow> = group_rows;
    groups.sort_by_key(|g| g.display_name().to_lowercase());
    doc.insert(
        "groups".into(),
        Value::Array(
            groups
                .iter()
                .map(|g| group_in_package(&site_url, g))
                .collect(),
        ),
    );

    let license_id = doc
        .get("license_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    match license_id.as_deref().and_then(licenses::find) {
        Some(l) => {
            doc.insert("license_title".into(), json!(l.title));
            if !l.url.is_empty() {
                doc.insert("license_url".into(), json!(l.url));
            }
            doc.insert("isopen".into(), json!(l.od == "approved"));
        }
        None => {
            doc.insert(
                "license_title".into(),
                license_id.map(Value::String).unwrap_or(Value::Null),
            );
            doc.insert("isopen".into(), json!(false));
        }
    }
    let title_empty = doc
        .get("title")
        .and_then(Value::as_str)
        .is_none_or(|t| t.trim().is_empty());
    if title_empty {
        doc.insert("title".into(), json!(row.name));
    }
    let resources: Vec<Value> = doc
        .get("resources")
        .and_then(Value::as_array)
        .map(|rs| {
            rs.iter()
                .map(|r| resource_out(&site_url, &row.dataset_type, r))
                .collect()
        })
        .unwrap_or_default();
    let tags_len = doc
        .get("tags")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    doc.insert("num_resources".into(), json!(resources.len()));
    doc.insert("num_tags".into(), json!(tags_len));
    doc.insert("resources".into(), Value::Array(resources));
    doc.entry("relationships_as_object").or_insert(json!([]));
    doc.entry("relationships_as_subject").or_insert(json!([]));
    let mut out = sorted(doc);
    let schema_type = if default_schema {
        "dataset"
    } else {
        row.dataset_type.as_str()
    };
    if let Some(schema) = ctx.app.registry.schema(schema_type).cloned() {
        schema.show(&mut out);
    }
    // Lists of dicts last, as CKAN emits them.
    for k in [
        "extras",
        "groups",
        "organization",
        "relationships_as_object",
        "relationships_as_subject",
        "resources",
        "tags",
    ] {
        if let Some(v) = out.shift_remove(k) {
            out.insert(k.into(), v);
        }
    }
    Ok(Value::Object(out))
}

/// The base group/organization dict (`group_show` without the optional parts).
pub(crate) fn group_base(site_url: &str, g: &GroupRow) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("approval_status".into(), json!(g.approval_status));
    m.insert("created".into(), json!(g.created));
    if let Some(d) = &g.description {
        m.insert("description".into(), json!(d));
    }
    m.insert("display_name".into(), json!(g.display_name()));
    m.insert("id".into(), json!(g.id));
    if let Some(u) = image_display_url(site_url, &g.image_url) {
        m.insert("image_display_url".into(), json!(u));
    }
    if let Some(u) = &g.image_url {
        m.insert("image_url".into(), json!(u));
    }
    m.insert("is_organization".into(), json!(g.is_organization));
    m.insert("name".into(), json!(g.name));
    m.insert("num_followers".into(), json!(0));
    m.insert("state".into(), json!(g.state));
    if let Some(t) = &g.title {
        m.insert("title".into(), json!(t));
    }
    m.insert("type".into(), json!(g.group_type));
    m
}

pub(crate) fn extras_list(extras: &Map<String, Value>) -> Value {
    Value::Array(
        extras
            .iter()
            .map(|(k, v)| json!({"key": k, "value": v}))
            .collect(),
    )
}

fn email_hash(email: &Option<String>) -> String {
    let e = email.clone().unwrap_or_default().trim().to_lowercase();
    hex::encode(Md5::digest(e.as_bytes()))
}

/// A user dict. `private` adds email and apikey (the user themself or a sysadmin).
pub(crate) fn user_dict(
    u: &UserRow,
    number_created_packages: i64,
    private: bool,
) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("about".into(), json!(u.about));
    m.insert(
        "activity_streams_email_notifications".into(),
        json!(u.email_notifications),
    );
    if private {
        m.insert("apikey".into(), Value::Null);
    }
    m.insert("created".into(), json!(u.created));
    m.insert("display_name".into(), json!(u.display_name()));
    if private {
        m.insert("email".into(), json!(u.email));
    }
    m.insert("email_hash".into(), json!(email_hash(&u.email)));
    m.insert("fullname".into(), json!(u.fullname));
    m.insert("id".into(), json!(u.id));
    m.insert("image_display_url".into(), json!(u.image_url));
    m.insert("image_url".into(), json!(u.image_url));
    m.insert("last_active".into(), json!(u.last_active));
    m.insert("name".into(), json!(u.name));
    m.insert(
        "number_created_packages".into(),
        json!(number_created_packages),
    );
    m.insert("state".into(), json!(u.state));
    m.insert("sysadmin".into(), json!(u.sysadmin));
    m
}
