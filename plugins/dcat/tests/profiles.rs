//! The DCAT-AP and schema.org profiles at graph level (spec/dcat.md §10 checklist): values,
//! node kinds, datatypes and class triples; the URL and format matrices; the date table; the
//! v1/v2/v3 differences; publisher precedence; contact fallbacks; geometry literals; the catalog
//! node; and the round trip dataset → graph → each serialization → graph → dataset.

use catalog_framework::prelude::*;
use catalog_plugin_dcat::prelude::*;
use catalog_plugin_dcat::profiles::{EuroDcatAp, SchemaOrg, Version};
use catalog_plugin_dcat::rdf::serialize::canonical_ntriples;

const XSD: &str = "http://www.w3.org/2001/XMLSchema#";
const FORMATS: [RdfFormat; 4] = [
    RdfFormat::RdfXml,
    RdfFormat::Turtle,
    RdfFormat::N3,
    RdfFormat::JsonLd,
];

struct Env {
    config: Config,
    settings: DcatSettings,
}

fn env(dcat: Value) -> Env {
    let mut config = Config::default();
    config.catalog.site_url = "http://data.example.org".into();
    config.catalog.site_title = "Example catalog".into();
    config.catalog.site_description = "Open data of the example.".into();
    config.catalogext.values.insert("dcat".into(), dcat);
    let settings = DcatSettings::from_config(&config).unwrap();
    Env { config, settings }
}

impl Env {
    fn cx(&self) -> DcatContext<'_> {
        DcatContext {
            config: &self.config,
            settings: &self.settings,
            site_title: self.config.catalog.site_title.clone(),
        }
    }
}

fn fixture() -> Map<String, Value> {
    serde_json::from_str(include_str!("fixtures/full-dataset.json")).unwrap()
}

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn profile(v: Version) -> EuroDcatAp {
    EuroDcatAp { version: v }
}

/// The graph of one dataset with one profile, and the dataset's node.
fn graph_of(p: &dyn DcatProfile, d: &Map<String, Value>, e: &Env) -> (RdfGraph, NamedOrBlankNode) {
    let cx = e.cx();
    let node: NamedOrBlankNode = iri(&cx.dataset_uri(d)).into();
    let mut g = RdfGraph::new();
    p.graph_from_dataset(&mut g, d, &node, &cx);
    (g, node)
}

fn v3(d: &Map<String, Value>) -> (RdfGraph, NamedOrBlankNode) {
    graph_of(&profile(Version::V3), d, &env(json!({})))
}

fn objs(g: &RdfGraph, s: &NamedOrBlankNode, p: &str) -> Vec<Term> {
    g.objects(s, &n(p))
}

fn one(g: &RdfGraph, s: &NamedOrBlankNode, p: &str) -> Term {
    let os = objs(g, s, p);
    assert_eq!(os.len(), 1, "{p}: {os:?}");
    os[0].clone()
}

/// (lexical value, datatype local name or full IRI) of a literal.
fn literal(t: &Term) -> (String, String) {
    match t {
        Term::Literal(l) => {
            let dt = l.datatype().as_str();
            (
                l.value().to_string(),
                dt.strip_prefix(XSD).unwrap_or(dt).to_string(),
            )
        }
        other => panic!("not a literal: {other}"),
    }
}

fn iri_text(t: &Term) -> &str {
    match t {
        Term::NamedNode(u) => u.as_str(),
        other => panic!("not an IRI: {other}"),
    }
}

fn subject(t: &Term) -> NamedOrBlankNode {
    as_subject(t).unwrap_or_else(|| panic!("not a node: {t}"))
}

fn is_blank(t: &Term) -> bool {
    matches!(t, Term::BlankNode(_))
}

fn dist_node(e: &Env, d: &Map<String, Value>, i: usize) -> NamedOrBlankNode {
    let r = d["resources"][i].as_object().unwrap();
    iri(&e.cx().resource_uri(r, d["id"].as_str().unwrap())).into()
}

// ------------------------------------------------------------------------------- dataset

