//! The profile is registered: the registry of this test binary lists it, and the start-up
//! check accepts it in `catalogext.dcat.rdf.profiles`.

// Linking the crate is what registers its profile; this binary also uses it by name, but a
// binary that does not must write `use example_dcat_profile as _;`.
use example_dcat_profile as _;

use catalog_framework::dcat::graph::{iri, n};
use catalog_framework::dcat::model::NamedOrBlankNode;
use catalog_framework::dcat::RdfGraph;
use catalog_framework::registry::Registry;
use serde_json::json;

use super::{dataset, Fixture};

#[test]
fn the_registry_lists_example_portal() {
    let registry = Registry::build().expect("no registration clash");
    assert_eq!(
        registry.summary()["dcat_profiles"],
        json!(["example_portal"])
    );
    assert!(registry.plugins().contains(&"example_dcat_profile"));

    // What the endpoints do with `?profiles=example_portal`: look it up, then apply it.
    let profile = registry
        .dcat_profile("example_portal")
        .expect("example_portal is registered");
    let fx = Fixture::new();
    let cx = fx.cx();
    let d = dataset();
    let ds: NamedOrBlankNode = iri(&cx.dataset_uri(&d)).into();
    let mut g = RdfGraph::new();
    profile.graph_from_dataset(&mut g, &d, &ds, &cx);
    assert_eq!(g.values(&ds, &n("dcat:theme")).len(), 2);
}

#[test]
fn start_up_accepts_the_profile_and_refuses_unknown_ones() {
    let registry = Registry::build().expect("no registration clash");

    let fx = Fixture::with_dcat(json!({"rdf": {"profiles": "example_portal"}}));
    let settings = catalog_framework::check_dcat(&fx.config, &registry)
        .expect("valid")
        .expect("DCAT is on when a profile is registered");
    assert_eq!(settings.profiles, ["example_portal"]);

    // The default, euro_dcat_ap_3, lives in catalog-plugin-dcat, which this binary does not link.
    let err = catalog_framework::check_dcat(&Fixture::new().config, &registry)
        .expect_err("euro_dcat_ap_3 is not registered here");
    assert!(err.to_string().contains("euro_dcat_ap_3"), "{err}");
}
