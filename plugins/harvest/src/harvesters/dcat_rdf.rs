//! `dcat_rdf`: a DCAT catalog in RDF (Turtle, RDF/XML, JSON-LD, N-Triples, N3), read back into
//! datasets with our own DCAT profiles, page by page along Hydra's `next` / `nextPage` links
//! (ckanext-dcat's `DCATRDFHarvester`). Datasets keep the source's URIs (`uri`), which our
//! serializations then reuse; resources are matched across runs by `uri`.
//!
//! What ckanext-dcat does not: every fetch has timeouts and a size cap, an XML document with a
//! DOCTYPE is refused before parsing (entity expansion), a page that leads back to one already
//! read ends the run with a gather error (the engine's loop check), and parsing runs off the
//! async threads.

use catalog_framework::fetch::FetchError;
use catalog_framework::prelude::*;
use catalog_plugin_dcat::prelude::{
    n, parse_within, term_value, Dcat, NamedOrBlankNode, ParseLimits, RdfFormat, RdfGraph,
};

use crate::harvester::{GatherContext, Harvester, HarvesterInfo, Page, Record};

/// The harvester.
pub(crate) struct DcatRdfHarvester;

/// What `Accept` asks for when the source's config names no format.
const ACCEPT: &str = "text/turtle, application/rdf+xml;q=0.9, application/ld+json;q=0.8, \
     application/n-triples;q=0.7, text/n3;q=0.6, */*;q=0.1";

/// The formats a config's `rdf_format` may name (rdflib's names and media types).
fn format_named(name: &str) -> Option<RdfFormat> {
    match name.trim().to_ascii_lowercase().as_str() {
        "xml" | "pretty-xml" | "rdf" | "application/rdf+xml" | "application/xml" | "text/xml" => {
            Some(RdfFormat::RdfXml)
        }
        "turtle"
        | "ttl"
        | "text/turtle"
        | "nt"
        | "nt11"
        | "ntriples"
        | "n-triples"
        | "application/n-triples"
        | "text/plain" => Some(RdfFormat::Turtle),
        "n3" | "text/n3" => Some(RdfFormat::N3),
        "json-ld" | "jsonld" | "application/ld+json" | "application/json" => {
            Some(RdfFormat::JsonLd)
        }
        _ => None,
    }
}