#[test]
fn dataset_fields_values_kinds_datatypes_classes() {
    let d = fixture();
    let (g, ds) = v3(&d);
    assert!(g.has_type(&ds, "dcat:Dataset"));
    assert_eq!(
        literal(&one(&g, &ds, "dct:title")),
        ("Full dataset".into(), "string".into())
    );
    assert_eq!(literal(&one(&g, &ds, "dct:description")).0, d["notes"]);
    let landing = one(&g, &ds, "dcat:landingPage");
    assert_eq!(iri_text(&landing), "http://example.org/full-dataset");
    assert!(g.has_type(&subject(&landing), "foaf:Document"));
    assert_eq!(
        literal(&one(&g, &ds, "dct:identifier")),
        ("urn:example:dataset:full".into(), "string".into())
    );
    assert_eq!(literal(&one(&g, &ds, "dcat:version")).0, "2.3");
    assert!(objs(&g, &ds, "owl:versionInfo").is_empty());
    assert_eq!(
        literal(&one(&g, &ds, "adms:versionNotes")).0,
        "Revised figures for Q2."
    );
    let freq = one(&g, &ds, "dct:accrualPeriodicity");
    assert!(iri_text(&freq).ends_with("/frequency/MONTHLY"));
    assert!(g.has_type(&subject(&freq), "dct:Frequency"));
    assert!(iri_text(&one(&g, &ds, "dct:type")).ends_with("STATISTICAL"));
    let mut kw: Vec<String> = g.values(&ds, &n("dcat:keyword"));
    kw.sort();
    assert_eq!(kw, ["Café", "economy", "statistics"]);
    assert_eq!(
        literal(&one(&g, &ds, "dct:issued")),
        ("2015-06-26T15:21:09.034694".into(), "dateTime".into())
    );
    assert_eq!(
        literal(&one(&g, &ds, "dct:modified")),
        ("2018-09-27".into(), "date".into())
    );
    let mut langs: Vec<String> = g.values(&ds, &n("dct:language"));
    langs.sort();
    assert_eq!(
        langs,
        [
            "http://publications.europa.eu/resource/authority/language/DEU",
            "http://publications.europa.eu/resource/authority/language/ENG"
        ]
    );
    for l in objs(&g, &ds, "dct:language") {
        assert!(g.has_type(&subject(&l), "dct:LinguisticSystem"));
    }
    assert_eq!(objs(&g, &ds, "dcat:theme").len(), 2);
    assert!(objs(&g, &ds, "dcat:theme")
        .iter()
        .all(|t| matches!(t, Term::NamedNode(_))));
    // conforms_to: an IRI typed dct:Standard, and a blank dct:Standard for plain text.
    let conforms = objs(&g, &ds, "dct:conformsTo");
    assert_eq!(conforms.len(), 2);
    for c in &conforms {
        assert!(g.has_type(&subject(c), "dct:Standard"));
    }
    let text_standard = conforms.iter().find(|c| is_blank(c)).unwrap();
    assert_eq!(
        g.value(&subject(text_standard), &n("rdfs:label")).unwrap(),
        "Internal schema v2"
    );
    let page = one(&g, &ds, "foaf:page");
    assert!(g.has_type(&subject(&page), "foaf:Document"));
    assert!(g.has_type(&subject(&one(&g, &ds, "dct:relation")), "rdfs:Resource"));
    // v3 writes hasVersion twice (dct and dcat).
    assert_eq!(
        one(&g, &ds, "dct:hasVersion"),
        one(&g, &ds, "dcat:hasVersion")
    );
    assert_eq!(objs(&g, &ds, "dct:isVersionOf").len(), 1);
    assert_eq!(objs(&g, &ds, "dct:source").len(), 1);
    let sample = one(&g, &ds, "adms:sample");
    assert!(
        !g.has_type(&subject(&sample), "dcat:Distribution"),
        "a sample IRI typed dcat:Distribution would need an accessURL"
    );
    // v3 alternate identifiers: blank adms:Identifier nodes with skos:notation.
    let mut notations: Vec<String> = objs(&g, &ds, "adms:identifier")
        .iter()
        .map(|t| {
            assert!(is_blank(t));
            assert!(g.has_type(&subject(t), "adms:Identifier"));
            g.value(&subject(t), &n("skos:notation")).unwrap()
        })
        .collect();
    notations.sort();
    assert_eq!(notations, ["FULL-001", "doi:10.1234/full"]);
    let rights = one(&g, &ds, "dct:accessRights");
    assert!(iri_text(&rights).ends_with("/PUBLIC"));
    assert!(g.has_type(&subject(&rights), "dct:RightsStatement"));
    let prov = one(&g, &ds, "dct:provenance");
    assert!(is_blank(&prov));
    assert!(g.has_type(&subject(&prov), "dct:ProvenanceStatement"));
    assert_eq!(
        g.value(&subject(&prov), &n("rdfs:label")).unwrap(),
        "Collected by the statistics office."
    );
    // v2+ additions
    assert_eq!(
        literal(&one(&g, &ds, "dcat:temporalResolution")),
        ("PT15M".into(), "duration".into())
    );
    assert_eq!(
        literal(&one(&g, &ds, "dcat:spatialResolutionInMeters")),
        ("30".into(), "decimal".into())
    );
    let leg = one(&g, &ds, "dcatap:applicableLegislation");
    assert!(g.has_type(&subject(&leg), "eli:LegalResource"));
    assert_eq!(objs(&g, &ds, "dcatap:hvdCategory").len(), 1);
    assert_eq!(objs(&g, &ds, "dct:isReferencedBy").len(), 1);
    let act = subject(&one(&g, &ds, "prov:wasGeneratedBy"));
    assert!(g.has_type(&act, "prov:Activity"));
    assert_eq!(
        literal(&one(&g, &act, "prov:startedAtTime")),
        ("2024-01-01T00:00:00".into(), "dateTime".into())
    );
    let agent = subject(&one(&g, &act, "prov:wasAssociatedWith"));
    assert_eq!(g.value(&agent, &n("foaf:name")).unwrap(), "Field unit");
    let att = subject(&one(&g, &ds, "prov:qualifiedAttribution"));
    assert!(g.has_type(&att, "prov:Attribution"));
    assert!(objs(&g, &ds, "dcat:qualifiedAttribution").is_empty());
    assert!(g.has_type(&subject(&one(&g, &att, "prov:agent")), "foaf:Agent"));
    let rel = subject(&one(&g, &ds, "dcat:qualifiedRelation"));
    assert!(g.has_type(&rel, "dcat:Relationship"));
    assert!(g.has_type(&subject(&one(&g, &rel, "dcat:hadRole")), "dcat:Role"));
    assert_eq!(objs(&g, &ds, "dcat:distribution").len(), 3);
    // Not mapped: dataset-level license, groups.
    assert!(objs(&g, &ds, "dct:license").is_empty());
}

#[test]
fn no_literal_subjects_and_no_literal_where_dcat_ap_wants_a_node() {
    let d = fixture();
    for v in [Version::V1, Version::V2, Version::V3] {
        let (g, _) = graph_of(&profile(v), &d, &env(json!({})));
        for t in g.graph.iter() {
            let p = t.predicate.as_str();
            let wants_node = [
                "http://purl.org/dc/terms/language",
                "http://purl.org/dc/terms/format",
                "http://www.w3.org/ns/dcat#mediaType",
                "http://purl.org/dc/terms/license",
                "http://purl.org/dc/terms/type",
                "http://purl.org/dc/terms/accrualPeriodicity",
                "http://purl.org/dc/terms/conformsTo",
                "http://www.w3.org/ns/dcat#accessURL",
                "http://www.w3.org/ns/adms#identifier",
            ];
            if wants_node.contains(&p) {
                assert!(
                    !matches!(t.object, oxigraph::model::TermRef::Literal(_)),
                    "{v:?}: literal object of {t}"
                );
            }
        }
    }
}

#[test]
fn version_differences() {
    let d = fixture();
    let e = env(json!({}));
    let (g1, ds) = graph_of(&profile(Version::V1), &d, &e);
    let (g2, _) = graph_of(&profile(Version::V2), &d, &e);
    let (g3, _) = graph_of(&profile(Version::V3), &d, &e);
    // version
    assert_eq!(literal(&one(&g1, &ds, "owl:versionInfo")).0, "2.3");
    assert_eq!(literal(&one(&g2, &ds, "owl:versionInfo")).0, "2.3");
    assert!(objs(&g3, &ds, "owl:versionInfo").is_empty());
    assert!(objs(&g2, &ds, "dcat:version").is_empty());
    // hasVersion
    assert!(objs(&g2, &ds, "dcat:hasVersion").is_empty());
    assert_eq!(objs(&g3, &ds, "dcat:hasVersion").len(), 1);
    // temporal properties: v1 schema:, v2 dcat:, v3 dcat: plus temporal_coverage
    let t1 = subject(&one(&g1, &ds, "dct:temporal"));
    assert_eq!(
        literal(&one(&g1, &t1, "schema:startDate")),
        ("1905-03-01".into(), "date".into())
    );
    let t2 = subject(&one(&g2, &ds, "dct:temporal"));
    assert_eq!(
        literal(&one(&g2, &t2, "dcat:endDate")),
        ("2013-01-05".into(), "date".into())
    );
    assert_eq!(objs(&g3, &ds, "dct:temporal").len(), 2);
    // byteSize datatype
    let dist = dist_node(&e, &d, 0);
    assert_eq!(
        literal(&one(&g1, &dist, "dcat:byteSize")),
        ("12323".into(), "decimal".into())
    );
    assert_eq!(
        literal(&one(&g2, &dist, "dcat:byteSize")),
        ("12323".into(), "decimal".into())
    );
    assert_eq!(
        literal(&one(&g3, &dist, "dcat:byteSize")),
        ("12323".into(), "nonNegativeInteger".into())
    );
    // v2 extras are absent in v1
    for p in [
        "dcat:temporalResolution",
        "dcat:spatialResolutionInMeters",
        "dcatap:applicableLegislation",
        "prov:wasGeneratedBy",
        "prov:qualifiedAttribution",
    ] {
        assert!(objs(&g1, &ds, p).is_empty(), "{p} in v1");
        assert_eq!(objs(&g2, &ds, p).len(), 1, "{p} in v2");
    }
    assert!(objs(&g1, &dist, "dcat:accessService").is_empty());
    assert_eq!(objs(&g2, &dist, "dcat:accessService").len(), 1);
    // scheming objects only in v3
    assert!(objs(&g2, &ds, "dcat:qualifiedRelation").is_empty());
    assert_eq!(objs(&g3, &ds, "dcat:qualifiedRelation").len(), 1);
    assert_eq!(objs(&g2, &ds, "dcat:contactPoint").len(), 1);
    assert_eq!(objs(&g3, &ds, "dcat:contactPoint").len(), 2);
    assert_eq!(objs(&g2, &ds, "dct:spatial").len(), 1);
    assert_eq!(objs(&g3, &ds, "dct:spatial").len(), 2);
    // alternate identifiers: v2 keeps IRIs as IRIs, text as adms:Identifier nodes.
    assert!(objs(&g2, &ds, "adms:identifier").iter().all(is_blank));
    // bbox/centroid only from v2
    let loc1 = subject(&one(&g1, &ds, "dct:spatial"));
    assert!(objs(&g1, &loc1, "dcat:bbox").is_empty());
    let loc2 = subject(&one(&g2, &ds, "dct:spatial"));
    assert_eq!(objs(&g2, &loc2, "dcat:bbox").len(), 1);
    assert_eq!(objs(&g2, &loc2, "dcat:centroid").len(), 1);
}

