//! Graph-level assertions: the profile called directly, as the endpoints call it.

use catalog_framework::prelude::*;
use catalog_plugin_dcat::prelude::*;
use example_dcat_profile::ExamplePortalProfile;

use super::{dataset, Fixture};

fn node(s: &str) -> NamedOrBlankNode {
    iri(s).into()
}

fn term(s: &str) -> Term {
    iri(s).into()
}

#[test]
fn groups_become_themes_in_the_group_scheme() {
    let fx = Fixture::new();
    let cx = fx.cx();
    let d = dataset();
    let ds = node(&cx.dataset_uri(&d));
    let mut g = RdfGraph::new();
    ExamplePortalProfile.graph_from_dataset(&mut g, &d, &ds, &cx);

    let mut themes = g.values(&ds, &n("dcat:theme"));
    themes.sort();
    assert_eq!(
        themes,
        [
            "http://127.0.0.1:5000/group/environment",
            "http://127.0.0.1:5000/group/transport"
        ]
    );
    let transport = node("http://127.0.0.1:5000/group/transport");
    assert!(g.has_type(&transport, "skos:Concept"));
    assert_eq!(
        g.objects(&transport, &n("skos:prefLabel")),
        [lit("Transport")]
    );
    assert_eq!(
        g.objects(&transport, &n("skos:inScheme")),
        [term("http://127.0.0.1:5000/group")]
    );
    // An empty title falls back to the display name.
    let environment = node("http://127.0.0.1:5000/group/environment");
    assert_eq!(
        g.objects(&environment, &n("skos:prefLabel")),
        [lit("environment")]
    );
}

#[test]
fn region_becomes_a_place_of_the_eu_authority_table() {
    let fx = Fixture::new();
    let cx = fx.cx();
    let d = dataset();
    let ds = node(&cx.dataset_uri(&d));
    let mut g = RdfGraph::new();
    ExamplePortalProfile.graph_from_dataset(&mut g, &d, &ds, &cx);

    let berlin = "http://publications.europa.eu/resource/authority/place/DEU_BER";
    assert_eq!(g.objects(&ds, &n("dct:spatial")), [term(berlin)]);
    assert!(g.has_type(&node(berlin), "dct:Location"));
    assert_eq!(
        g.prefixes().get("place").map(String::as_str),
        Some("http://publications.europa.eu/resource/authority/place/")
    );
}

#[test]
fn region_may_be_an_extra() {
    let fx = Fixture::new();
    let cx = fx.cx();
    let mut d = dataset();
    d.remove("region");
    d.insert(
        "extras".into(),
        json!([{"key": "region", "value": "FRA_PAR"}]),
    );
    let ds = node(&cx.dataset_uri(&d));
    let mut g = RdfGraph::new();
    ExamplePortalProfile.graph_from_dataset(&mut g, &d, &ds, &cx);
    assert_eq!(
        g.values(&ds, &n("dct:spatial")),
        ["http://publications.europa.eu/resource/authority/place/FRA_PAR"]
    );
}

#[test]
fn a_dataset_without_groups_or_region_gets_nothing() {
    let fx = Fixture::new();
    let cx = fx.cx();
    let d = json!({"id": "x", "groups": [], "region": ""});
    let d = d.as_object().expect("an object");
    let mut g = RdfGraph::new();
    ExamplePortalProfile.graph_from_dataset(&mut g, d, &node(&cx.dataset_uri(d)), &cx);
    assert!(g.is_empty(), "{:?}", g.graph);
}

#[test]
fn theme_iris_follow_base_uri_without_a_double_slash() {
    let fx = Fixture::with_dcat(json!({"base_uri": "http://data.example.org/"}));
    let cx = fx.cx();
    let d = dataset();
    let ds = node(&cx.dataset_uri(&d));
    assert_eq!(
        ds,
        node("http://data.example.org/dataset/5b7c0a2e-3f4d-4f8e-9a57-2d4c7f1e6a10")
    );
    let mut g = RdfGraph::new();
    ExamplePortalProfile.graph_from_dataset(&mut g, &d, &ds, &cx);
    assert!(g
        .values(&ds, &n("dcat:theme"))
        .contains(&"http://data.example.org/group/transport".to_string()));
}

#[test]
fn the_catalog_names_the_group_scheme_as_its_taxonomy() {
    let fx = Fixture::new();
    let cx = fx.cx();
    let catalog = node(cx.catalog_uri());
    let mut g = RdfGraph::new();
    ExamplePortalProfile.graph_from_catalog(&mut g, &CatalogInfo::default(), &catalog, &cx);

    let scheme = node("http://127.0.0.1:5000/group");
    assert_eq!(
        g.objects(&catalog, &n("dcat:themeTaxonomy")),
        [term("http://127.0.0.1:5000/group")]
    );
    assert!(g.has_type(&scheme, "skos:ConceptScheme"));
    assert_eq!(
        g.objects(&scheme, &n("dct:title")),
        [lit("Groups of Catalog")]
    );
}