fn format_of_url(url: &str) -> Option<RdfFormat> {
    let path = url
        .split(['?', '#'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let ext = path.rsplit('.').next()?;
    match ext {
        "ttl" | "nt" => Some(RdfFormat::Turtle),
        "rdf" | "xml" | "owl" => Some(RdfFormat::RdfXml),
        "jsonld" | "json" => Some(RdfFormat::JsonLd),
        "n3" => Some(RdfFormat::N3),
        _ => None,
    }
}

/// The profiles a source reads with: its config's `profiles` (a list or space-separated), else
/// `catalogext.dcat.rdf.profiles`.
fn profiles(dcat: &Dcat, c: &Map<String, Value>) -> Result<Vec<String>, String> {
    let named: Vec<String> = match c.get("profiles") {
        None | Some(Value::Null) => return Ok(dcat.settings.profiles.clone()),
        Some(Value::String(s)) => s
            .split([' ', ','])
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        Some(_) => return Err("profiles must be a list of profile names".into()),
    };
    let unknown: Vec<&String> = named.iter().filter(|p| dcat.profile(p).is_none()).collect();
    if !unknown.is_empty() || named.is_empty() {
        return Err(format!(
            "Unknown RDF profiles: {unknown:?} (registered: {})",
            dcat.profile_names().join(", ")
        ));
    }
    Ok(named)
}

/// The value of a key at the root of a dataset dict, else in its extras (`key` or
/// `dcat_<key>`), ckanext-dcat's `_get_dict_value`.
fn dict_value(d: &Map<String, Value>, key: &str) -> Option<String> {
    if let Some(v) = d.get(key) {
        return v.as_str().map(str::to_string).filter(|s| !s.is_empty());
    }
    let alt = format!("dcat_{key}");
    d.get("extras")?
        .as_array()?
        .iter()
        .find(|e| {
            let k = e.get("key").and_then(Value::as_str);
            k == Some(key) || k == Some(alt.as_str())
        })
        .and_then(|e| e.get("value").and_then(Value::as_str))
        .map(str::to_string)
        .filter(|s| !s.is_empty())
}

/// ckanext-dcat's guid: the dataset's `uri`, else its `identifier`, else the source url and
/// the name its title gives.
pub(crate) fn guid(d: &Map<String, Value>, source_url: &str) -> Option<String> {
    if let Some(u) = dict_value(d, "uri") {
        return Some(u);
    }
    if let Some(i) = dict_value(d, "identifier") {
        return Some(i);
    }
    let title = d.get("title").and_then(Value::as_str).unwrap_or_default();
    let name = catalog_framework::munge::munge_title_to_name(title);
    if title.trim().is_empty() || name.is_empty() {
        return None;
    }
    Some(format!("{}/{name}", source_url.trim_end_matches('/')))
}

/// The next page's address (Hydra): a `hydra:PartialCollectionView`'s, else a
/// `hydra:PagedCollection`'s; on a node, `hydra:next` before the older `hydra:nextPage`.
/// Relative addresses are resolved against the page's.
pub(crate) fn next_page(g: &RdfGraph, page_url: &str) -> Option<String> {
    for class in ["hydra:PartialCollectionView", "hydra:PagedCollection"] {
        for node in g.subjects_of_type(class) {
            for p in ["hydra:next", "hydra:nextPage"] {
                if let Some(t) = g.object(&node, &n(p)) {
                    let v = term_value(&t);
                    let resolved = reqwest::Url::parse(page_url)
                        .ok()
                        .and_then(|base| base.join(v.trim()).ok())
                        .map(|u| u.to_string())
                        .unwrap_or_else(|| v.trim().to_string());
                    return Some(resolved);
                }
            }
        }
    }
    None
}

/// Reads the datasets of one parsed page.
fn read_page(
    dcat: &Dcat,
    config: &Config,
    g: &RdfGraph,
    profiles: &[String],
    source_url: &str,
) -> Page {
    let cx = dcat.context(config);
    let chosen: Vec<&dyn catalog_plugin_dcat::prelude::DcatProfile> = profiles
        .iter()
        .filter_map(|p| dcat.profile(p).map(|b| b.as_ref().as_ref()))
        .collect();
    let mut page = Page::default();
    let mut nodes: Vec<NamedOrBlankNode> = g.subjects_of_type("dcat:Dataset");
    nodes.sort_by_key(|n| n.to_string());
    for node in nodes {
        let d = cx.read_dataset(g, &node, &chosen);
        let Some(guid) = guid(&d, source_url) else {
            let title = d.get("title").cloned().unwrap_or(Value::Null);
            page.errors.push(format!(
                "Could not get a unique identifier for dataset: {node} (title {title})"
            ));
            continue;
        };
        let modified = dict_value(&d, "modified");
        page.records.push(Record {
            guid,
            content: Some(Value::Object(d.clone()).to_string()),
            dataset: Some(d),
            modified,
        });
    }
    page
}

#[async_trait]
impl Harvester for DcatRdfHarvester {
    fn info(&self) -> HarvesterInfo {
        HarvesterInfo {
            name: "dcat_rdf",
            title: "Generic DCAT RDF Harvester",
            description: "Harvester for DCAT datasets from an RDF graph",
        }
    }

    fn validate_config(&self, app: &AppState, c: &Map<String, Value>) -> Result<(), String> {
        crate::config::validate_common(c)?;
        if let Some(f) = c.get("rdf_format") {
            let Some(f) = f.as_str() else {
                return Err("rdf_format must be a string".into());
            };
            if format_named(f).is_none() {
                return Err(
                    "rdf_format should be one of: application/ld+json, application/n-triples, \
                     application/rdf+xml, json-ld, n3, nt, ntriples, pretty-xml, text/n3, \
                     text/turtle, ttl, turtle, xml"
                        .into(),
                );
            }
        }
        if let Some(dcat) = app.extension::<Dcat>() {
            profiles(dcat, c)?;
        }
        Ok(())
    }

    async fn gather_page(&self, cx: &GatherContext<'_>, cursor: &Value) -> Result<Page, String> {
        let url = cursor["url"].as_str().unwrap_or(&cx.source.url).to_string();
        let dcat_missing =
            || "The dcat plugin is not enabled: the dcat_rdf harvester needs it".to_string();
        cx.app.extension::<Dcat>().ok_or_else(dcat_missing)?;
        let forced = cx
            .source
            .config
            .get("rdf_format")
            .and_then(Value::as_str)
            .and_then(format_named);
        let accept = match forced {
            Some(f) => f.media_type().to_string(),
            None => ACCEPT.to_string(),
        };
        let (got, body) = cx
            .app
            .fetcher
            .to_bytes(cx.fetch, &url, &[("Accept", accept)])
            .await
            .map_err(|e| fetch_message(&url, e))?;
        let format = forced
            .or_else(|| {
                got.content_type
                    .as_deref()
                    .and_then(|ct| format_named(ct.split(';').next().unwrap_or_default()))
            })
            .or_else(|| format_of_url(&got.final_url))
            .unwrap_or(RdfFormat::RdfXml);
        let app = cx.app.clone();
        let config = cx.source.config.clone();
        let source_url = cx.source.url.clone();
        let page_url = got.final_url.clone();
        let limits = ParseLimits {
            max_triples: Some(cx.settings.max_page_triples as usize),
            deadline: Some(
                std::time::Instant::now()
                    + std::time::Duration::from_secs(cx.settings.parse_timeout_secs),
            ),
            ..ParseLimits::default()
        };
        tokio::task::spawn_blocking(move || {
            let dcat = app.extension::<Dcat>().ok_or_else(dcat_missing)?;
            let chosen = profiles(dcat, &config)?;
            let graph = parse_within(&body, format, Some(&page_url), limits).map_err(|e| {
                if e.contains("triples") {
                    format!("Error parsing the RDF file: {e} (catalog.harvest.max_page_triples)")
                } else {
                    format!("Error parsing the RDF file: {e}")
                }
            })?;
            drop(body);
            let g = RdfGraph::from_graph(graph);
            let mut page = read_page(dcat, &app.config, &g, &chosen, &source_url);
            page.next = next_page(&g, &page_url).map(|u| json!({"url": u}));
            Ok(page)
        })
        .await
        .map_err(|e| format!("Error parsing the RDF file: {e}"))?
    }
}

/// A failed page fetch, in ckanext-dcat's words where it has some.
pub(crate) fn fetch_message(url: &str, e: FetchError) -> String {
    match e {
        FetchError::Status { status, .. } => {
            format!("Could not get content from {url}. Server responded with {status}")
        }
        FetchError::Timeout(_) => {
            format!("Could not get content from {url} because the connection timed out.")
        }
        FetchError::TooLarge { limit } => {
            format!("Remote file is too big. Allowed file size: {limit} (catalog.harvest.max_page_bytes)")
        }
        FetchError::Refused(why) => format!("Could not get content from {url}: {why}"),
        FetchError::Failed(why) => {
            format!("Could not get content from {url} because a connection error occurred. {why}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guids_follow_ckanext_dcat() {
        let d = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(
            guid(
                &d(json!({"extras": [{"key": "uri", "value": "http://a/ds/1"}]})),
                "http://src"
            ),
            Some("http://a/ds/1".into())
        );
        assert_eq!(
            guid(
                &d(
                    json!({"extras": [{"key": "uri", "value": ""}, {"key": "identifier", "value": "X-1"}]})
                ),
                "http://src"
            ),
            Some("X-1".into())
        );
        assert_eq!(
            guid(
                &d(json!({"title": "Bike Counts 2024"})),
                "http://src/catalog.ttl/"
            ),
            Some("http://src/catalog.ttl/bike-counts-2024".into())
        );
        assert_eq!(guid(&d(json!({})), "http://src"), None);
    }

    #[test]
    fn formats_are_named_as_rdflib_and_media_types_name_them() {
        assert_eq!(format_named("text/turtle"), Some(RdfFormat::Turtle));
        assert_eq!(
            format_named("application/n-triples"),
            Some(RdfFormat::Turtle)
        );
        assert_eq!(format_named("xml"), Some(RdfFormat::RdfXml));
        assert_eq!(format_named("json-ld"), Some(RdfFormat::JsonLd));
        assert_eq!(format_named("text/html"), None);
        assert_eq!(
            format_of_url("http://x/catalog.ttl?page=2"),
            Some(RdfFormat::Turtle)
        );
    }

    #[test]
    fn hydra_next_links_are_found_and_resolved() {
        let ttl = br#"@prefix hydra: <http://www.w3.org/ns/hydra/core#> .
            <http://x/catalog.ttl?page=1> a hydra:PagedCollection ;
                hydra:nextPage "http://x/catalog.ttl?page=2" ;
                hydra:next "/catalog.ttl?page=3" ."#;
        let g = RdfGraph::from_graph(
            catalog_plugin_dcat::prelude::parse(ttl, RdfFormat::Turtle, None).unwrap(),
        );
        assert_eq!(
            next_page(&g, "http://x/catalog.ttl?page=1").as_deref(),
            Some("http://x/catalog.ttl?page=3")
        );
        let empty = RdfGraph::new();
        assert_eq!(next_page(&empty, "http://x/"), None);
    }
}