#[test]
fn dataset_series_type_in_v3() {
    let mut d = fixture();
    d.insert("type".into(), json!("dataset_series"));
    let (g, ds) = v3(&d);
    assert!(g.has_type(&ds, "dcat:DatasetSeries"));
    assert!(!g.has_type(&ds, "dcat:Dataset"));
    let (g2, _) = graph_of(&profile(Version::V2), &d, &env(json!({})));
    assert!(g2.has_type(&ds, "dcat:Dataset"));
}

#[test]
fn identifier_falls_back_to_guid_then_id_and_is_always_a_literal() {
    let (g, ds) = v3(&obj(
        json!({"id": "abc", "extras": [{"key": "guid", "value": "g-1"}]}),
    ));
    assert_eq!(literal(&one(&g, &ds, "dct:identifier")).0, "g-1");
    let (g, ds) = v3(&obj(json!({"id": "abc"})));
    assert_eq!(literal(&one(&g, &ds, "dct:identifier")).0, "abc");
    let (g, ds) = v3(&obj(
        json!({"id": "abc", "identifier": "http://x.org/id/1"}),
    ));
    assert_eq!(
        literal(&one(&g, &ds, "dct:identifier")),
        ("http://x.org/id/1".into(), "string".into())
    );
}

#[test]
fn issued_and_modified_fall_back_to_metadata_dates() {
    let (g, ds) = v3(&obj(json!({
        "id": "abc",
        "metadata_created": "2024-01-02T03:04:05.123456",
        "metadata_modified": "2024-06-07T08:09:10"
    })));
    assert_eq!(
        literal(&one(&g, &ds, "dct:issued")),
        ("2024-01-02T03:04:05.123456".into(), "dateTime".into())
    );
    assert_eq!(
        literal(&one(&g, &ds, "dct:modified")),
        ("2024-06-07T08:09:10".into(), "dateTime".into())
    );
}

#[test]
fn multilingual_title_and_tags() {
    let (g, ds) = v3(&obj(json!({
        "id": "abc",
        "title_translated": {"en": "Roads", "ca": "Carreteres"},
        "tags_translated": {"en": ["road"], "ca": ["carretera", "via"]}
    })));
    let titles: Vec<String> = objs(&g, &ds, "dct:title")
        .iter()
        .map(|t| match t {
            Term::Literal(l) => format!("{}@{}", l.value(), l.language().unwrap()),
            _ => unreachable!(),
        })
        .collect();
    assert!(
        titles.contains(&"Roads@en".to_string()) && titles.contains(&"Carreteres@ca".to_string())
    );
    assert_eq!(objs(&g, &ds, "dcat:keyword").len(), 3);
}

// ------------------------------------------------------------------------------- contact

#[test]
fn contact_fallbacks_and_node_kind() {
    let cases = [
        (
            json!({"maintainer": "Max", "maintainer_email": "max@x.org", "author": "Ada", "author_email": "ada@x.org"}),
            "Max",
            "mailto:max@x.org",
        ),
        (
            json!({"author": "Ada", "author_email": "mailto:ada@x.org"}),
            "Ada",
            "mailto:ada@x.org",
        ),
        (
            json!({"maintainer": "Max", "extras": [{"key": "contact_name", "value": "Desk"}, {"key": "contact_email", "value": "desk@x.org"}]}),
            "Desk",
            "mailto:desk@x.org",
        ),
    ];
    for (mut d, name, email) in cases {
        d["id"] = json!("abc");
        let (g, ds) = v3(&obj(d));
        let c = one(&g, &ds, "dcat:contactPoint");
        assert!(is_blank(&c), "no contact_uri → blank node");
        let c = subject(&c);
        assert!(g.has_type(&c, "vcard:Kind") && g.has_type(&c, "vcard:Organization"));
        assert_eq!(g.value(&c, &n("vcard:fn")).unwrap(), name);
        assert_eq!(iri_text(&one(&g, &c, "vcard:hasEmail")), email);
    }
    let (g, ds) = v3(&obj(
        json!({"id": "abc", "contact_uri": "http://x.org/c/1", "contact_name": "C"}),
    ));
    assert_eq!(
        iri_text(&one(&g, &ds, "dcat:contactPoint")),
        "http://x.org/c/1"
    );
    let (g, ds) = v3(&obj(json!({"id": "abc"})));
    assert!(objs(&g, &ds, "dcat:contactPoint").is_empty());
}

#[test]
fn scheming_contact_items() {
    let d = fixture();
    let (g, ds) = v3(&d);
    let c: NamedOrBlankNode = iri("http://example.org/contacts/helpdesk").into();
    assert!(objs(&g, &ds, "dcat:contactPoint")
        .contains(&Term::from(iri("http://example.org/contacts/helpdesk"))));
    assert!(g.has_type(&c, "vcard:Kind"));
    assert_eq!(g.value(&c, &n("vcard:fn")).unwrap(), "Helpdesk");
    assert_eq!(g.value(&c, &n("vcard:hasUID")).unwrap(), "HELP-1");
    assert_eq!(
        iri_text(&one(&g, &c, "vcard:hasURL")),
        "http://example.org/help"
    );
}

// ------------------------------------------------------------------------------- agents

