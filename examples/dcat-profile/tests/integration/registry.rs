//! The profile is registered at the DCAT plugin's extension point: the registry of this test
//! binary lists it, and the plugin's start-up check accepts it in
//! `catalogext.dcat.rdf.profiles`.

// Linking the crate is what registers its profile; this binary also uses it by name, but a
// binary that does not must write `use example_dcat_profile as _;`.
use example_dcat_profile as _;

use catalog_framework::prelude::*;
use catalog_plugin_dcat::prelude::*;

use super::{dataset, Fixture};

#[test]
fn the_registry_lists_example_portal() {
    let registry = Registry::build().expect("no registration clash");
    let listed = registry.summary()["dcat_profiles"].clone();
    assert!(
        listed
            .as_array()
            .unwrap()
            .contains(&json!("example_portal")),
        "{listed}"
    );
    assert!(registry.plugins().contains(&"example_dcat_profile"));

    // What the endpoints do with `?profiles=example_portal`: look it up, then apply it.
    let fx = Fixture::new();
    let dcat = Dcat::load(&fx.config, &registry).expect("the default settings are valid");
    let profile = dcat
        .profile("example_portal")
        .expect("example_portal is registered");
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

    let fx = Fixture::with_dcat(json!({"rdf": {"profiles": "euro_dcat_ap_3 example_portal"}}));
    let dcat = Dcat::load(&fx.config, &registry).expect("valid");
    assert_eq!(dcat.settings.profiles, ["euro_dcat_ap_3", "example_portal"]);

    let fx = Fixture::with_dcat(json!({"rdf": {"profiles": "example_portal no_such_profile"}}));
    let err = Dcat::load(&fx.config, &registry)
        .err()
        .expect("no_such_profile is not registered");
    assert!(err.to_string().contains("no_such_profile"), "{err}");
    assert!(err.to_string().contains("example_portal"), "{err}");
}
