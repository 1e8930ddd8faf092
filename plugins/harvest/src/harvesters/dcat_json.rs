//! `dcat_json`: a DCAT-US 1.1 `data.json` (the US federal catalog format): a catalog object
//! with a `dataset` array, or a bare array. Each dataset's guid is its `identifier`. The
//! mapping is ckanext-dcat's `dcat_to_ckan` (title, notes, url, tags, the `dcat_*` extras,
//! resources from distributions), plus what it drops and a portal wants: license, contact
//! point, access level, spatial and temporal coverage, themes, bureau and program codes, and a
//! distribution's media type. Unlike ckanext-dcat's JSON harvester, deletions work.

use catalog_framework::prelude::*;

use crate::harvester::{GatherContext, Harvester, HarvesterInfo, Page, Record};

/// The harvester.
pub(crate) struct DcatJsonHarvester;

fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn list(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a.iter().filter_map(|x| text(Some(x))).collect(),
        Some(Value::String(s)) if !s.trim().is_empty() => vec![s.trim().to_string()],
        _ => Vec::new(),
    }
}

/// A DCAT-US dataset as a CKAN dataset dict.
pub(crate) fn dcat_to_ckan(d: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("title".into(), json!(text(d.get("title"))));
    out.insert("notes".into(), json!(text(d.get("description"))));
    out.insert("url".into(), json!(text(d.get("landingPage"))));
    let tags: Vec<Value> = list(d.get("keyword"))
        .into_iter()
        .map(|k| json!({"name": k}))
        .collect();
    out.insert("tags".into(), Value::Array(tags));
    let mut extras: Vec<Value> = Vec::new();
    let mut push = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            extras.push(json!({"key": k, "value": v}));
        }
    };
    push("dcat_issued", text(d.get("issued")));
    push("dcat_modified", text(d.get("modified")));
    for (role, key) in [("publisher", "publisher"), ("creator", "creator")] {
        match d.get(key) {
            Some(Value::String(s)) => push(&format!("dcat_{role}_name"), Some(s.clone())),
            Some(Value::Object(o)) => {
                if let Some(name) = text(o.get("name")) {
                    push(&format!("dcat_{role}_name"), Some(name));
                    push(&format!("dcat_{role}_email"), text(o.get("email")));
                    push(&format!("dcat_{role}_id"), text(o.get("identifier")));
                }
            }
            _ => {}
        }
    }
    let languages = list(d.get("language"));
    if !languages.is_empty() {
        push("language", Some(languages.join(",")));
    }
    if let Some(Value::Object(cp)) = d.get("contactPoint") {
        push("contact_name", text(cp.get("fn")));
        push(
            "contact_email",
            text(cp.get("hasEmail")).map(|e| e.trim_start_matches("mailto:").to_string()),
        );
    }
    push("access_level", text(d.get("accessLevel")));
    push("rights", text(d.get("rights")));
    push("license", text(d.get("license")));
    push("spatial", text(d.get("spatial")));
    push("temporal", text(d.get("temporal")));
    push("accrual_periodicity", text(d.get("accrualPeriodicity")));
    push("conforms_to", text(d.get("conformsTo")));
    push("described_by", text(d.get("describedBy")));
    push("is_part_of", text(d.get("isPartOf")));
    for (key, extra) in [
        ("theme", "theme"),
        ("bureauCode", "bureau_code"),
        ("programCode", "program_code"),
        ("references", "references"),
    ] {
        let items = list(d.get(key));
        if !items.is_empty() {
            push(extra, Some(json!(items).to_string()));
        }
    }
    out.insert("extras".into(), Value::Array(extras));
    let resources: Vec<Value> = match d.get("distribution") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_object)
            .map(|r| {
                let mut res = Map::new();
                res.insert("name".into(), json!(text(r.get("title"))));
                res.insert("description".into(), json!(text(r.get("description"))));
                res.insert(
                    "url".into(),
                    json!(text(r.get("downloadURL")).or_else(|| text(r.get("accessURL")))),
                );
                res.insert("format".into(), json!(text(r.get("format"))));
                // Only a media type or an IRI (the resource validator's rule): anything else is left out.
                if let Some(mt) = text(r.get("mediaType"))
                    .filter(|m| catalog_framework::validators::is_mimetype_value(m))
                {
                    res.insert("mimetype".into(), json!(mt));
                }
                if let Some(size) = r.get("byteSize").and_then(|s| {
                    s.as_i64()
                        .or_else(|| s.as_str().and_then(|t| t.trim().parse().ok()))
                }) {
                    res.insert("size".into(), json!(size));
                }
                Value::Object(res)
            })
            .collect(),
        _ => Vec::new(),
    };
    out.insert("resources".into(), Value::Array(resources));
    out
}