#[test]
fn publisher_precedence_scheming_then_flat_then_organization() {
    let org = json!({"id": "org-1", "name": "o", "title": "The Org"});
    let scheming = json!([{"uri": "http://x.org/p/s", "name": "Scheming publisher", "email": "s@x.org"}, {"name": "Second"}]);
    let flat = json!([{"key": "publisher_name", "value": "Flat publisher"}, {"key": "publisher_email", "value": "f@x.org"}]);

    // scheming wins (v3), first item only (dct:publisher max 1)
    let d = obj(json!({"id": "abc", "organization": org, "publisher": scheming, "extras": flat}));
    let (g, ds) = v3(&d);
    let p = one(&g, &ds, "dct:publisher");
    assert_eq!(iri_text(&p), "http://x.org/p/s");
    assert!(g.has_type(&subject(&p), "foaf:Agent"));
    assert_eq!(
        g.value(&subject(&p), &n("foaf:name")).unwrap(),
        "Scheming publisher"
    );
    // v2 ignores the scheming list: flat wins
    let (g, ds) = graph_of(&profile(Version::V2), &d, &env(json!({})));
    let p = subject(&one(&g, &ds, "dct:publisher"));
    assert!(matches!(p, NamedOrBlankNode::BlankNode(_)));
    assert_eq!(g.value(&p, &n("foaf:name")).unwrap(), "Flat publisher");
    assert_eq!(iri_text(&one(&g, &p, "foaf:mbox")), "mailto:f@x.org");
    // flat with uri
    let d = obj(
        json!({"id": "abc", "organization": org, "extras": [{"key": "publisher_uri", "value": "http://x.org/p/f"}, {"key": "publisher_name", "value": "F"}]}),
    );
    let (g, ds) = v3(&d);
    assert_eq!(iri_text(&one(&g, &ds, "dct:publisher")), "http://x.org/p/f");
    // organization fallback
    let (g, ds) = v3(&obj(json!({"id": "abc", "organization": org})));
    let p = one(&g, &ds, "dct:publisher");
    assert_eq!(iri_text(&p), "http://data.example.org/organization/org-1");
    assert_eq!(g.value(&subject(&p), &n("foaf:name")).unwrap(), "The Org");
    // nothing
    let (g, ds) = v3(&obj(json!({"id": "abc"})));
    assert!(objs(&g, &ds, "dct:publisher").is_empty());
}

#[test]
fn flat_publisher_and_creator_fields() {
    let d = fixture();
    let (g, ds) = v3(&d);
    let p = one(&g, &ds, "dct:publisher");
    assert_eq!(iri_text(&p), "http://example.org/publishers/stats");
    let p = subject(&p);
    assert_eq!(g.value(&p, &n("foaf:name")).unwrap(), "Statistics Office");
    assert_eq!(
        iri_text(&one(&g, &p, "foaf:mbox")),
        "mailto:info@stats.example.org"
    );
    assert_eq!(
        iri_text(&one(&g, &p, "foaf:homepage")),
        "http://stats.example.org"
    );
    assert!(iri_text(&one(&g, &p, "dct:type")).ends_with("NationalAuthority"));
    assert_eq!(literal(&one(&g, &p, "dct:identifier")).0, "STATS-OFFICE");
    let c = one(&g, &ds, "dct:creator");
    assert_eq!(iri_text(&c), "http://example.org/creators/team");
    assert_eq!(
        g.value(&subject(&c), &n("foaf:name")).unwrap(),
        "Survey team"
    );
    // no organization fallback for the creator
    let (g, ds) = v3(&obj(
        json!({"id": "abc", "organization": {"id": "o", "title": "O"}}),
    ));
    assert!(objs(&g, &ds, "dct:creator").is_empty());
}

// ------------------------------------------------------------------------------- space and time

#[test]
fn spatial_wkt_by_default_and_geojson_on_request() {
    let d = fixture();
    let (g, ds) = graph_of(&profile(Version::V2), &d, &env(json!({})));
    let loc = one(&g, &ds, "dct:spatial");
    assert_eq!(
        iri_text(&loc),
        "http://publications.europa.eu/resource/authority/country/ESP"
    );
    let loc = subject(&loc);
    assert!(g.has_type(&loc, "dct:Location"));
    assert_eq!(g.value(&loc, &n("skos:prefLabel")).unwrap(), "Tarragona");
    assert_eq!(
        literal(&one(&g, &loc, "locn:geometry")),
        (
            "POLYGON ((1.1871 41.0786, 1.1871 41.1655, 1.3088 41.1655, 1.3088 41.0786, 1.1871 41.0786))"
                .into(),
            "http://www.opengis.net/ont/geosparql#wktLiteral".into()
        )
    );
    assert!(objs(&g, &loc, "locn:Geometry").is_empty());
    assert_eq!(
        literal(&one(&g, &loc, "dcat:centroid")).0,
        "POINT (1.5000 41.5000)"
    );

    let e = env(json!({"output_spatial_format": "wkt geojson"}));
    let (g, ds) = graph_of(&profile(Version::V2), &d, &e);
    let loc = subject(&one(&g, &ds, "dct:spatial"));
    let geoms = objs(&g, &loc, "locn:geometry");
    assert_eq!(geoms.len(), 2);
    assert!(geoms.iter().any(|t| literal(t)
        == (
            r#"{"type": "Polygon", "coordinates": [[[1.1871, 41.0786], [1.1871, 41.1655], [1.3088, 41.1655], [1.3088, 41.0786], [1.1871, 41.0786]]]}"#.into(),
            "https://www.iana.org/assignments/media-types/application/vnd.geo+json".into()
        )));
}

#[test]
fn spatial_edge_cases() {
    // Invalid GeoJSON: the Location exists, no geometry.
    let (g, ds) = v3(&obj(
        json!({"id": "a", "spatial_text": "Somewhere", "spatial": "{not json"}),
    ));
    let loc = subject(&one(&g, &ds, "dct:spatial"));
    assert!(is_blank(&Term::from(loc.clone())));
    assert!(objs(&g, &loc, "locn:geometry").is_empty());
    // spatial_uri alone: a dct:Location IRI (ckanext-dcat writes nothing).
    let (g, ds) = v3(&obj(
        json!({"id": "a", "spatial_uri": "http://sws.geonames.org/1/"}),
    ));
    let loc = one(&g, &ds, "dct:spatial");
    assert_eq!(iri_text(&loc), "http://sws.geonames.org/1/");
    assert!(g.has_type(&subject(&loc), "dct:Location"));
    // scheming spatial_coverage uses locn:geometry (not locn:Geometry)
    let d = fixture();
    let (g, _) = v3(&d);
    let reus: NamedOrBlankNode = iri("http://sws.geonames.org/3108288/").into();
    assert_eq!(
        literal(&one(&g, &reus, "locn:geometry")).0,
        "POINT (1.1065 41.1557)"
    );
}

#[test]
fn temporal_only_end() {
    let (g, ds) = v3(&obj(json!({"id": "a", "temporal_end": "2024"})));
    let t = subject(&one(&g, &ds, "dct:temporal"));
    assert!(g.has_type(&t, "dct:PeriodOfTime"));
    assert_eq!(
        literal(&one(&g, &t, "dcat:endDate")),
        ("2024".into(), "gYear".into())
    );
    assert!(objs(&g, &t, "dcat:startDate").is_empty());
}

// ------------------------------------------------------------------------------- distributions

fn dist_graph(r: Value, v: Version, e: &Env) -> (RdfGraph, NamedOrBlankNode) {
    let mut r = r;
    r["id"] = json!("r1");
    r["package_id"] = json!("abc");
    let d = obj(json!({"id": "abc", "resources": [r]}));
    let (g, _) = graph_of(&profile(v), &d, e);
    (g, dist_node(e, &d, 0))
}

