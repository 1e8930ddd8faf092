//! The reverse mapping: a DCAT(-AP) graph back into a CKAN dataset dict, as ckanext-dcat's RDF
//! parser shapes it — `title`, `notes`, `url`, `version`, `tags` and `resources` at the root,
//! everything else in `extras` (lists JSON-encoded). It undoes the IRIs the DCAT-AP profiles
//! write for plain CKAN values: EU file types → `CSV`, IANA media types → `text/csv`, language
//! authorities → `en`, labelled blank nodes → their label.
//!
//! Where a dataset has several contact points, temporal or spatial nodes, the first one goes to
//! the flat keys (`contact_*`, `temporal_*`, `spatial_*`) and the others to the scheming lists
//! (`contact`, `temporal_coverage`, `spatial_coverage`).

use crate::rdf::graph::{as_subject, n, term_value, RdfGraph};
use oxigraph::model::{NamedOrBlankNode, Term};
use serde_json::{json, Map, Value};

use super::{geo, vocab};

/// Reads the dataset at `node` into `dataset` (root fields, `extras`, `resources`).
pub fn parse_dataset(g: &RdfGraph, node: &NamedOrBlankNode, dataset: &mut Map<String, Value>) {
    let r = Reader { g };
    let mut extras = Extras::default();
    let s = node;

    if let Some(t) = r.text(s, "dct:title") {
        dataset.insert("title".into(), json!(t));
    }
    // A description equal to the title is the serializer's stand-in for missing notes.
    if let Some(t) = r
        .text(s, "dct:description")
        .filter(|t| dataset.get("title").and_then(Value::as_str) != Some(t.as_str()))
    {
        dataset.insert("notes".into(), json!(t));
    }
    if let Some(u) = r.iri_value(s, "dcat:landingPage") {
        dataset.insert("url".into(), json!(u));
    }
    if let Some(v) = r
        .text(s, "dcat:version")
        .or_else(|| r.text(s, "owl:versionInfo"))
    {
        dataset.insert("version".into(), json!(v));
    }
    // RDF values are a set: sorted, so that parsing the same graph twice gives the same dict
    // (a harvester compares them to skip unchanged records).
    let mut keywords = r.g.values(s, &n("dcat:keyword"));
    keywords.sort();
    keywords.dedup();
    let tags: Vec<Value> = keywords.into_iter().map(|k| json!({"name": k})).collect();
    if !tags.is_empty() {
        dataset.insert("tags".into(), Value::Array(tags));
    }

    if let NamedOrBlankNode::NamedNode(u) = s {
        extras.set("uri", u.as_str());
    }
    for (p, key) in [
        ("dct:identifier", "identifier"),
        ("adms:versionNotes", "version_notes"),
        ("dct:issued", "issued"),
        ("dct:modified", "modified"),
        ("dcat:temporalResolution", "temporal_resolution"),
        (
            "dcat:spatialResolutionInMeters",
            "spatial_resolution_in_meters",
        ),
    ] {
        if let Some(v) = r.text(s, p) {
            extras.set(key, &v);
        }
    }
    for (p, key) in [
        ("dct:accrualPeriodicity", "frequency"),
        ("dct:type", "dcat_type"),
        ("dct:accessRights", "access_rights"),
        ("dct:provenance", "provenance"),
    ] {
        if let Some(v) = r.node_text_of(s, p) {
            extras.set(key, &v);
        }
    }
    extras.list("language", r.languages(s));
    for (p, key) in [
        ("dcat:theme", "theme"),
        ("dct:conformsTo", "conforms_to"),
        ("foaf:page", "documentation"),
        ("dct:relation", "related_resource"),
        ("dct:hasVersion", "has_version"),
        ("dct:isVersionOf", "is_version_of"),
        ("dct:source", "source"),
        ("adms:sample", "sample"),
        ("dct:isReferencedBy", "is_referenced_by"),
        ("dcatap:applicableLegislation", "applicable_legislation"),
        ("dcatap:hvdCategory", "hvd_category"),
        ("adms:identifier", "alternate_identifier"),
    ] {
        extras.list(key, r.node_texts(s, p));
    }

    r.temporal(s, &mut extras);
    r.spatial(s, &mut extras);
    r.contacts(s, &mut extras);
    if let Some(p) = r.objects(s, "dct:publisher").first().and_then(as_subject) {
        r.flat_agent(&p, "publisher", &mut extras);
    }
    let creators: Vec<NamedOrBlankNode> = r
        .objects(s, "dct:creator")
        .iter()
        .filter_map(as_subject)
        .collect();
    if let Some(first) = creators.first() {
        r.flat_agent(first, "creator", &mut extras);
    }
    if creators.len() > 1 {
        let rest: Vec<Value> = creators[1..].iter().map(|c| r.agent_object(c)).collect();
        extras.json("creator", Value::Array(rest));
    }
    let activities: Vec<Value> = r
        .objects(s, "prov:wasGeneratedBy")
        .iter()
        .filter_map(as_subject)
        .map(|a| r.activity(&a))
        .collect();
    extras.json_list("provenance_activity", activities);
    let attributions: Vec<Value> = r
        .objects(s, "prov:qualifiedAttribution")
        .iter()
        .chain(r.objects(s, "dcat:qualifiedAttribution").iter())
        .filter_map(as_subject)
        .map(|a| r.attribution(&a))
        .collect();
    extras.json_list("qualified_attribution", attributions);
    let relations: Vec<Value> = r
        .objects(s, "dcat:qualifiedRelation")
        .iter()
        .filter_map(as_subject)
        .map(|a| r.relationship(&a))
        .collect();
    extras.json_list("qualified_relation", relations);

    let mut resources: Vec<Value> = Vec::new();
    let mut dists: Vec<NamedOrBlankNode> = r
        .objects(s, "dcat:distribution")
        .iter()
        .filter_map(as_subject)
        .collect();
    dists.sort_by_key(|d| d.to_string());
    for d in dists {
        resources.push(Value::Object(r.distribution(&d)));
    }
    if !resources.is_empty() {
        dataset.insert("resources".into(), Value::Array(resources));
    }

    // Merge with extras already in the dict (an earlier profile's), ours winning.
    let mut list: Vec<Value> = dataset
        .get("extras")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (k, v) in extras.0 {
        list.retain(|e| e.get("key").and_then(Value::as_str) != Some(k.as_str()));
        list.push(json!({"key": k, "value": v}));
    }
    if !list.is_empty() {
        dataset.insert("extras".into(), Value::Array(list));
    }
}

