#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

use catalog_framework::prelude::*;
use catalog_plugin_dcat::prelude::*;

register_plugin!("example_dcat_profile");
register_dcat_profile!("example_portal", ExamplePortalProfile);

/// The EU Publications Office's authority table of places: `region` holds one of its codes.
pub const PLACE_AUTHORITY: &str = "http://publications.europa.eu/resource/authority/place/";

/// The dataset field with the region code (`DEU_BER`): a root field, or an extra.
pub const REGION_FIELD: &str = "region";

/// The portal's additions to DCAT-AP, meant to run after `euro_dcat_ap_3`:
///
/// - each CKAN group of the dataset becomes a `dcat:theme`, a `skos:Concept` at
///   `<catalog uri>/group/<name>` in the concept scheme `<catalog uri>/group`;
/// - the `region` field becomes a `dct:spatial` IRI of the EU place authority table;
/// - the catalog names the group scheme as its `dcat:themeTaxonomy`.
///
/// `parse_dataset` reads both back, and only those: other themes and locations belong to the
/// profiles that wrote them.
pub struct ExamplePortalProfile;

impl DcatProfile for ExamplePortalProfile {
    fn graph_from_dataset(
        &self,
        g: &mut RdfGraph,
        dataset: &Map<String, Value>,
        node: &NamedOrBlankNode,
        cx: &DcatContext<'_>,
    ) {
        let scheme = group_scheme(cx);
        for group in field_objects(dataset, "groups") {
            let Some(name) = field_str(&group, &["name"]) else {
                continue;
            };
            let concept = iri(&format!("{scheme}/{name}"));
            g.add_classed(
                node,
                &n("dcat:theme"),
                concept.clone().into(),
                "skos:Concept",
            );
            // DCAT-AP wants a label on every concept; a group's title may be empty.
            let concept: NamedOrBlankNode = concept.into();
            if let Some(label) = field_str(&group, &["title", "display_name", "name"]) {
                g.add(&concept, &n("skos:prefLabel"), lit(&label));
            }
            g.add(&concept, &n("skos:inScheme"), iri(&scheme));
        }

        if let Some(code) = field_str(dataset, &[REGION_FIELD]) {
            g.bind("place", PLACE_AUTHORITY);
            let place = iri(&format!("{PLACE_AUTHORITY}{}", code.trim()));
            g.add_classed(node, &n("dct:spatial"), place.into(), "dct:Location");
        }
    }

    fn graph_from_catalog(
        &self,
        g: &mut RdfGraph,
        _catalog: &CatalogInfo,
        node: &NamedOrBlankNode,
        cx: &DcatContext<'_>,
    ) {
        let scheme: NamedOrBlankNode = iri(&group_scheme(cx)).into();
        g.add(node, &n("dcat:themeTaxonomy"), scheme.clone());
        g.add_type(&scheme, "skos:ConceptScheme");
        let title = format!("Groups of {}", cx.config.catalog.site_title);
        g.add(&scheme, &n("dct:title"), lit(&title));
    }

    fn parse_dataset(
        &self,
        g: &RdfGraph,
        node: &NamedOrBlankNode,
        dataset: &mut Map<String, Value>,
        cx: &DcatContext<'_>,
    ) {
        // Only the themes this profile wrote: IRIs under the catalog's group scheme.
        let prefix = format!("{}/", group_scheme(cx));
        let mut names: Vec<String> = g
            .objects(node, &n("dcat:theme"))
            .iter()
            .filter_map(|theme| match theme {
                Term::NamedNode(t) => t.as_str().strip_prefix(&prefix).map(str::to_string),
                _ => None,
            })
            .filter(|name| !name.is_empty() && !name.contains('/'))
            .collect();
        // RDF has no order: sort, so that one graph always gives the same dict.
        names.sort();
        names.dedup();
        if !names.is_empty() {
            // Profiles apply in order onto one dict: keep groups an earlier profile found.
            let groups = dataset
                .entry("groups")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(groups) = groups {
                for name in names {
                    if !groups.iter().any(|gr| gr["name"] == name.as_str()) {
                        groups.push(json!({ "name": name }));
                    }
                }
            }
        }

        let region = g
            .objects(node, &n("dct:spatial"))
            .iter()
            .find_map(|place| match place {
                Term::NamedNode(p) => p.as_str().strip_prefix(PLACE_AUTHORITY).map(str::to_string),
                _ => None,
            });
        if let Some(code) = region {
            dataset.insert(REGION_FIELD.into(), json!(code));
        }
    }
}

/// `<catalog uri>/group`: the concept scheme of the group themes, and the base of their IRIs.
pub fn group_scheme(cx: &DcatContext<'_>) -> String {
    cx.catalog_iri("group")
}