#[test]
fn distribution_fields() {
    let d = fixture();
    let e = env(json!({}));
    let (g, _) = graph_of(&profile(Version::V3), &d, &e);
    let dist = dist_node(&e, &d, 0);
    assert_eq!(
        dist.to_string(),
        "<http://data.example.org/dataset/4b6fe9ca-dd70-4a4b-9a5f-2f6a3bd7c3a1/resource/a1b2c3d4-0000-4000-8000-000000000001>"
    );
    assert!(g.has_type(&dist, "dcat:Distribution"));
    assert_eq!(g.value(&dist, &n("dct:title")).unwrap(), "Figures (CSV)");
    assert_eq!(
        g.value(&dist, &n("dct:description")).unwrap(),
        "The figures as CSV."
    );
    let lic = one(&g, &dist, "dct:license");
    assert!(g.has_type(&subject(&lic), "dct:LicenseDocument"));
    assert!(iri_text(&one(&g, &subject(&lic), "dct:type")).ends_with("UnknownIPR"));
    assert!(g.has_type(
        &subject(&one(&g, &dist, "dct:rights")),
        "dct:RightsStatement"
    ));
    assert!(iri_text(&one(&g, &dist, "adms:status")).ends_with("Completed"));
    assert_eq!(
        literal(&one(&g, &dist, "dct:issued")),
        ("2024-05-31".into(), "date".into())
    );
    assert_eq!(
        literal(&one(&g, &dist, "dct:modified")),
        ("2024-05-31T12:30:01.451243".into(), "dateTime".into())
    );
    let ck = subject(&one(&g, &dist, "spdx:checksum"));
    assert!(g.has_type(&ck, "spdx:Checksum"));
    assert_eq!(literal(&one(&g, &ck, "spdx:checksumValue")).1, "hexBinary");
    assert!(iri_text(&one(&g, &ck, "spdx:algorithm")).ends_with("sha256"));
    assert_eq!(
        iri_text(&one(&g, &dist, "dct:format")),
        "http://publications.europa.eu/resource/authority/file-type/CSV"
    );
    assert_eq!(
        iri_text(&one(&g, &dist, "dcat:mediaType")),
        "http://www.iana.org/assignments/media-types/text/csv"
    );
    assert!(g.has_type(&subject(&one(&g, &dist, "dcat:mediaType")), "dct:MediaType"));
    assert_eq!(
        iri_text(&one(&g, &dist, "dct:language")),
        "http://publications.europa.eu/resource/authority/language/ENG"
    );
    assert!(iri_text(&one(&g, &dist, "dcatap:availability")).ends_with("stable"));
    assert!(iri_text(&one(&g, &dist, "dcat:compressFormat")).ends_with("application/gzip"));
    assert!(iri_text(&one(&g, &dist, "dcat:packageFormat")).ends_with("application/x-tar"));
    assert_eq!(
        literal(&one(&g, &dist, "dcat:temporalResolution")),
        ("P1D".into(), "duration".into())
    );
    assert_eq!(
        literal(&one(&g, &dist, "dcat:spatialResolutionInMeters")),
        ("1.5".into(), "decimal".into())
    );
    let svc = one(&g, &dist, "dcat:accessService");
    assert_eq!(iri_text(&svc), "http://example.org/services/api");
    let svc = subject(&svc);
    assert!(g.has_type(&svc, "dcat:DataService"));
    assert_eq!(g.value(&svc, &n("dct:title")).unwrap(), "Figures API");
    assert_eq!(
        iri_text(&one(&g, &svc, "dcat:endpointURL")),
        "http://example.org/api"
    );
    // The second resource: unknown format → labelled blank node; literal license → blank node.
    let dist2 = dist_node(&e, &d, 1);
    let f = one(&g, &dist2, "dct:format");
    assert!(is_blank(&f));
    assert!(g.has_type(&subject(&f), "dct:MediaTypeOrExtent"));
    assert_eq!(g.value(&subject(&f), &n("rdfs:label")).unwrap(), "myformat");
    let lic = one(&g, &dist2, "dct:license");
    assert!(is_blank(&lic));
    assert_eq!(
        g.value(&subject(&lic), &n("rdfs:label")).unwrap(),
        "Licence: internal use"
    );
    assert_eq!(
        literal(&one(&g, &dist2, "dct:issued")),
        ("2024".into(), "gYear".into())
    );
    assert_eq!(
        literal(&one(&g, &dist2, "dct:modified")),
        ("2024-05".into(), "gYearMonth".into())
    );
}

#[test]
fn url_matrix() {
    let e = env(json!({}));
    let a = "http://x.org/access";
    let dl = "http://x.org/download";
    let u = "http://x.org/url";
    // (resource, accessURL, downloadURL)
    let cases = [
        (json!({"url": u}), Some(u), None),
        (json!({"access_url": a}), Some(a), None),
        // download only: the downloadURL doubles as accessURL (mandatory in DCAT-AP)
        (json!({"download_url": dl}), Some(dl), Some(dl)),
        (json!({"url": u, "download_url": dl}), Some(u), Some(dl)),
        (json!({"url": dl, "download_url": dl}), Some(dl), Some(dl)),
        (
            json!({"url": u, "access_url": a, "download_url": dl}),
            Some(a),
            Some(dl),
        ),
        (
            json!({"url": u, "access_url": a, "download_url": a}),
            Some(a),
            Some(a),
        ),
    ];
    for (r, access, download) in cases {
        let (g, dist) = dist_graph(r.clone(), Version::V3, &e);
        let got_a: Vec<String> = g.values(&dist, &n("dcat:accessURL"));
        let got_d: Vec<String> = g.values(&dist, &n("dcat:downloadURL"));
        assert_eq!(got_a, access.into_iter().collect::<Vec<_>>(), "{r}");
        assert_eq!(got_d, download.into_iter().collect::<Vec<_>>(), "{r}");
        for x in objs(&g, &dist, "dcat:accessURL") {
            assert!(g.has_type(&subject(&x), "rdfs:Resource"));
        }
    }
    // Nothing at all: the distribution's own IRI.
    let (g, dist) = dist_graph(json!({}), Version::V3, &e);
    assert_eq!(Term::from(dist.clone()), one(&g, &dist, "dcat:accessURL"));
}

#[test]
fn format_matrix() {
    let e = env(json!({}));
    let eu = |c: &str| format!("http://publications.europa.eu/resource/authority/file-type/{c}");
    let iana = |c: &str| format!("http://www.iana.org/assignments/media-types/{c}");
    // (resource, dct:format IRI/label, dcat:mediaType IRI/label)
    let cases: Vec<(Value, Option<String>, Option<String>)> = vec![
        (json!({"format": "CSV"}), Some(eu("CSV")), None),
        (
            json!({"format": "csv", "mimetype": "csv"}),
            Some(eu("CSV")),
            None,
        ),
        (
            json!({"format": "application/json"}),
            None,
            Some(iana("application/json")),
        ),
        (
            json!({"format": "myformat", "mimetype": "application/json"}),
            Some("myformat".into()),
            Some(iana("application/json")),
        ),
        (
            json!({"format": "https://www.iana.org/assignments/media-types/application/json"}),
            None,
            Some("https://www.iana.org/assignments/media-types/application/json".into()),
        ),
        (
            json!({"format": "https://example.com/my/format"}),
            Some("https://example.com/my/format".into()),
            None,
        ),
        (
            json!({"mimetype": "text/csv"}),
            None,
            Some(iana("text/csv")),
        ),
    ];
    for (r, fmt, mt) in cases {
        let (g, dist) = dist_graph(r.clone(), Version::V3, &e);
        let label = |t: &Term| match t {
            Term::BlankNode(_) => g.value(&subject(t), &n("rdfs:label")).unwrap(),
            other => iri_text(other).to_string(),
        };
        let got_f: Vec<String> = objs(&g, &dist, "dct:format").iter().map(label).collect();
        let got_m: Vec<String> = objs(&g, &dist, "dcat:mediaType")
            .iter()
            .map(label)
            .collect();
        assert_eq!(got_f, fmt.into_iter().collect::<Vec<_>>(), "{r}");
        assert_eq!(got_m, mt.into_iter().collect::<Vec<_>>(), "{r}");
    }
}

