//! Building the graphs of the dataset and catalog endpoints and serializing them
//! (spec/dcat.md §1, §4).

use crate::rdf::cache::RenderCache;
use std::sync::Arc;

use crate::rdf::graph::{iri, lit, n, typed};
use crate::rdf::{
    serialize, CatalogInfo, Dcat, DcatContext, DcatProfile, DcatSettings, RdfFormat, RdfGraph,
};
use catalog_framework::context::App;
use catalog_framework::prelude::*;
use oxigraph::model::NamedOrBlankNode;

/// The plugin's state, loaded and checked at start-up.
pub fn dcat(app: &App) -> CkanResult<&Dcat> {
    app.extension::<Dcat>()
        .ok_or_else(|| internal("the DCAT plugin was not configured"))
}

/// The settings of this app, checked at start-up.
pub fn settings(ctx: &ActionContext) -> CkanResult<&DcatSettings> {
    Ok(&dcat(&ctx.app)?.settings)
}

/// What profiles see of the app while they build a graph.
fn dcat_context(app: &App) -> CkanResult<DcatContext<'_>> {
    let mut cx = dcat(app)?.context(&app.config);
    cx.site_title = app.site_title();
    Ok(cx)
}

/// The profiles named by `profiles` (comma-separated, in order), else the configured ones.
/// Unknown names give ckanext-dcat's `Unknown RDF profiles: a, b` (sorted). A name given
/// twice is applied once: each profile's work is paid once per request, however long the list.
pub fn resolve_profiles(
    ctx: &ActionContext,
    requested: Option<&str>,
) -> CkanResult<Vec<Arc<Box<dyn DcatProfile>>>> {
    let mut names: Vec<&str> = match requested.map(str::trim).filter(|s| !s.is_empty()) {
        Some(list) => list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect(),
        None => settings(ctx)?.profiles.iter().map(String::as_str).collect(),
    };
    let mut seen = std::collections::HashSet::new();
    names.retain(|n| seen.insert(*n));
    let registry = dcat(&ctx.app)?;
    let mut unknown: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| registry.profile(n).is_none())
        .collect();
    if !unknown.is_empty() {
        unknown.sort_unstable();
        unknown.dedup();
        return Err(validation_message(format!(
            "Unknown RDF profiles: {}",
            unknown.join(", ")
        )));
    }
    Ok(names
        .iter()
        .filter_map(|n| registry.profile(n).cloned())
        .collect())
}

fn as_refs(profiles: &[Arc<Box<dyn DcatProfile>>]) -> Vec<&dyn DcatProfile> {
    profiles.iter().map(|p| p.as_ref().as_ref()).collect()
}

/// The format of an extension, or a 404 that names the extensions there are.
pub fn format_of(ext: &str) -> CkanResult<RdfFormat> {
    RdfFormat::from_extension(ext).ok_or_else(|| {
        not_found(format!(
            "unknown RDF format {ext:?}; use one of {}",
            serialize::EXTENSIONS.join(", ")
        ))
    })
}

fn to_bytes(g: &RdfGraph, format: RdfFormat) -> CkanResult<Vec<u8>> {
    serialize::serialize(g, format).map_err(|e| internal(format!("RDF serialization: {e}")))
}

/// RDF documents are built and serialized on the blocking pool, in a lane of their own.
static RENDERING: catalog_framework::blocking::Lane = catalog_framework::blocking::Lane::new("rdf");

/// One dataset, serialized, as `package_show` gives it to the caller. As in ckanext-dcat, a
/// missing (404) or hidden (403) dataset is reported before a bad profile name, and `format`
/// is checked after both (`format_of(ext)` gives the error for an unknown one). The graph is
/// built and serialized on the blocking pool, off the request threads.
pub async fn dataset_document(
    ctx: &mut ActionContext,
    id: &str,
    format: CkanResult<RdfFormat>,
    profiles: Option<&str>,
) -> CkanResult<(RdfFormat, Vec<u8>)> {
    let mut p = Params::new();
    p.insert("id".into(), json!(id));
    let dataset = ctx.call("package_show", p).await?;
    let requested = profiles.unwrap_or("").trim().to_string();
    let profiles = resolve_profiles(ctx, profiles)?;
    let format = format?;
    let app = ctx.app.clone();
    // The same dict rendered the same way is the same document (see rdf::cache).
    let key = serde_json::to_vec(&dataset).ok().map(|json| {
        RenderCache::key(
            &json,
            &format!("{format:?}"),
            &[requested.as_str()],
            &app.site_title(),
        )
    });
    if let Some(hit) = key.and_then(|k| dcat(&app).ok()?.render_cache.get(k)) {
        return Ok((format, hit.to_vec()));
    }
    let (format, body) = RENDERING
        .run({
            let app = app.clone();
            move || {
                let cx = dcat_context(&app)?;
                let mut g = RdfGraph::new();
                if let Some(d) = dataset.as_object() {
                    cx.add_dataset(&mut g, d, &as_refs(&profiles));
                }
                Ok::<_, CkanError>((format, to_bytes(&g, format)?))
            }
        })
        .await??;
    if let (Some(k), Ok(d)) = (key, dcat(&app)) {
        d.render_cache.put(k, &body);
    }
    Ok((format, body))
}

