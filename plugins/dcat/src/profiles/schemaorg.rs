//! The `schemaorg` profile (spec/dcat.md §8): a `schema:Dataset` with `schema:DataDownload`
//! distributions. No catalog node.

use crate::prelude::*;
use crate::rdf::graph::{
    bnode, field, field_list, field_str, iri, iso_datetime, lit, parse_datetime, typed, value_str,
};
use catalog_framework::prelude::*;
use oxigraph::model::NamedOrBlankNode;

/// The `schemaorg` profile.
#[derive(Debug, Clone, Copy)]
pub struct SchemaOrg;

/// The dateutil ISO re-serialization of a date (`YYYY-MM-DDTHH:MM:SS[.ffffff]`), if parseable.
fn iso(s: &str) -> Option<String> {
    parse_datetime(s.trim()).map(iso_datetime)
}

/// ckanext-dcat's double date rule: the raw value and its ISO form (one triple when equal).
fn add_date(g: &mut RdfGraph, s: &NamedOrBlankNode, p: &str, v: Option<String>) {
    if let Some(v) = v {
        g.add(s, &n(p), lit(&v));
        if let Some(i) = iso(&v) {
            g.add(s, &n(p), lit(&i));
        }
    }
}

use crate::rdf::graph::n;

impl DcatProfile for SchemaOrg {
    fn graph_from_dataset(
        &self,
        g: &mut RdfGraph,
        d: &Map<String, Value>,
        ds: &NamedOrBlankNode,
        cx: &DcatContext<'_>,
    ) {
        let site = &cx.config.catalog;
        let site_url = site.site_url.trim_end_matches('/');
        g.add_type(ds, "schema:Dataset");
        for (keys, p) in [
            (&["identifier"][..], "schema:identifier"),
            (&["title"][..], "schema:name"),
            (&["notes"][..], "schema:description"),
            (&["version", "dcat_version"][..], "schema:version"),
            (
                &["license", "license_url", "license_title"][..],
                "schema:license",
            ),
        ] {
            if let Some(v) = field_str(d, keys) {
                g.add(ds, &n(p), lit(&v));
            }
        }
        add_date(
            g,
            ds,
            "schema:datePublished",
            field_str(d, &["issued", "metadata_created"]),
        );
        add_date(
            g,
            ds,
            "schema:dateModified",
            field_str(d, &["modified", "metadata_modified"]),
        );
        if let Some(name) = d.get("name").and_then(Value::as_str) {
            g.add(
                ds,
                &n("schema:url"),
                lit(&format!("{site_url}/dataset/{name}")),
            );
        }
        if let Some(tags) = d.get("tags").and_then(Value::as_array) {
            for t in tags {
                if let Some(name) = t.get("name").and_then(value_str) {
                    g.add(ds, &n("schema:keywords"), lit(&name));
                }
            }
        }
        for l in field_list(d, &["language"]) {
            g.add(ds, &n("schema:inLanguage"), lit(&l));
        }
        if let Some(groups) = d.get("groups").and_then(Value::as_array) {
            for gr in groups.iter().filter_map(Value::as_object) {
                let b = bnode();
                g.add_type(&b, "schema:Thing");
                if let Some(name) = field_str(gr, &["name"]) {
                    g.add(&b, &n("schema:name"), lit(&name));
                }
                if let Some(id) = field_str(gr, &["id"]) {
                    g.add(&b, &n("schema:url"), lit(&format!("{site_url}/group/{id}")));
                }
                g.add(ds, &n("schema:about"), b);
            }
        }
        let cat = bnode();
        g.add_type(&cat, "schema:DataCatalog");
        g.add(&cat, &n("schema:name"), lit(&cx.site_title));
        g.add(&cat, &n("schema:description"), lit(&site.site_description));
        g.add(&cat, &n("schema:url"), lit(&site.site_url));
        g.add(ds, &n("schema:includedInDataCatalog"), cat);

        let start = field_str(d, &["temporal_start"]);
        let end = field_str(d, &["temporal_end"]);
        match (start, end) {
            (Some(s), Some(e)) => {
                g.add(ds, &n("schema:temporalCoverage"), lit(&format!("{s}/{e}")))
            }
            (Some(x), None) | (None, Some(x)) => g.add(
                ds,
                &n("schema:temporalCoverage"),
                lit(&iso(&x).unwrap_or(x)),
            ),
            (None, None) => {}
        }
        let uri = field_str(d, &["spatial_uri"]);
        let text = field_str(d, &["spatial_text"]);
        let geom = field(d, "spatial").and_then(|v| match v {
            Value::Object(_) => Some(v.to_string()),
            other => value_str(other),
        });
        if uri.is_some() || text.is_some() || geom.is_some() {
            let place: NamedOrBlankNode = match &uri {
                Some(u) => iri(u).into(),
                None => bnode(),
            };
            g.add_type(&place, "schema:Place");
            if let Some(t) = text {
                g.add(&place, &n("schema:description"), lit(&t));
            }
            if let Some(gj) = geom {
                let shape = bnode();
                g.add_type(&shape, "schema:GeoShape");
                g.add(&shape, &n("schema:polygon"), lit(&gj));
                g.add(&place, &n("schema:geo"), shape);
            }
            g.add(ds, &n("schema:spatialCoverage"), place);
        }

        for (prefix, p) in [
            ("publisher", "schema:publisher"),
            ("creator", "schema:creator"),
        ] {
            agent(g, d, ds, prefix, p, cx);
        }

        let dataset_id = d.get("id").and_then(Value::as_str).unwrap_or_default();
        if let Some(rs) = d.get("resources").and_then(Value::as_array) {
            for r in rs.iter().filter_map(Value::as_object) {
                let dist: NamedOrBlankNode =
                    oxigraph::model::NamedNode::new_unchecked(cx.resource_uri(r, dataset_id))
                        .into();
                g.add(ds, &n("schema:distribution"), dist.clone());
                distribution(g, r, &dist);
            }
        }
    }
}