/// The datasets of a `data.json` document: a catalog's `dataset` array or a bare array.
pub(crate) fn datasets(doc: &Value) -> Result<Vec<Value>, String> {
    match doc {
        Value::Array(a) => Ok(a.clone()),
        Value::Object(o) => match o.get("dataset") {
            Some(Value::Array(a)) => Ok(a.clone()),
            None => Ok(Vec::new()),
            Some(_) => Err("Error parsing file: the catalog's dataset is not a list".into()),
        },
        _ => Err("Error parsing file: Wrong JSON object".into()),
    }
}

#[async_trait]
impl Harvester for DcatJsonHarvester {
    fn info(&self) -> HarvesterInfo {
        HarvesterInfo {
            name: "dcat_json",
            title: "DCAT JSON Harvester",
            description: "Harvester for DCAT-US 1.1 (data.json) catalogs",
        }
    }

    async fn gather_page(&self, cx: &GatherContext<'_>, cursor: &Value) -> Result<Page, String> {
        let url = cursor["url"].as_str().unwrap_or(&cx.source.url).to_string();
        let (_, body) = cx
            .app
            .fetcher
            .to_bytes(cx.fetch, &url, &[("Accept", "application/json".into())])
            .await
            .map_err(|e| super::dcat_rdf::fetch_message(&url, e))?;
        let doc: Value =
            serde_json::from_slice(&body).map_err(|e| format!("Error parsing file: {e}"))?;
        drop(body);
        let mut page = Page::default();
        for (i, d) in datasets(&doc)?.iter().enumerate() {
            let Some(obj) = d.as_object() else {
                page.errors
                    .push(format!("Dataset {} of the file is not an object", i + 1));
                continue;
            };
            let Some(guid) = text(obj.get("identifier")) else {
                page.errors.push(format!(
                    "Dataset {} of the file has no identifier (title {})",
                    i + 1,
                    obj.get("title").cloned().unwrap_or(Value::Null)
                ));
                continue;
            };
            page.records.push(Record {
                guid,
                dataset: Some(dcat_to_ckan(obj)),
                content: Some(d.to_string()),
                modified: text(obj.get("modified")),
            });
        }
        Ok(page)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dcat_us_dataset_maps_as_ckanext_dcat_does_and_keeps_more() {
        let d = json!({
            "identifier": "https://example.gov/id/ds-1",
            "title": "Example dataset one",
            "description": "First test dataset",
            "keyword": ["transport", "roads"],
            "modified": "2024-01-31",
            "issued": "2023-06-01",
            "publisher": {"name": "Example Agency"},
            "contactPoint": {"fn": "Jane Doe", "hasEmail": "mailto:jane@example.gov"},
            "accessLevel": "public",
            "bureauCode": ["015:11"],
            "license": "https://creativecommons.org/publicdomain/zero/1.0/",
            "landingPage": "https://example.gov/ds-1",
            "language": ["en-US"],
            "distribution": [
                {"title": "CSV file", "downloadURL": "https://example.gov/ds-1.csv",
                 "mediaType": "text/csv", "format": "CSV"},
                {"title": "API", "accessURL": "https://example.gov/api/ds-1", "format": "API"}
            ]
        });
        let c = dcat_to_ckan(d.as_object().unwrap());
        assert_eq!(c["title"], "Example dataset one");
        assert_eq!(c["notes"], "First test dataset");
        assert_eq!(c["url"], "https://example.gov/ds-1");
        assert_eq!(c["tags"], json!([{"name": "transport"}, {"name": "roads"}]));
        let extras: Map<String, Value> = c["extras"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["key"].as_str().unwrap().to_string(), e["value"].clone()))
            .collect();
        assert_eq!(extras["dcat_issued"], "2023-06-01");
        assert_eq!(extras["dcat_publisher_name"], "Example Agency");
        assert_eq!(extras["language"], "en-US");
        assert_eq!(extras["contact_email"], "jane@example.gov");
        assert_eq!(extras["bureau_code"], "[\"015:11\"]");
        assert_eq!(c["resources"][0]["url"], "https://example.gov/ds-1.csv");
        assert_eq!(c["resources"][0]["mimetype"], "text/csv");
        assert_eq!(c["resources"][1]["url"], "https://example.gov/api/ds-1");
    }

    #[test]
    fn catalogs_and_bare_lists_are_read() {
        assert_eq!(datasets(&json!([{"a": 1}])).unwrap().len(), 1);
        assert_eq!(datasets(&json!({"dataset": [{}, {}]})).unwrap().len(), 2);
        assert!(datasets(&json!("x")).is_err());
    }
}