/// The catalog parameters the paging links keep.
const KEPT_PARAMS: [&str; 4] = ["modified_since", "profiles", "q", "fq"];

/// Dataset types the catalog leaves out (ckanext-dcat's search filters).
const EXCLUDED_TYPES: [&str; 2] = ["-dataset_type:harvest", "-dataset_type:showcase"];

/// The catalog endpoint's query parameters, in request order (spec/dcat.md §1.3, §4).
#[derive(Debug, Clone, Default)]
pub struct CatalogQuery {
    /// `(key, decoded value)` for `modified_since`, `profiles`, `q` and `fq`, in request order:
    /// the paging links keep these and nothing else.
    pub kept: Vec<(String, String)>,
    pub page: Option<String>,
}

impl CatalogQuery {
    /// Reads a raw query string (`a=1&b=2`).
    pub fn from_query(raw: &str) -> CatalogQuery {
        let mut q = CatalogQuery::default();
        for (k, v) in form_urlencoded::parse(raw.as_bytes()) {
            match k.as_ref() {
                "page" => q.page = Some(v.into_owned()),
                key if KEPT_PARAMS.contains(&key) => q.kept.push((k.into_owned(), v.into_owned())),
                _ => {}
            }
        }
        q
    }

    /// Reads action parameters (`dcat_catalog_show`): `param` gives each one's text.
    pub fn from_params(param: impl Fn(&str) -> Option<String>) -> CatalogQuery {
        CatalogQuery {
            kept: KEPT_PARAMS
                .iter()
                .filter_map(|k| param(k).map(|v| (k.to_string(), v)))
                .collect(),
            page: param("page"),
        }
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.kept
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.trim().is_empty())
    }

    /// The page number: an integer ≥ 1 (default 1).
    pub fn page(&self) -> CkanResult<i64> {
        match self.page.as_deref().map(str::trim) {
            None | Some("") => Ok(1),
            Some(p) => p.parse::<i64>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                validation_message("Page param must be a positive integer starting in 1")
            }),
        }
    }
}

/// `modified_since` parsed, as the `metadata_modified:[… TO NOW]` bound.
pub fn modified_since_bound(v: &str) -> CkanResult<String> {
    let t = v.trim();
    let utc = match chrono::DateTime::parse_from_rfc3339(t) {
        Ok(dt) => Some(dt.naive_utc()),
        Err(_) => {
            let body = t.strip_suffix(['Z', 'z']).unwrap_or(t);
            crate::rdf::graph::parse_datetime(body).or_else(|| year_or_month(body))
        }
    };
    utc.map(|dt| format!("{}Z", dt.format("%Y-%m-%dT%H:%M:%S%.f")))
        .ok_or_else(|| validation_message("Wrong modified date format. Use ISO-8601 format"))
}