#[test]
fn date_table() {
    let e = env(json!({}));
    for (input, value, dt) in [
        ("2024", "2024", "gYear"),
        ("2024-05", "2024-05", "gYearMonth"),
        ("2024-05-31", "2024-05-31", "date"),
        ("2024-05-31T00:00:00", "2024-05-31T00:00:00", "dateTime"),
        ("2024-05-31T12:30:01", "2024-05-31T12:30:01", "dateTime"),
        (
            "2024-05-31T12:30:01.451243",
            "2024-05-31T12:30:01.451243",
            "dateTime",
        ),
    ] {
        let (g, dist) = dist_graph(json!({"issued": input}), Version::V3, &e);
        assert_eq!(
            literal(&one(&g, &dist, "dct:issued")),
            (value.into(), dt.into()),
            "{input}"
        );
    }
}

#[test]
fn license_inheritance() {
    let d = obj(json!({
        "id": "abc",
        "license_id": "cc-by",
        "license_url": "http://opendefinition.org/licenses/cc-by/",
        "resources": [{"id": "r1", "package_id": "abc", "url": "http://x.org/f"},
                      {"id": "r2", "package_id": "abc", "url": "http://x.org/g", "license": "http://x.org/own"}]
    }));
    let e = env(json!({}));
    let (g, _) = graph_of(&profile(Version::V3), &d, &e);
    assert!(objs(&g, &dist_node(&e, &d, 0), "dct:license").is_empty());
    let e = env(json!({"resource": {"inherit": {"license": true}}}));
    let (g, _) = graph_of(&profile(Version::V3), &d, &e);
    assert_eq!(
        iri_text(&one(&g, &dist_node(&e, &d, 0), "dct:license")),
        "http://opendefinition.org/licenses/cc-by/"
    );
    assert_eq!(
        iri_text(&one(&g, &dist_node(&e, &d, 1), "dct:license")),
        "http://x.org/own"
    );
}

#[test]
fn checksum_needs_a_known_algorithm_and_sha1_before_v3() {
    let e = env(json!({}));
    let sha256 = "a".repeat(64);
    let (g, dist) = dist_graph(json!({"hash": sha256}), Version::V2, &e);
    assert!(objs(&g, &dist, "spdx:checksum").is_empty());
    let (g, dist) = dist_graph(
        json!({"hash": "abc", "hash_algorithm": "SHA-256"}),
        Version::V3,
        &e,
    );
    let ck = subject(&one(&g, &dist, "spdx:checksum"));
    assert!(iri_text(&one(&g, &ck, "spdx:algorithm")).ends_with("#checksumAlgorithm_sha256"));
    let (g, dist) = dist_graph(json!({"hash": "abc"}), Version::V3, &e);
    assert!(objs(&g, &dist, "spdx:checksum").is_empty(), "no algorithm");
    let (g, dist) = dist_graph(json!({"hash": "a".repeat(40)}), Version::V1, &e);
    assert_eq!(objs(&g, &dist, "spdx:checksum").len(), 1);
}

#[test]
fn checksum_algorithm_is_inferred_from_digest_length() {
    let e = env(json!({}));
    let (g, dist) = dist_graph(
        json!({"url": "http://x/f", "hash": "d41d8cd98f00b204e9800998ecf8427e"}),
        Version::V3,
        &e,
    );
    let ck = subject(&one(&g, &dist, "spdx:checksum"));
    assert_eq!(
        iri_text(&one(&g, &ck, "spdx:algorithm")),
        "http://spdx.org/rdf/terms#checksumAlgorithm_md5"
    );
}

// ------------------------------------------------------------------------------- catalog

#[test]
fn catalog_node() {
    let e = env(json!({
        "catalog_publisher_uri": "http://data.example.org/#publisher",
        "catalog_publisher_email": "open@example.org",
    }));
    let cx = e.cx();
    let node: NamedOrBlankNode = iri(cx.catalog_uri()).into();
    let mut g = RdfGraph::new();
    profile(Version::V3).graph_from_catalog(
        &mut g,
        &CatalogInfo {
            modified: Some("2024-06-07T08:09:10.654321".into()),
        },
        &node,
        &cx,
    );
    assert!(g.has_type(&node, "dcat:Catalog"));
    assert_eq!(g.value(&node, &n("dct:title")).unwrap(), "Example catalog");
    assert_eq!(
        g.value(&node, &n("dct:description")).unwrap(),
        "Open data of the example."
    );
    let home = one(&g, &node, "foaf:homepage");
    assert_eq!(iri_text(&home), "http://data.example.org");
    assert!(g.has_type(&subject(&home), "foaf:Document"));
    assert_eq!(
        iri_text(&one(&g, &node, "dct:language")),
        "http://publications.europa.eu/resource/authority/language/ENG"
    );
    assert_eq!(
        literal(&one(&g, &node, "dct:modified")),
        ("2024-06-07T08:09:10.654321".into(), "dateTime".into())
    );
    let p = one(&g, &node, "dct:publisher");
    assert_eq!(iri_text(&p), "http://data.example.org/#publisher");
    let p = subject(&p);
    assert!(g.has_type(&p, "foaf:Agent"));
    assert_eq!(g.value(&p, &n("foaf:name")).unwrap(), "Example catalog");
    assert_eq!(
        iri_text(&one(&g, &p, "foaf:mbox")),
        "mailto:open@example.org"
    );
    // No publisher URI → blank node.
    let e = env(json!({}));
    let cx = e.cx();
    let mut g = RdfGraph::new();
    profile(Version::V2).graph_from_catalog(&mut g, &CatalogInfo::default(), &node, &cx);
    assert!(is_blank(&one(&g, &node, "dct:publisher")));
    assert!(objs(&g, &node, "dct:modified").is_empty());
}

// ------------------------------------------------------------------------------- schema.org

