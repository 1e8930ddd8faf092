//! Serialize, parse, read the dataset back: what a harvester of this portal's RDF does.

use catalog_framework::prelude::*;
use catalog_plugin_dcat::prelude::*;
use example_dcat_profile::ExamplePortalProfile;

use super::{dataset, Fixture};

/// The graph of `dataset()` as the endpoint builds it with `?profiles=euro_dcat_ap_3,example_portal`,
/// with two triples standing in for `euro_dcat_ap_3`: the dataset's type, and a theme and a
/// location of its own, which `example_portal` must not read back.
fn portal_graph(fx: &Fixture) -> RdfGraph {
    let cx = fx.cx();
    let d = dataset();
    let ds: NamedOrBlankNode = iri(&cx.dataset_uri(&d)).into();
    let mut g = RdfGraph::new();
    g.add_type(&ds, "dcat:Dataset");
    g.add(
        &ds,
        &n("dcat:theme"),
        iri("http://publications.europa.eu/resource/authority/data-theme/TRAN"),
    );
    let location = bnode();
    g.add(&ds, &n("dct:spatial"), location.clone());
    g.add_type(&location, "dct:Location");
    ExamplePortalProfile.graph_from_dataset(&mut g, &d, &ds, &cx);
    g
}

/// Parses `body` and reads the one `dcat:Dataset` in it into `into`.
fn read_back(fx: &Fixture, body: &[u8], format: RdfFormat, into: &mut Map<String, Value>) {
    let parsed = parse(body, format, None)
        .unwrap_or_else(|e| panic!("{format:?}: {e}\n{}", String::from_utf8_lossy(body)));
    let g = RdfGraph::from_graph(parsed);
    let datasets = g.subjects_of_type("dcat:Dataset");
    assert_eq!(datasets.len(), 1, "{format:?}");
    ExamplePortalProfile.parse_dataset(&g, &datasets[0], into, &fx.cx());
}

#[test]
fn groups_and_region_survive_every_serialization() {
    let fx = Fixture::new();
    let g = portal_graph(&fx);
    for format in [
        RdfFormat::Turtle,
        RdfFormat::RdfXml,
        RdfFormat::N3,
        RdfFormat::JsonLd,
    ] {
        let body = serialize(&g, format).expect("serializes");
        let mut back = Map::new();
        read_back(&fx, &body, format, &mut back);
        assert_eq!(
            Value::Object(back),
            json!({
                "groups": [{"name": "environment"}, {"name": "transport"}],
                "region": "DEU_BER"
            }),
            "{format:?}"
        );
    }
}

#[test]
fn turtle_uses_the_bound_place_prefix() {
    let fx = Fixture::new();
    let body = serialize(&portal_graph(&fx), RdfFormat::Turtle).expect("serializes");
    let text = String::from_utf8(body).expect("UTF-8");
    assert!(
        text.contains("@prefix place: <http://publications.europa.eu/resource/authority/place/>"),
        "{text}"
    );
    assert!(text.contains("place:DEU_BER"), "{text}");
}

#[test]
fn parsing_adds_to_the_groups_an_earlier_profile_found() {
    let fx = Fixture::new();
    let body = serialize(&portal_graph(&fx), RdfFormat::Turtle).expect("serializes");
    let mut back = json!({"groups": [{"name": "transport", "title": "Transport"}]})
        .as_object()
        .cloned()
        .expect("an object");
    read_back(&fx, &body, RdfFormat::Turtle, &mut back);
    assert_eq!(
        back["groups"],
        json!([{"name": "transport", "title": "Transport"}, {"name": "environment"}])
    );
}

#[test]
fn themes_of_another_catalog_are_not_groups() {
    // The same RDF read by a portal with another catalog URI: its group scheme differs.
    let body = serialize(&portal_graph(&Fixture::new()), RdfFormat::Turtle).expect("serializes");
    let other = Fixture::with_dcat(json!({"base_uri": "http://other.example.org"}));
    let mut back = Map::new();
    read_back(&other, &body, RdfFormat::Turtle, &mut back);
    assert_eq!(Value::Object(back), json!({"region": "DEU_BER"}));
}