/// ISO 8601's reduced precisions: `YYYY` → 1 January, `YYYY-MM` → the 1st of the month.
fn year_or_month(s: &str) -> Option<chrono::NaiveDateTime> {
    let (y, m) = match s.split_once('-') {
        Some((y, m)) => (y, m),
        None => (s, "01"),
    };
    if y.len() != 4 || m.len() != 2 || !y.chars().chain(m.chars()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    chrono::NaiveDate::from_ymd_opt(y.parse().ok()?, m.parse().ok()?, 1)
        .map(|d| d.and_time(chrono::NaiveTime::MIN))
}

/// The paging node's data (spec/dcat.md §4.1).
#[derive(Debug, Clone, PartialEq)]
pub struct Paging {
    pub count: i64,
    pub items_per_page: i64,
    pub current: i64,
    pub first: i64,
    pub last: i64,
    pub next: Option<i64>,
    pub previous: Option<i64>,
}

/// ckanext-dcat's paging arithmetic; `None` when nothing matched.
pub fn paging(count: i64, page: i64, rows: i64) -> Option<Paging> {
    if count <= 0 {
        return None;
    }
    // ckanext-dcat's rules, written without multiplying the page number (a huge `page` must
    // not overflow): `previous` is page − 1, or the last page for a page past the end;
    // `next` exists while this page is not the last.
    let last = ((count - 1) / rows + 1).max(1);
    let previous = (page > 1).then(|| (page - 1).min(last));
    let next = (page < last).then(|| page + 1);
    Some(Paging {
        count,
        items_per_page: rows,
        current: page,
        first: 1,
        last,
        next,
        previous,
    })
}

/// URL of page `n`: catalog URI + request path + the kept parameters + `page=n`.
/// Values are percent-encoded (ckanext-dcat writes them raw, which can make the page node's
/// IRI invalid).
fn page_url(base: &str, path: &str, query: &CatalogQuery, n: i64) -> String {
    let mut ser = form_urlencoded::Serializer::new(String::new());
    for (k, v) in &query.kept {
        ser.append_pair(k, v);
    }
    ser.append_pair("page", &n.to_string());
    format!("{}{path}?{}", base.trim_end_matches('/'), ser.finish())
}

/// What the catalog graph is built from: gathered by searches, then turned into RDF off the
/// request threads.
struct CatalogPage {
    profiles: Vec<Arc<Box<dyn DcatProfile>>>,
    results: Vec<Value>,
    count: i64,
    page: i64,
    rows: i64,
    modified: Option<String>,
}

/// The searches behind one catalog page.
async fn catalog_page(ctx: &mut ActionContext, query: &CatalogQuery) -> CkanResult<CatalogPage> {
    let profiles = resolve_profiles(ctx, query.get("profiles"))?;
    let page = query.page()?;
    let rows = settings(ctx)?.datasets_per_page;
    let mut fq_list: Vec<String> = EXCLUDED_TYPES.iter().map(|t| t.to_string()).collect();
    if let Some(since) = query.get("modified_since") {
        fq_list.push(format!(
            "metadata_modified:[{} TO NOW]",
            modified_since_bound(since)?
        ));
    }
    let mut p = Params::new();
    if let Some(q) = query.get("q") {
        p.insert("q".into(), json!(q));
    }
    if let Some(fq) = query.get("fq") {
        p.insert("fq".into(), json!(fq));
    }
    p.insert("fq_list".into(), json!(fq_list));
    p.insert("rows".into(), json!(rows));
    p.insert("start".into(), json!(rows.saturating_mul(page - 1)));
    p.insert("sort".into(), json!("metadata_modified desc"));
    p.insert("facet".into(), json!("false"));
    let mut found = ctx.call("package_search", p).await?;
    let count = found["count"].as_i64().unwrap_or(0);
    let results: Vec<Value> = match found["results"].take() {
        Value::Array(a) => a.into_iter().filter(Value::is_object).collect(),
        _ => Vec::new(),
    };

    // The catalog's dct:modified: the newest public dataset. An unfiltered first page sorted
    // by metadata_modified already starts with it.
    let unfiltered = page == 1
        && ["q", "fq", "modified_since"]
            .iter()
            .all(|k| query.get(k).is_none());
    let modified = if unfiltered {
        results
            .first()
            .and_then(|d| d.get("metadata_modified"))
            .and_then(Value::as_str)
            .map(str::to_string)
    } else {
        let mut latest = Params::new();
        latest.insert("fq_list".into(), json!(EXCLUDED_TYPES));
        latest.insert("rows".into(), json!(1));
        latest.insert("sort".into(), json!("metadata_modified desc"));
        latest.insert("fl".into(), json!("metadata_modified"));
        latest.insert("facet".into(), json!("false"));
        ctx.call("package_search", latest).await?["results"][0]["metadata_modified"]
            .as_str()
            .map(str::to_string)
    };
    Ok(CatalogPage {
        profiles,
        results,
        count,
        page,
        rows,
        modified,
    })
}

/// The catalog graph: the catalog node (from each profile), a page of datasets linked with
/// `dcat:dataset`, and the Hydra paging node.
fn catalog_graph(
    cx: &DcatContext<'_>,
    page: &CatalogPage,
    query: &CatalogQuery,
    path: &str,
) -> RdfGraph {
    let mut g = RdfGraph::new();
    let catalog: NamedOrBlankNode = iri(cx.catalog_uri()).into();
    let info = CatalogInfo {
        modified: page.modified.clone(),
    };
    for p in &page.profiles {
        p.graph_from_catalog(&mut g, &info, &catalog, cx);
    }
    let refs = as_refs(&page.profiles);
    for d in page.results.iter().filter_map(Value::as_object) {
        let node = cx.add_dataset(&mut g, d, &refs);
        g.add(&catalog, &n("dcat:dataset"), node);
    }
    if let Some(pg) = paging(page.count, page.page, page.rows) {
        let base = cx.catalog_uri();
        let url = |n: i64| page_url(base, path, query, n);
        // The page URL as it is (form-urlencoded, so a valid IRI): `iri()` would clean `*`
        // into `%2A` and the node would no longer equal the other pages' link strings.
        let current = url(pg.current);
        let node: NamedOrBlankNode = oxigraph::model::NamedNode::new(current.clone())
            .unwrap_or_else(|_| iri(&current))
            .into();
        g.add_type(&node, "hydra:PagedCollection");
        let mut link = |names: [&str; 2], page: Option<i64>| {
            if let Some(p) = page {
                for name in names {
                    g.add(&node, &n(name), lit(&url(p)));
                }
            }
        };
        link(["hydra:firstPage", "hydra:first"], Some(pg.first));
        link(["hydra:lastPage", "hydra:last"], Some(pg.last));
        link(["hydra:nextPage", "hydra:next"], pg.next);
        link(["hydra:previousPage", "hydra:previous"], pg.previous);
        g.add(
            &node,
            &n("hydra:totalItems"),
            typed(&pg.count.to_string(), "xsd:integer"),
        );
        g.add(
            &node,
            &n("hydra:itemsPerPage"),
            typed(&pg.items_per_page.to_string(), "xsd:integer"),
        );
    }
    g
}

/// The catalog, serialized: searched on the request thread, built and serialized on the
/// blocking pool.
pub async fn catalog_document(
    ctx: &mut ActionContext,
    query: &CatalogQuery,
    path: &str,
    format: RdfFormat,
) -> CkanResult<Vec<u8>> {
    let page = catalog_page(ctx, query).await?;
    let app = ctx.app.clone();
    let query = query.clone();
    let path = path.to_string();
    RENDERING
        .run(move || {
            let cx = dcat_context(&app)?;
            to_bytes(&catalog_graph(&cx, &page, &query, &path), format)
        })
        .await?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paging_matches_ckanext_dcat() {
        assert_eq!(paging(0, 1, 10), None);
        let p = paging(12, 1, 10).unwrap();
        assert_eq!((p.first, p.last, p.next, p.previous), (1, 2, Some(2), None));
        let p = paging(12, 2, 10).unwrap();
        assert_eq!((p.last, p.next, p.previous), (2, None, Some(1)));
        // beyond the end: previous points at the last real page
        let p = paging(12, 3, 10).unwrap();
        assert_eq!((p.next, p.previous), (None, Some(2)));
        let p = paging(10, 1, 10).unwrap();
        assert_eq!((p.last, p.next), (1, None));
        let p = paging(100, 5, 10).unwrap();
        assert_eq!((p.last, p.next, p.previous), (10, Some(6), Some(4)));
        let p = paging(100, i64::MAX, 10).unwrap();
        assert_eq!((p.last, p.next, p.previous), (10, None, Some(10)));
        let p = paging(11, 2, 10).unwrap();
        assert_eq!((p.last, p.next, p.previous), (2, None, Some(1)));
    }

    #[test]
    fn page_param_and_dates() {
        let q = |s: &str| CatalogQuery::from_query(s);
        assert_eq!(q("").page().unwrap(), 1);
        assert_eq!(q("page=3").page().unwrap(), 3);
        for bad in ["page=a", "page=0", "page=-1", "page=1.5"] {
            let e = q(bad).page().unwrap_err();
            assert_eq!(e.status().as_u16(), 409, "{bad}");
        }
        assert_eq!(
            modified_since_bound("2015-07-24").unwrap(),
            "2015-07-24T00:00:00Z"
        );
        assert_eq!(
            modified_since_bound("2015-07-24T10:00:00+02:00").unwrap(),
            "2015-07-24T08:00:00Z"
        );
        assert_eq!(
            modified_since_bound("2024-05-31T12:30:01.451243").unwrap(),
            "2024-05-31T12:30:01.451243Z"
        );
        assert!(modified_since_bound("yesterday-ish").is_err());
        assert_eq!(
            modified_since_bound("2015").unwrap(),
            "2015-01-01T00:00:00Z"
        );
        assert_eq!(
            modified_since_bound("2015-07").unwrap(),
            "2015-07-01T00:00:00Z"
        );
        assert!(modified_since_bound("2015-13").is_err());
    }

    #[test]
    fn paging_urls_keep_only_the_filter_params_in_order() {
        let q = CatalogQuery::from_query(
            "extra_param=test&modified_since=2018-03-22&profiles=schemaorg&page=3&q=open data",
        );
        assert_eq!(
            page_url("http://test.ckan.net/data/", "/feed/catalog.xml", &q, 1),
            "http://test.ckan.net/data/feed/catalog.xml?modified_since=2018-03-22&profiles=schemaorg&q=open+data&page=1"
        );
        assert_eq!(
            page_url("http://x", "/catalog.ttl", &CatalogQuery::default(), 2),
            "http://x/catalog.ttl?page=2"
        );
    }
}