#[test]
fn schemaorg_dataset() {
    let d = fixture();
    let e = env(json!({}));
    let (g, ds) = graph_of(&SchemaOrg, &d, &e);
    assert!(g.has_type(&ds, "schema:Dataset"));
    assert_eq!(g.value(&ds, &n("schema:name")).unwrap(), "Full dataset");
    assert_eq!(
        g.value(&ds, &n("schema:url")).unwrap(),
        "http://data.example.org/dataset/full-dataset"
    );
    assert_eq!(objs(&g, &ds, "schema:keywords").len(), 3);
    assert_eq!(
        g.value(&ds, &n("schema:temporalCoverage")).unwrap(),
        "1905-03-01/2013-01-05"
    );
    // identical raw/ISO dates → one triple
    assert_eq!(objs(&g, &ds, "schema:datePublished").len(), 1);
    let about = subject(&one(&g, &ds, "schema:about"));
    assert_eq!(g.value(&about, &n("schema:name")).unwrap(), "economy");
    let p = one(&g, &ds, "schema:publisher");
    assert_eq!(iri_text(&p), "http://example.org/publishers/stats");
    let cp = subject(&one(&g, &subject(&p), "schema:contactPoint"));
    assert_eq!(
        g.value(&cp, &n("schema:email")).unwrap(),
        "info@stats.example.org"
    );
    let dist = dist_node(&e, &d, 0);
    assert!(g.has_type(&dist, "schema:DataDownload"));
    assert_eq!(g.value(&dist, &n("schema:encodingFormat")).unwrap(), "CSV");
    assert_eq!(
        g.value(&dist, &n("schema:contentUrl")).unwrap(),
        "http://example.org/full-dataset/figures-download.csv"
    );
    assert_eq!(
        literal(&one(&g, &dist, "schema:contentSize")),
        ("12323".into(), "integer".into())
    );
    assert!(objs(&g, &ds, "dcat:distribution").is_empty());
}

#[test]
fn profiles_share_one_graph() {
    let d = fixture();
    let e = env(json!({}));
    let cx = e.cx();
    let node: NamedOrBlankNode = iri(&cx.dataset_uri(&d)).into();
    let mut g = RdfGraph::new();
    profile(Version::V3).graph_from_dataset(&mut g, &d, &node, &cx);
    SchemaOrg.graph_from_dataset(&mut g, &d, &node, &cx);
    assert!(g.has_type(&node, "dcat:Dataset") && g.has_type(&node, "schema:Dataset"));
}

// ------------------------------------------------------------------------------- round trip

/// The extras of a dict as key → value.
fn extra(d: &Map<String, Value>, key: &str) -> Option<Value> {
    d.get("extras")?
        .as_array()?
        .iter()
        .find(|e| e["key"] == key)
        .map(|e| e["value"].clone())
}

/// A field's value wherever it lives (root, then extras), with JSON strings decoded, so that a
/// root list and an extra holding its JSON compare equal.
fn norm(d: &Map<String, Value>, key: &str) -> Option<Value> {
    let v = d
        .get(key)
        .filter(|v| !v.is_null())
        .cloned()
        .or_else(|| extra(d, key))?;
    Some(match v {
        Value::String(s) => match serde_json::from_str::<Value>(&s) {
            Ok(j @ (Value::Array(_) | Value::Object(_))) => j,
            _ => Value::String(s),
        },
        other => other,
    })
}

fn parse_back(
    p: &EuroDcatAp,
    g: &RdfGraph,
    f: RdfFormat,
    node: &NamedOrBlankNode,
    e: &Env,
) -> Map<String, Value> {
    let body = serialize(g, f).unwrap();
    let back = parse(&body, f, None)
        .unwrap_or_else(|err| panic!("{f:?}: {err}\n{}", String::from_utf8_lossy(&body)));
    assert_eq!(
        canonical_ntriples(&back),
        canonical_ntriples(&g.graph),
        "{f:?} does not parse back to the same graph"
    );
    let back = RdfGraph::from_graph(back);
    let mut out = Map::new();
    p.parse_dataset(&back, node, &mut out, &e.cx());
    out
}

#[test]
fn every_format_parses_to_the_same_graph_and_back_to_the_dataset() {
    let d = fixture();
    let e = env(json!({}));
    let same = |a: Option<Value>, b: Option<Value>, what: &str| {
        assert_eq!(a, b, "{what}");
    };
    for v in [Version::V1, Version::V2, Version::V3] {
        let p = profile(v);
        let (g, node) = graph_of(&p, &d, &e);
        for f in FORMATS {
            let out = parse_back(&p, &g, f, &node, &e);
            let ctx = |k: &str| format!("{v:?} {f:?} {k}");
            for k in ["title", "notes", "url", "version"] {
                same(out.get(k).cloned(), d.get(k).cloned(), &ctx(k));
            }
            let tags = |x: &Map<String, Value>| {
                let mut t: Vec<String> = x["tags"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t["name"].as_str().unwrap().to_string())
                    .collect();
                t.sort();
                t
            };
            assert_eq!(tags(&out), tags(&d), "{}", ctx("tags"));
            same(
                extra(&out, "uri"),
                Some(json!(e.cx().dataset_uri(&d))),
                &ctx("uri"),
            );
            let mut keys = vec![
                "identifier",
                "version_notes",
                "frequency",
                "dcat_type",
                "issued",
                "modified",
                "language",
                "conforms_to",
                "documentation",
                "related_resource",
                "has_version",
                "is_version_of",
                "source",
                "sample",
                "access_rights",
                "provenance",
                "contact_uri",
                "contact_name",
                "contact_email",
                "publisher_uri",
                "publisher_name",
                "publisher_email",
                "publisher_url",
                "publisher_type",
                "publisher_identifier",
                "creator_uri",
                "creator_name",
                "creator_email",
                "creator_url",
                "creator_type",
                "creator_identifier",
                "temporal_start",
                "temporal_end",
                "spatial_uri",
                "spatial_text",
            ];
            if v >= Version::V2 {
                keys.extend([
                    "temporal_resolution",
                    "spatial_resolution_in_meters",
                    "is_referenced_by",
                    "applicable_legislation",
                    "hvd_category",
                    "qualified_attribution",
                    "provenance_activity",
                ]);
            }
            if v == Version::V3 {
                keys.extend([
                    "contact",
                    "temporal_coverage",
                    "spatial_coverage",
                    "qualified_relation",
                ]);
            }
            for k in keys {
                let (mut a, mut b) = (norm(&out, k), norm(&d, k));
                // lists: order-insensitive
                for x in [&mut a, &mut b] {
                    if let Some(Value::Array(items)) = x {
                        items.sort_by_key(|i| i.to_string());
                    }
                }
                same(a, b, &ctx(k));
            }
            // alternate identifiers and themes
            let mut alt: Vec<Value> = norm(&out, "alternate_identifier")
                .and_then(|v| v.as_array().cloned())
                .unwrap();
            alt.sort_by_key(|x| x.to_string());
            assert_eq!(
                alt,
                [json!("FULL-001"), json!("doi:10.1234/full")],
                "{}",
                ctx("alt")
            );
            assert_eq!(
                norm(&out, "theme").unwrap().as_array().unwrap().len(),
                2,
                "{}",
                ctx("theme")
            );
            // geometry: the WKT reads back as the GeoJSON it was made from
            for k in ["spatial", "spatial_bbox", "spatial_centroid"] {
                if k != "spatial" && v == Version::V1 {
                    continue;
                }
                same(norm(&out, k), norm(&d, k), &ctx(k));
            }

            // resources
            let want = d["resources"].as_array().unwrap();
            let got = out["resources"].as_array().unwrap();
            assert_eq!(got.len(), want.len(), "{}", ctx("resources"));
            for w in want {
                let w = w.as_object().unwrap();
                let uri = e.cx().resource_uri(w, d["id"].as_str().unwrap());
                let r = got
                    .iter()
                    .map(|r| r.as_object().unwrap())
                    .find(|r| r["uri"] == uri.as_str())
                    .unwrap_or_else(|| panic!("{} missing", ctx(&uri)));
                let mut rkeys = vec![
                    "name",
                    "description",
                    "url",
                    "download_url",
                    "format",
                    "mimetype",
                    "size",
                    "license",
                    "rights",
                    "status",
                    "issued",
                    "modified",
                    "language",
                    "documentation",
                    "conforms_to",
                ];
                if v >= Version::V2 {
                    rkeys.extend([
                        "availability",
                        "compress_format",
                        "package_format",
                        "temporal_resolution",
                        "spatial_resolution_in_meters",
                        "applicable_legislation",
                        "access_services",
                    ]);
                }
                let sha1 = w
                    .get("hash_algorithm")
                    .and_then(Value::as_str)
                    .is_some_and(|a| a.ends_with("sha1"));
                if v == Version::V3 || sha1 {
                    rkeys.extend(["hash", "hash_algorithm"]);
                } else {
                    assert!(
                        r.get("hash").is_none(),
                        "{}",
                        ctx("non-SHA-1 checksum before v3")
                    );
                }
                for k in rkeys {
                    same(norm(r, k), norm(w, k), &ctx(&format!("{} {k}", w["name"])));
                }
            }
        }
    }
}