fn agent(
    g: &mut RdfGraph,
    d: &Map<String, Value>,
    ds: &NamedOrBlankNode,
    prefix: &str,
    p: &str,
    cx: &DcatContext<'_>,
) {
    let get = |k: &str| field_str(d, &[&format!("{prefix}_{k}")]);
    let org = d.get("organization").and_then(Value::as_object);
    let uri = get("uri");
    let name = get("name");
    if uri.is_none() && name.is_none() && org.is_none() {
        return;
    }
    let node: NamedOrBlankNode = match (&uri, &name) {
        (Some(u), _) => iri(u).into(),
        (None, None) => match cx.organization_uri(d) {
            Some(o) => iri(&o).into(),
            None => bnode(),
        },
        (None, Some(_)) => bnode(),
    };
    g.add_type(&node, "schema:Organization");
    let display = name.clone().or_else(|| {
        uri.is_none()
            .then(|| org.and_then(|o| field_str(o, &["title", "name"])))
            .flatten()
    });
    if let Some(nm) = display {
        g.add(&node, &n("schema:name"), lit(&nm));
    }
    if let Some(i) = get("identifier") {
        g.add(&node, &n("schema:identifier"), lit(&i));
    }
    let cp = bnode();
    g.add_type(&cp, "schema:ContactPoint");
    g.add(&cp, &n("schema:contactType"), lit("customer service"));
    let url = get("url")
        .or_else(|| org.and_then(|o| field_str(o, &["url"])))
        .unwrap_or_else(|| cx.config.catalog.site_url.clone());
    g.add(&cp, &n("schema:url"), lit(&url));
    let email = get("email")
        .or_else(|| field_str(d, &["contact_email", "maintainer_email", "author_email"]));
    if let Some(e) = email {
        g.add(&cp, &n("schema:email"), lit(&e));
    }
    let cname = get("name").or_else(|| field_str(d, &["contact_name", "maintainer", "author"]));
    if let Some(c) = cname {
        g.add(&cp, &n("schema:name"), lit(&c));
    }
    g.add(&node, &n("schema:contactPoint"), cp);
    g.add(ds, &n(p), node);
}

fn distribution(g: &mut RdfGraph, r: &Map<String, Value>, dist: &NamedOrBlankNode) {
    g.add_type(dist, "schema:DataDownload");
    for (keys, p) in [
        (&["name"][..], "schema:name"),
        (&["description"][..], "schema:description"),
        (&["license", "rights"][..], "schema:license"),
        (&["format", "mimetype"][..], "schema:encodingFormat"),
    ] {
        if let Some(v) = field_str(r, keys) {
            g.add(dist, &n(p), lit(&v));
        }
    }
    add_date(g, dist, "schema:datePublished", field_str(r, &["issued"]));
    add_date(g, dist, "schema:dateModified", field_str(r, &["modified"]));
    for l in field_list(r, &["language"]) {
        g.add(dist, &n("schema:inLanguage"), lit(&l));
    }
    let download = field_str(r, &["download_url"]);
    let url = field_str(r, &["url"]);
    if let Some(dl) = &download {
        g.add(dist, &n("schema:contentUrl"), lit(dl));
    }
    if let Some(u) = url.filter(|u| download.as_deref() != Some(u.as_str())) {
        g.add(dist, &n("schema:url"), lit(&u));
    }
    match field(r, "size") {
        Some(Value::Number(num)) if num.is_i64() || num.is_u64() => g.add(
            dist,
            &n("schema:contentSize"),
            typed(&num.to_string(), "xsd:integer"),
        ),
        Some(v) => {
            if let Some(s) = value_str(v) {
                g.add(dist, &n("schema:contentSize"), lit(&s));
            }
        }
        None => {}
    }
}