#[derive(Default)]
struct Extras(Vec<(String, String)>);

impl Extras {
    fn set(&mut self, key: &str, v: &str) {
        if !v.is_empty() && !self.0.iter().any(|(k, _)| k == key) {
            self.0.push((key.into(), v.into()));
        }
    }
    /// A list extra, sorted (a set of RDF values has no order of its own).
    fn list(&mut self, key: &str, mut vs: Vec<String>) {
        vs.sort();
        vs.dedup();
        if !vs.is_empty() {
            self.set(key, &Value::from(vs).to_string());
        }
    }
    fn json(&mut self, key: &str, v: Value) {
        self.set(key, &v.to_string());
    }
    fn json_list(&mut self, key: &str, mut vs: Vec<Value>) {
        vs.sort_by_cached_key(|v| v.to_string());
        if !vs.is_empty() {
            self.json(key, Value::Array(vs));
        }
    }
}

struct Reader<'a> {
    g: &'a RdfGraph,
}

fn insert(m: &mut Map<String, Value>, k: &str, v: Option<String>) {
    if let Some(v) = v.filter(|v| !v.is_empty()) {
        m.insert(k.into(), Value::String(v));
    }
}

impl Reader<'_> {
    fn objects(&self, s: &NamedOrBlankNode, p: &str) -> Vec<Term> {
        let mut os = self.g.objects(s, &n(p));
        // Blank nodes have no stable order; sort for reproducible lists.
        os.sort_by_key(|t| match t {
            Term::BlankNode(_) => (1, String::new()),
            other => (0, other.to_string()),
        });
        os
    }

    /// The first literal of `s p`, preferring an untagged one.
    fn text(&self, s: &NamedOrBlankNode, p: &str) -> Option<String> {
        let os = self.g.objects(s, &n(p));
        os.iter()
            .find(|t| matches!(t, Term::Literal(l) if l.language().is_none()))
            .or_else(|| os.first())
            .map(|t| self.term_text(t))
    }

    fn iri_value(&self, s: &NamedOrBlankNode, p: &str) -> Option<String> {
        self.g.objects(s, &n(p)).into_iter().find_map(|t| match t {
            Term::NamedNode(u) => Some(u.as_str().to_string()),
            Term::Literal(l) => Some(l.value().to_string()),
            _ => None,
        })
    }

    /// The text a node stands for: an IRI's text, a literal's value, a blank node's label.
    fn term_text(&self, t: &Term) -> String {
        match t {
            Term::BlankNode(_) => {
                let b = as_subject(t).expect("blank node");
                ["rdfs:label", "skos:prefLabel", "skos:notation", "foaf:name"]
                    .iter()
                    .find_map(|p| self.text(&b, p))
                    .unwrap_or_default()
            }
            other => term_value(other),
        }
    }

    fn node_text_of(&self, s: &NamedOrBlankNode, p: &str) -> Option<String> {
        self.objects(s, p)
            .first()
            .map(|t| self.term_text(t))
            .filter(|t| !t.is_empty())
    }

    fn node_texts(&self, s: &NamedOrBlankNode, p: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for t in self.objects(s, p) {
            let x = self.term_text(&t);
            if !x.is_empty() && !out.contains(&x) {
                out.push(x);
            }
        }
        out
    }

    fn languages(&self, s: &NamedOrBlankNode) -> Vec<String> {
        self.objects(s, "dct:language")
            .iter()
            .map(|t| match t {
                Term::NamedNode(u) => vocab::language_code(u.as_str()),
                other => self.term_text(other),
            })
            .filter(|x| !x.is_empty())
            .collect()
    }

    fn email(&self, s: &NamedOrBlankNode) -> Option<String> {
        ["vcard:hasEmail", "foaf:mbox", "vcard:email"]
            .iter()
            .find_map(|p| self.text(s, p))
            .map(|e| e.strip_prefix("mailto:").unwrap_or(&e).to_string())
    }

    fn uri_of(s: &NamedOrBlankNode) -> Option<String> {
        match s {
            NamedOrBlankNode::NamedNode(u) => Some(u.as_str().to_string()),
            _ => None,
        }
    }

    fn period(&self, p: &NamedOrBlankNode) -> (Option<String>, Option<String>) {
        let start = ["dcat:startDate", "schema:startDate"]
            .iter()
            .find_map(|x| self.text(p, x))
            .or_else(|| self.time_instant(p, "time:hasBeginning"));
        let end = ["dcat:endDate", "schema:endDate"]
            .iter()
            .find_map(|x| self.text(p, x))
            .or_else(|| self.time_instant(p, "time:hasEnd"));
        (start, end)
    }

    fn time_instant(&self, p: &NamedOrBlankNode, prop: &str) -> Option<String> {
        let i = self.objects(p, prop).first().and_then(as_subject)?;
        [
            "time:inXSDDateTimeStamp",
            "time:inXSDDateTime",
            "time:inXSDDate",
        ]
        .iter()
        .find_map(|x| self.text(&i, x))
    }

    fn temporal(&self, s: &NamedOrBlankNode, extras: &mut Extras) {
        let mut periods: Vec<(Option<String>, Option<String>)> = self
            .objects(s, "dct:temporal")
            .iter()
            .filter_map(as_subject)
            .map(|p| self.period(&p))
            .filter(|(a, b)| a.is_some() || b.is_some())
            .collect();
        periods.sort();
        let mut it = periods.into_iter();
        if let Some((start, end)) = it.next() {
            if let Some(x) = start {
                extras.set("temporal_start", &x);
            }
            if let Some(x) = end {
                extras.set("temporal_end", &x);
            }
        }
        let rest: Vec<Value> = it
            .map(|(a, b)| {
                let mut m = Map::new();
                insert(&mut m, "start", a);
                insert(&mut m, "end", b);
                Value::Object(m)
            })
            .collect();
        extras.json_list("temporal_coverage", rest);
    }

    /// GeoJSON text of the first geometry literal of `s p` (GeoJSON kept, WKT converted).
    fn geometry(&self, s: &NamedOrBlankNode, p: &str) -> Option<String> {
        let os = self.g.objects(s, &n(p));
        let lits: Vec<_> = os
            .iter()
            .filter_map(|t| match t {
                Term::Literal(l) => Some(l),
                _ => None,
            })
            .collect();
        if let Some(gj) = lits
            .iter()
            .find(|l| l.datatype().as_str() == geo::GEOJSON_LITERAL || l.value().starts_with('{'))
        {
            return Some(gj.value().to_string());
        }
        lits.iter()
            .find_map(|l| geo::wkt_to_geojson(l.value()))
            .map(|v| v.to_string())
    }

    fn spatial(&self, s: &NamedOrBlankNode, extras: &mut Extras) {
        struct Loc {
            uri: Option<String>,
            text: Option<String>,
            geom: Option<String>,
            bbox: Option<String>,
            centroid: Option<String>,
        }
        let mut locs: Vec<Loc> = self
            .objects(s, "dct:spatial")
            .iter()
            .filter_map(as_subject)
            .map(|l| Loc {
                uri: Self::uri_of(&l),
                text: self
                    .text(&l, "skos:prefLabel")
                    .or_else(|| self.text(&l, "rdfs:label")),
                geom: self
                    .geometry(&l, "locn:geometry")
                    .or_else(|| self.geometry(&l, "locn:Geometry")),
                bbox: self.geometry(&l, "dcat:bbox"),
                centroid: self.geometry(&l, "dcat:centroid"),
            })
            .collect();
        // The flat keys take the richest node (bbox/centroid only exist there).
        locs.sort_by_key(|l| {
            (
                l.bbox.is_none() && l.centroid.is_none(),
                l.uri.is_none(),
                l.uri.clone(),
                l.text.clone(),
            )
        });
        let mut it = locs.into_iter();
        if let Some(l) = it.next() {
            for (k, v) in [
                ("spatial_uri", l.uri),
                ("spatial_text", l.text),
                ("spatial", l.geom),
                ("spatial_bbox", l.bbox),
                ("spatial_centroid", l.centroid),
            ] {
                if let Some(v) = v {
                    extras.set(k, &v);
                }
            }
        }
        let rest: Vec<Value> = it
            .map(|l| {
                let mut m = Map::new();
                insert(&mut m, "uri", l.uri);
                insert(&mut m, "text", l.text);
                for (k, v) in [("geom", l.geom), ("bbox", l.bbox), ("centroid", l.centroid)] {
                    if let Some(v) = v {
                        m.insert(
                            k.into(),
                            serde_json::from_str(&v).unwrap_or(Value::String(v)),
                        );
                    }
                }
                Value::Object(m)
            })
            .collect();
        extras.json_list("spatial_coverage", rest);
    }

    fn contact_object(&self, c: &NamedOrBlankNode) -> Map<String, Value> {
        let mut m = Map::new();
        insert(&mut m, "uri", Self::uri_of(c));
        insert(&mut m, "name", self.text(c, "vcard:fn"));
        insert(&mut m, "email", self.email(c));
        insert(&mut m, "identifier", self.text(c, "vcard:hasUID"));
        insert(&mut m, "url", self.iri_value(c, "vcard:hasURL"));
        m
    }

    fn contacts(&self, s: &NamedOrBlankNode, extras: &mut Extras) {
        let mut nodes: Vec<NamedOrBlankNode> = self
            .objects(s, "dcat:contactPoint")
            .iter()
            .filter_map(as_subject)
            .collect();
        // The flat contact is the one the profiles type vcard:Organization.
        nodes.sort_by_key(|c| !self.g.has_type(c, "vcard:Organization"));
        let mut it = nodes.iter();
        if let Some(first) = it.next() {
            let m = self.contact_object(first);
            for (k, key) in [
                ("uri", "contact_uri"),
                ("name", "contact_name"),
                ("email", "contact_email"),
            ] {
                if let Some(v) = m.get(k).and_then(Value::as_str) {
                    extras.set(key, v);
                }
            }
        }
        let rest: Vec<Value> = it.map(|c| Value::Object(self.contact_object(c))).collect();
        extras.json_list("contact", rest);
    }

    fn agent_object(&self, a: &NamedOrBlankNode) -> Value {
        let mut m = Map::new();
        insert(&mut m, "uri", Self::uri_of(a));
        insert(&mut m, "name", self.text(a, "foaf:name"));
        insert(&mut m, "email", self.email(a));
        insert(&mut m, "url", self.iri_value(a, "foaf:homepage"));
        insert(&mut m, "type", self.node_text_of(a, "dct:type"));
        insert(&mut m, "identifier", self.text(a, "dct:identifier"));
        Value::Object(m)
    }

    fn flat_agent(&self, a: &NamedOrBlankNode, prefix: &str, extras: &mut Extras) {
        if let Value::Object(m) = self.agent_object(a) {
            for (k, v) in m {
                if let Some(v) = v.as_str() {
                    extras.set(&format!("{prefix}_{k}"), v);
                }
            }
        }
    }

    fn activity(&self, a: &NamedOrBlankNode) -> Value {
        let mut m = Map::new();
        insert(&mut m, "uri", Self::uri_of(a));
        insert(&mut m, "label", self.text(a, "rdfs:label"));
        insert(&mut m, "seeAlso", self.iri_value(a, "rdfs:seeAlso"));
        insert(&mut m, "dct_type", self.node_text_of(a, "dct:type"));
        insert(&mut m, "startedAtTime", self.text(a, "prov:startedAtTime"));
        let agents: Vec<Value> = self
            .objects(a, "prov:wasAssociatedWith")
            .iter()
            .filter_map(as_subject)
            .map(|x| self.agent_object(&x))
            .collect();
        if !agents.is_empty() {
            m.insert("wasAssociatedWith".into(), Value::Array(agents));
        }
        Value::Object(m)
    }

    fn attribution(&self, a: &NamedOrBlankNode) -> Value {
        let mut m = Map::new();
        let agents: Vec<Value> = self
            .objects(a, "prov:agent")
            .iter()
            .chain(self.objects(a, "dcat:agent").iter())
            .filter_map(as_subject)
            .map(|x| self.agent_object(&x))
            .collect();
        if !agents.is_empty() {
            m.insert("agent".into(), Value::Array(agents));
        }
        insert(&mut m, "role", self.node_text_of(a, "dcat:hadRole"));
        Value::Object(m)
    }

    fn relationship(&self, a: &NamedOrBlankNode) -> Value {
        let mut m = Map::new();
        insert(&mut m, "uri", Self::uri_of(a));
        insert(&mut m, "relation", self.node_text_of(a, "dct:relation"));
        insert(&mut m, "role", self.node_text_of(a, "dcat:hadRole"));
        Value::Object(m)
    }

    fn access_service(&self, a: &NamedOrBlankNode) -> Value {
        let mut m = Map::new();
        insert(&mut m, "uri", Self::uri_of(a));
        insert(&mut m, "title", self.text(a, "dct:title"));
        insert(&mut m, "description", self.text(a, "dct:description"));
        insert(
            &mut m,
            "availability",
            self.node_text_of(a, "dcatap:availability"),
        );
        insert(&mut m, "license", self.node_text_of(a, "dct:license"));
        insert(
            &mut m,
            "access_rights",
            self.node_text_of(a, "dct:accessRights"),
        );
        insert(&mut m, "modified", self.text(a, "dct:modified"));
        for (p, k) in [
            ("dcat:endpointURL", "endpoint_url"),
            ("dcat:endpointDescription", "endpoint_description"),
            ("dcat:servesDataset", "serves_dataset"),
        ] {
            let vs = self.node_texts(a, p);
            if !vs.is_empty() {
                m.insert(k.into(), Value::from(vs));
            }
        }
        Value::Object(m)
    }

    fn distribution(&self, d: &NamedOrBlankNode) -> Map<String, Value> {
        let mut m = Map::new();
        insert(&mut m, "name", self.text(d, "dct:title"));
        insert(&mut m, "description", self.text(d, "dct:description"));
        let access = self.iri_value(d, "dcat:accessURL");
        let download = self.iri_value(d, "dcat:downloadURL");
        insert(&mut m, "url", access.clone().or_else(|| download.clone()));
        insert(&mut m, "access_url", access);
        insert(&mut m, "download_url", download);
        let format = self.objects(d, "dct:format").first().map(|t| match t {
            Term::NamedNode(u) => vocab::format_name(u.as_str()),
            other => self.term_text(other),
        });
        insert(&mut m, "format", format);
        let media = self.objects(d, "dcat:mediaType").first().map(|t| match t {
            Term::NamedNode(u) => vocab::media_type_name(u.as_str()),
            other => self.term_text(other),
        });
        // A resource's mimetype must be a media type or an IRI (issue 46): another value (a
        // label such as "CSV" given as dcat:mediaType, text with a line break) is left out; the
        // distribution keeps its format.
        let media = media.filter(|m| catalog_framework::validators::is_mimetype_value(m));
        insert(&mut m, "mimetype", media);
        for (p, k) in [
            ("dct:issued", "issued"),
            ("dct:modified", "modified"),
            ("dcat:temporalResolution", "temporal_resolution"),
            (
                "dcat:spatialResolutionInMeters",
                "spatial_resolution_in_meters",
            ),
        ] {
            insert(&mut m, k, self.text(d, p));
        }
        for (p, k) in [
            ("dct:license", "license"),
            ("dct:rights", "rights"),
            ("adms:status", "status"),
            ("dcatap:availability", "availability"),
        ] {
            insert(&mut m, k, self.node_text_of(d, p));
        }
        for (p, k) in [
            ("dcat:compressFormat", "compress_format"),
            ("dcat:packageFormat", "package_format"),
        ] {
            let v = self.objects(d, p).first().map(|t| match t {
                Term::NamedNode(u) => vocab::media_type_name(u.as_str()),
                other => self.term_text(other),
            });
            insert(&mut m, k, v);
        }
        if let Some(size) = self.text(d, "dcat:byteSize") {
            let v = size
                .parse::<u64>()
                .map(Value::from)
                .or_else(|_| size.parse::<f64>().map(Value::from))
                .unwrap_or(Value::String(size));
            m.insert("size".into(), v);
        }
        if let Some(c) = self
            .objects(d, "spdx:checksum")
            .first()
            .and_then(as_subject)
        {
            insert(&mut m, "hash", self.text(&c, "spdx:checksumValue"));
            insert(
                &mut m,
                "hash_algorithm",
                self.node_text_of(&c, "spdx:algorithm"),
            );
        }
        let mut langs = self.languages(d);
        langs.sort();
        langs.dedup();
        if !langs.is_empty() {
            m.insert("language".into(), Value::from(langs).to_string().into());
        }
        for (p, k) in [
            ("foaf:page", "documentation"),
            ("dct:conformsTo", "conforms_to"),
            ("dcatap:applicableLegislation", "applicable_legislation"),
        ] {
            let mut vs = self.node_texts(d, p);
            vs.sort();
            vs.dedup();
            if !vs.is_empty() {
                m.insert(k.into(), Value::from(vs).to_string().into());
            }
        }
        let services: Vec<Value> = self
            .objects(d, "dcat:accessService")
            .iter()
            .filter_map(as_subject)
            .map(|s| self.access_service(&s))
            .collect();
        if !services.is_empty() {
            m.insert(
                "access_services".into(),
                Value::Array(services).to_string().into(),
            );
        }
        insert(&mut m, "uri", Self::uri_of(d));
        m
    }
}