#[test]
fn parse_undoes_the_iri_fixes() {
    let (g, node) = v3(&obj(json!({
        "id": "abc",
        "title": "T",
        "extras": [{"key": "language", "value": "[\"en\", \"yo\"]"}],
        "resources": [{"id": "r1", "package_id": "abc", "url": "http://x/f", "format": "xlsx", "mimetype": "text/csv"}]
    })));
    let mut out = Map::new();
    let e = env(json!({}));
    profile(Version::V3).parse_dataset(&g, &node, &mut out, &e.cx());
    let mut langs = norm(&out, "language").unwrap().as_array().unwrap().clone();
    langs.sort_by_key(|l| l.to_string());
    assert_eq!(langs, [json!("en"), json!("yo")]);
    let r = &out["resources"][0];
    assert_eq!(r["format"], "XLSX");
    assert_eq!(r["mimetype"], "text/csv");
    assert_eq!(r["url"], "http://x/f");
}

#[test]
fn parse_reads_foreign_graphs() {
    // A harvested-style Turtle document: literal format/media type, foaf:mbox literal,
    // ckanext-dcat's own dcat:qualifiedAttribution and locn:Geometry.
    let ttl = r#"
@prefix dcat: <http://www.w3.org/ns/dcat#> . @prefix dct: <http://purl.org/dc/terms/> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> . @prefix locn: <http://www.w3.org/ns/locn#> .
@prefix vcard: <http://www.w3.org/2006/vcard/ns#> .
<http://h.org/ds/1> a dcat:Dataset ; dct:title "Harvested" ; dct:description "D" ;
  dcat:keyword "a", "b" ; dct:language "fr" ;
  dct:publisher [ a foaf:Organization ; foaf:name "Pub" ; foaf:mbox "pub@h.org" ] ;
  dcat:contactPoint [ a vcard:Individual ; vcard:fn "Jo" ; vcard:hasEmail <mailto:jo@h.org> ] ;
  dct:spatial [ a dct:Location ; locn:Geometry "POINT (1.0000 2.0000)"^^<http://www.opengis.net/ont/geosparql#wktLiteral> ] ;
  dcat:distribution <http://h.org/ds/1/d> .
<http://h.org/ds/1/d> a dcat:Distribution ; dcat:accessURL <http://h.org/f.csv> ; dct:format "CSV" ; dcat:mediaType "text/csv" ; dcat:byteSize "10"^^<http://www.w3.org/2001/XMLSchema#decimal> .
"#;
    let g = RdfGraph::from_graph(parse(ttl.as_bytes(), RdfFormat::Turtle, None).unwrap());
    let node: NamedOrBlankNode = iri("http://h.org/ds/1").into();
    let mut out = Map::new();
    let e = env(json!({}));
    profile(Version::V3).parse_dataset(&g, &node, &mut out, &e.cx());
    assert_eq!(out["title"], "Harvested");
    assert_eq!(out["tags"].as_array().unwrap().len(), 2);
    assert_eq!(norm(&out, "language").unwrap(), json!(["fr"]));
    assert_eq!(extra(&out, "publisher_name").unwrap(), "Pub");
    assert_eq!(extra(&out, "publisher_email").unwrap(), "pub@h.org");
    assert_eq!(extra(&out, "contact_email").unwrap(), "jo@h.org");
    assert_eq!(
        norm(&out, "spatial").unwrap(),
        json!({"type": "Point", "coordinates": [1.0, 2.0]})
    );
    assert_eq!(extra(&out, "uri").unwrap(), "http://h.org/ds/1");
    let r = &out["resources"][0];
    assert_eq!(r["url"], "http://h.org/f.csv");
    assert_eq!(r["format"], "CSV");
    assert_eq!(r["mimetype"], "text/csv");
    assert_eq!(r["size"], 10);
    assert_eq!(
        term_value(&Term::from(iri("http://h.org/ds/1/d"))),
        r["uri"]
    );
}

// ------------------------------------------------------------------------------- SHACL input

/// Writes the Turtle the SHACL check validates: `DCAT_DUMP_DIR=/tmp/dcat cargo test -p
/// catalog-plugin-dcat --test profiles -- --ignored dump_for_shacl`, then
/// `validate.sh -s 3-core /tmp/dcat/dataset-v3.ttl` (and `-s 2-core … dataset-v2.ttl`,
/// `catalog-v3.ttl`, `catalog-v2.ttl`).
#[test]
#[ignore = "writes files for the external SHACL validator"]
fn dump_for_shacl() {
    let dir = std::env::var("DCAT_DUMP_DIR").unwrap_or_else(|_| "/tmp/dcat-shacl".into());
    std::fs::create_dir_all(&dir).unwrap();
    let d = fixture();
    let e = env(json!({}));
    for (v, tag) in [
        (Version::V1, "v1"),
        (Version::V2, "v2"),
        (Version::V3, "v3"),
    ] {
        let p = profile(v);
        let (g, _) = graph_of(&p, &d, &e);
        std::fs::write(
            format!("{dir}/dataset-{tag}.ttl"),
            serialize(&g, RdfFormat::Turtle).unwrap(),
        )
        .unwrap();
        let cx = e.cx();
        let cat: NamedOrBlankNode = iri(cx.catalog_uri()).into();
        let mut g = RdfGraph::new();
        p.graph_from_catalog(
            &mut g,
            &CatalogInfo {
                modified: d["metadata_modified"].as_str().map(str::to_string),
            },
            &cat,
            &cx,
        );
        for ds in [
            &d,
            &obj(
                json!({"id": "minimal", "title": "Minimal", "notes": "Only the basics.", "resources": [{"id": "r", "package_id": "minimal", "url": "http://x.org/f.csv", "format": "CSV"}]}),
            ),
        ] {
            let node: NamedOrBlankNode = iri(&cx.dataset_uri(ds)).into();
            p.graph_from_dataset(&mut g, ds, &node, &cx);
            g.add(&cat, &n("dcat:dataset"), node);
        }
        std::fs::write(
            format!("{dir}/catalog-{tag}.ttl"),
            serialize(&g, RdfFormat::Turtle).unwrap(),
        )
        .unwrap();
    }
}
