//! The DCAT-AP profiles `euro_dcat_ap` (1.1), `euro_dcat_ap_2` (2.1) and `euro_dcat_ap_3` (3.0):
//! one mapping parametrised by [`Version`] (spec/dcat.md §6, §7). Where ckanext-dcat's output
//! breaks the official SHACL shapes we write the DCAT-AP form instead; each such place is listed
//! in `docs/DCAT-DEVIATIONS.md`.

use crate::prelude::*;
use crate::rdf::graph::{
    absolute_iri, bnode, date_literal, field, field_list, field_objects, field_str, iri, is_http,
    lang_lit, list_values, lit, mailto, n, typed, value_str,
};
use catalog_framework::prelude::*;
use oxigraph::model::{NamedNode, NamedOrBlankNode, Term};

use super::{geo, vocab};

/// The DCAT-AP version a profile writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    V1,
    V2,
    V3,
}

/// `euro_dcat_ap`, `euro_dcat_ap_2` or `euro_dcat_ap_3`.
#[derive(Debug, Clone, Copy)]
pub struct EuroDcatAp {
    pub version: Version,
}

impl DcatProfile for EuroDcatAp {
    fn graph_from_dataset(
        &self,
        g: &mut RdfGraph,
        dataset: &Map<String, Value>,
        node: &NamedOrBlankNode,
        cx: &DcatContext<'_>,
    ) {
        Writer {
            g,
            cx,
            v: self.version,
        }
        .dataset(dataset, node);
    }

    fn graph_from_catalog(
        &self,
        g: &mut RdfGraph,
        catalog: &CatalogInfo,
        node: &NamedOrBlankNode,
        cx: &DcatContext<'_>,
    ) {
        Writer {
            g,
            cx,
            v: self.version,
        }
        .catalog(catalog, node);
    }

    fn parse_dataset(
        &self,
        g: &RdfGraph,
        node: &NamedOrBlankNode,
        dataset: &mut Map<String, Value>,
        _cx: &DcatContext<'_>,
    ) {
        super::parse::parse_dataset(g, node, dataset);
    }
}

struct Writer<'g, 'c> {
    g: &'g mut RdfGraph,
    cx: &'c DcatContext<'c>,
    v: Version,
}

/// Literals of a text field: one per language of `<key>_translated` when that is a dict, else
/// the plain value.
fn texts(d: &Map<String, Value>, key: &str) -> Vec<Term> {
    if let Some(Value::Object(tr)) = d.get(&format!("{key}_translated")) {
        let out: Vec<Term> = tr
            .iter()
            .filter_map(|(lang, v)| value_str(v).map(|s| lang_lit(&s, lang)))
            .collect();
        if !out.is_empty() {
            return out;
        }
    }
    match field(d, key) {
        Some(Value::Object(tr)) => tr
            .iter()
            .filter_map(|(lang, v)| value_str(v).map(|s| lang_lit(&s, lang)))
            .collect(),
        Some(v) => value_str(v).map(|s| lit(&s)).into_iter().collect(),
        None => Vec::new(),
    }
}

impl Writer<'_, '_> {
    fn add(&mut self, s: &NamedOrBlankNode, p: &str, o: impl Into<Term>) {
        self.g.add(s, &n(p), o);
    }

    fn add_all(&mut self, s: &NamedOrBlankNode, p: &str, os: Vec<Term>) {
        for o in os {
            self.add(s, p, o);
        }
    }

    /// An IRI for http(s) values (typed `class` when given), else a blank node typed `class`
    /// carrying the text as `label` — DCAT-AP wants a node for these properties, not a literal.
    fn node_for(&mut self, value: &str, class: Option<&str>, label: &str) -> Term {
        if is_http(value) {
            let o = iri(value);
            if let Some(c) = class {
                self.g.add_type(&o.clone().into(), c);
            }
            o.into()
        } else {
            let b = bnode();
            if let Some(c) = class {
                self.g.add_type(&b, c);
            }
            self.add(&b, label, lit(value.trim()));
            b.into()
        }
    }

    /// A `skos:Concept`: the IRI, or a blank concept with a `skos:prefLabel`.
    fn concept(&mut self, value: &str) -> Term {
        if is_http(value) {
            iri(value).into()
        } else {
            self.node_for(value, Some("skos:Concept"), "skos:prefLabel")
        }
    }

    fn resource_ref(&mut self, value: &str, class: Option<&str>) -> Term {
        self.node_for(value, class, "rdfs:label")
    }

    fn dates(&mut self, s: &NamedOrBlankNode, p: &str, d: &Map<String, Value>, keys: &[&str]) {
        if let Some(v) = field_str(d, keys) {
            self.add(s, p, date_literal(&v));
        }
    }

    /// A language: its authority IRI for a code, the IRI itself for http(s), else a blank
    /// `dct:LinguisticSystem` with the text as label.
    fn language(&mut self, value: &str) -> Term {
        let value = value.trim();
        let iri_text = if is_http(value) {
            Some(value.to_string())
        } else {
            vocab::language_iri(value)
        };
        match iri_text {
            Some(i) => {
                let node = iri(&i);
                self.g
                    .add_type(&node.clone().into(), "dct:LinguisticSystem");
                node.into()
            }
            None => self.resource_ref(value, Some("dct:LinguisticSystem")),
        }
    }

    /// A statement (`access_rights`, `provenance`, `rights`): the IRI, or one blank node of
    /// `class` with a label per language.
    fn statement(&mut self, s: &NamedOrBlankNode, p: &str, v: Option<&Value>, class: &str) {
        let labels: Vec<Term> = match v {
            Some(Value::String(t)) if is_http(t) => {
                let o = iri(t);
                self.g.add_type(&o.clone().into(), class);
                self.add(s, p, o);
                return;
            }
            Some(Value::String(t)) => match serde_json::from_str::<Value>(t) {
                Ok(Value::Object(tr)) => tr
                    .iter()
                    .filter_map(|(l, v)| value_str(v).map(|x| lang_lit(&x, l)))
                    .collect(),
                _ => vec![lit(t.trim())],
            },
            Some(Value::Object(tr)) => tr
                .iter()
                .filter_map(|(l, v)| value_str(v).map(|x| lang_lit(&x, l)))
                .collect(),
            Some(other) => value_str(other).map(|x| lit(&x)).into_iter().collect(),
            None => return,
        };
        if labels.is_empty() {
            return;
        }
        let b = bnode();
        self.g.add_type(&b, class);
        self.add_all(&b, "rdfs:label", labels);
        self.add(s, p, b);
    }

    // ------------------------------------------------------------------ catalog (§6)

    fn catalog(&mut self, catalog: &CatalogInfo, node: &NamedOrBlankNode) {
        let config = self.cx.config;
        let settings = self.cx.settings;
        self.g.add_type(node, "dcat:Catalog");
        self.add(node, "dct:title", lit(&self.cx.site_title));
        self.add(node, "dct:description", lit(&settings.catalog_description));
        let site_url = config.catalog.site_url.trim();
        if let Some(home) = absolute_iri(site_url) {
            self.g.add_type(&home.clone().into(), "foaf:Document");
            self.add(node, "foaf:homepage", home);
        }
        for l in settings
            .catalog_language
            .split([' ', ','])
            .filter(|l| !l.is_empty())
        {
            let o = self.language(l);
            self.add(node, "dct:language", o);
        }
        if let Some(m) = catalog.modified.as_deref().filter(|m| !m.is_empty()) {
            self.add(node, "dct:modified", date_literal(m));
        }
        let p = &settings.catalog_publisher;
        let agent: NamedOrBlankNode = match p.uri.as_deref().and_then(absolute_iri) {
            Some(u) => u.into(),
            None => bnode(),
        };
        self.g.add_type(&agent, "foaf:Agent");
        let name = if p.name.trim().is_empty() {
            self.cx.site_title.clone()
        } else {
            p.name.clone()
        };
        self.add(&agent, "foaf:name", lit(&name));
        if let Some(e) = p.email.as_deref().filter(|e| !e.trim().is_empty()) {
            self.add(&agent, "foaf:mbox", mailto(e));
        }
        if let Some(u) = p.url.as_deref().and_then(absolute_iri) {
            self.g.add_type(&u.clone().into(), "foaf:Document");
            self.add(&agent, "foaf:homepage", u);
        }
        if let Some(t) = p.type_uri.as_deref().filter(|t| !t.trim().is_empty()) {
            let o = self.concept(t);
            self.add(&agent, "dct:type", o);
        }
        self.add(node, "dct:publisher", agent);
    }

    // ------------------------------------------------------------------ dataset (§7.3)

    fn dataset(&mut self, d: &Map<String, Value>, ds: &NamedOrBlankNode) {
        let v = self.v;
        let is_series = d.get("type").and_then(Value::as_str) == Some("dataset_series");
        self.g.add_type(
            ds,
            if v == Version::V3 && is_series {
                "dcat:DatasetSeries"
            } else {
                "dcat:Dataset"
            },
        );
        let title = texts(d, "title");
        self.add_all(ds, "dct:title", title.clone());
        // DCAT-AP requires a description; a dataset without notes gets its title (ckanext-dcat
        // writes none, which fails the shapes). `parse_dataset` leaves such notes empty.
        let notes = texts(d, "notes");
        let notes = if notes.is_empty() { title } else { notes };
        self.add_all(ds, "dct:description", notes);
        if let Some(u) = field_str(d, &["url"]).as_deref().and_then(absolute_iri) {
            self.g.add_type(&u.clone().into(), "foaf:Document");
            self.add(ds, "dcat:landingPage", u);
        }
        if let Some(id) = field_str(d, &["identifier", "guid", "id"]) {
            self.add(ds, "dct:identifier", lit(id.trim()));
        }
        if let Some(ver) = field_str(d, &["version", "dcat_version"]) {
            let p = if v == Version::V3 {
                "dcat:version"
            } else {
                "owl:versionInfo"
            };
            self.add(ds, p, lit(&ver));
        }
        let t = texts(d, "version_notes");
        self.add_all(ds, "adms:versionNotes", t);
        if let Some(f) = field_str(d, &["frequency"]) {
            let o = self.node_for(&f, Some("dct:Frequency"), "rdfs:label");
            self.add(ds, "dct:accrualPeriodicity", o);
        }
        if let Some(t) = field_str(d, &["dcat_type"]) {
            let o = self.concept(&t);
            self.add(ds, "dct:type", o);
        }
        self.keywords(d, ds);
        self.dates(ds, "dct:issued", d, &["issued", "metadata_created"]);
        self.dates(ds, "dct:modified", d, &["modified", "metadata_modified"]);
        for l in field_list(d, &["language"]) {
            let o = self.language(&l);
            self.add(ds, "dct:language", o);
        }
        for th in field_list(d, &["theme"]) {
            if let Some(i) = vocab::theme_iri(&th) {
                self.add(ds, "dcat:theme", iri(&i));
            }
        }
        for c in field_list(d, &["conforms_to"]) {
            let o = self.resource_ref(&c, Some("dct:Standard"));
            self.add(ds, "dct:conformsTo", o);
        }
        for p in field_list(d, &["documentation"]) {
            let o = self.resource_ref(&p, Some("foaf:Document"));
            self.add(ds, "foaf:page", o);
        }
        for r in field_list(d, &["related_resource"]) {
            let o = self.resource_ref(&r, Some("rdfs:Resource"));
            self.add(ds, "dct:relation", o);
        }
        for h in field_list(d, &["has_version"]) {
            let o = self.resource_ref(&h, None);
            self.add(ds, "dct:hasVersion", o.clone());
            if v == Version::V3 {
                self.add(ds, "dcat:hasVersion", o);
            }
        }
        for (key, p) in [
            ("is_version_of", "dct:isVersionOf"),
            ("source", "dct:source"),
            ("sample", "adms:sample"),
        ] {
            for x in field_list(d, &[key]) {
                let o = self.resource_ref(&x, None);
                self.add(ds, p, o);
            }
        }
        for a in field_list(d, &["alternate_identifier"]) {
            let o: Term = if v != Version::V3 && is_http(&a) {
                let o = iri(&a);
                self.g.add_type(&o.clone().into(), "adms:Identifier");
                o.into()
            } else {
                let b = bnode();
                self.g.add_type(&b, "adms:Identifier");
                self.add(&b, "skos:notation", lit(a.trim()));
                b.into()
            };
            self.add(ds, "adms:identifier", o);
        }
        self.statement(
            ds,
            "dct:accessRights",
            field(d, "access_rights"),
            "dct:RightsStatement",
        );
        self.statement(
            ds,
            "dct:provenance",
            field(d, "provenance"),
            "dct:ProvenanceStatement",
        );
        self.contacts(d, ds);
        self.agents(d, ds);
        self.temporal(d, ds);
        self.spatial(d, ds);

        if v >= Version::V2 {
            if let Some(r) = field_str(d, &["temporal_resolution"]) {
                self.add(
                    ds,
                    "dcat:temporalResolution",
                    typed(r.trim(), "xsd:duration"),
                );
            }
            if let Some(r) = field_list(d, &["spatial_resolution_in_meters"]).first() {
                self.add(ds, "dcat:spatialResolutionInMeters", decimal(r));
            }
            for x in field_list(d, &["is_referenced_by"]) {
                let o = self.resource_ref(&x, Some("rdfs:Resource"));
                self.add(ds, "dct:isReferencedBy", o);
            }
            self.legislation(d, ds);
            for h in field_list(d, &["hvd_category"]) {
                let o = self.concept(&h);
                self.add(ds, "dcatap:hvdCategory", o);
            }
            for act in field_objects(d, "provenance_activity") {
                self.activity(&act, ds);
            }
            for att in field_objects(d, "qualified_attribution") {
                self.attribution(&att, ds);
            }
        }
        if v == Version::V3 {
            for rel in field_objects(d, "qualified_relation") {
                self.relationship(&rel, ds);
            }
        }

        let dataset_id = d.get("id").and_then(Value::as_str).unwrap_or_default();
        let landing = field_str(d, &["url"]);
        if let Some(rs) = d.get("resources").and_then(Value::as_array) {
            for r in rs.iter().filter_map(Value::as_object) {
                let dist: NamedOrBlankNode = iri(&self.cx.resource_uri(r, dataset_id)).into();
                self.add(ds, "dcat:distribution", dist.clone());
                self.distribution(d, r, &dist, landing.as_deref());
            }
        }
    }

    fn keywords(&mut self, d: &Map<String, Value>, ds: &NamedOrBlankNode) {
        if let Some(Value::Object(tr)) = d.get("tags_translated") {
            for (lang, tags) in tr {
                for t in list_values(tags) {
                    self.add(ds, "dcat:keyword", lang_lit(&t, lang));
                }
            }
            return;
        }
        if let Some(tags) = d.get("tags").and_then(Value::as_array) {
            for t in tags {
                let name = match t {
                    Value::Object(o) => o.get("name").and_then(value_str),
                    other => value_str(other),
                };
                if let Some(name) = name {
                    self.add(ds, "dcat:keyword", lit(&name));
                }
            }
        }
    }

    fn legislation(&mut self, d: &Map<String, Value>, s: &NamedOrBlankNode) {
        for l in field_list(d, &["applicable_legislation"]) {
            // dcatap:applicableLegislation must be an IRI: text that is not one is left out.
            if let Some(o) = absolute_iri(&l).filter(|_| is_http(&l)) {
                self.g.add_type(&o.clone().into(), "eli:LegalResource");
                self.add(s, "dcatap:applicableLegislation", o);
            }
        }
    }

    // ------------------------------------------------------------------ contact (§7.4)

    fn contacts(&mut self, d: &Map<String, Value>, ds: &NamedOrBlankNode) {
        let keys = [
            "contact_uri",
            "contact_name",
            "contact_email",
            "maintainer",
            "maintainer_email",
            "author",
            "author_email",
        ];
        if keys.iter().any(|k| field_str(d, &[k]).is_some()) {
            let c: NamedOrBlankNode = match field_str(d, &["contact_uri"])
                .as_deref()
                .and_then(absolute_iri)
            {
                Some(u) => u.into(),
                None => bnode(),
            };
            self.g.add_type(&c, "vcard:Organization");
            self.g.add_type(&c, "vcard:Kind");
            if let Some(name) = field_str(d, &["contact_name", "maintainer", "author"]) {
                self.add(&c, "vcard:fn", lit(&name));
            }
            if let Some(e) = field_str(d, &["contact_email", "maintainer_email", "author_email"]) {
                self.add(&c, "vcard:hasEmail", mailto(&e));
            }
            self.add(ds, "dcat:contactPoint", c);
        }
        if self.v == Version::V3 {
            for item in field_objects(d, "contact") {
                let c = self.contact_object(&item);
                self.add(ds, "dcat:contactPoint", c);
            }
        }
    }

    fn contact_object(&mut self, item: &Map<String, Value>) -> NamedOrBlankNode {
        let c: NamedOrBlankNode = match field_str(item, &["uri"]).as_deref().and_then(absolute_iri)
        {
            Some(u) => u.into(),
            None => bnode(),
        };
        self.g.add_type(&c, "vcard:Kind");
        let names = texts(item, "name");
        self.add_all(&c, "vcard:fn", names);
        if let Some(e) = field_str(item, &["email"]) {
            self.add(&c, "vcard:hasEmail", mailto(&e));
        }
        if let Some(uid) = field_str(item, &["identifier"]) {
            self.add(&c, "vcard:hasUID", lit(uid.trim()));
        }
        if let Some(u) = field_str(item, &["url"]).as_deref().and_then(absolute_iri) {
            self.add(&c, "vcard:hasURL", u);
        }
        c
    }

    // ------------------------------------------------------------------ agents (§7.5)

    fn agents(&mut self, d: &Map<String, Value>, ds: &NamedOrBlankNode) {
        // Publisher: scheming list (v3, first item: dct:publisher is max 1), else the flat
        // publisher_* keys, else the organization.
        let scheming = if self.v == Version::V3 {
            field_objects(d, "publisher")
        } else {
            Vec::new()
        };
        if let Some(p) = scheming.first() {
            let a = self.agent_object(p);
            self.add(ds, "dct:publisher", a);
        } else if let Some(a) = self.flat_agent(d, "publisher") {
            self.add(ds, "dct:publisher", a);
        } else if let (Some(org), Some(uri)) = (
            d.get("organization").and_then(Value::as_object),
            self.cx.organization_uri(d),
        ) {
            // `foaf:Agent` only, as ckanext-dcat types it (and as the flat `publisher_*` keys a
            // harvester reads it back into are written), so the graph survives a round trip.
            let a: NamedOrBlankNode = iri(&uri).into();
            self.g.add_type(&a, "foaf:Agent");
            if let Some(name) = field_str(org, &["title", "name"]) {
                self.add(&a, "foaf:name", lit(&name));
            }
            if let Some(e) = field_str(org, &["email"]) {
                self.add(&a, "foaf:mbox", mailto(&e));
            }
            if let Some(u) = field_str(org, &["url"]).as_deref().and_then(absolute_iri) {
                self.g.add_type(&u.clone().into(), "foaf:Document");
                self.add(&a, "foaf:homepage", u);
            }
            if let Some(t) = field_str(org, &["dcat_type"]) {
                let o = self.concept(&t);
                self.add(&a, "dct:type", o);
            }
            if let Some(i) = field_str(org, &["identifier"]) {
                self.add(&a, "dct:identifier", lit(i.trim()));
            }
            self.add(ds, "dct:publisher", a);
        }

        let scheming = if self.v == Version::V3 {
            field_objects(d, "creator")
        } else {
            Vec::new()
        };
        if !scheming.is_empty() {
            for c in &scheming {
                let a = self.agent_object(c);
                self.add(ds, "dct:creator", a);
            }
        } else if let Some(a) = self.flat_agent(d, "creator") {
            self.add(ds, "dct:creator", a);
        }
    }

    /// An agent from the flat `<prefix>_uri`, `_name`, `_email`, `_url`, `_type`, `_identifier`.
    fn flat_agent(&mut self, d: &Map<String, Value>, prefix: &str) -> Option<NamedOrBlankNode> {
        let get = |k: &str| field_str(d, &[&format!("{prefix}_{k}")]);
        let uri = get("uri");
        let name = get("name");
        if uri.is_none() && name.is_none() {
            return None;
        }
        let a: NamedOrBlankNode = match uri.as_deref().and_then(absolute_iri) {
            Some(u) => u.into(),
            None => bnode(),
        };
        self.g.add_type(&a, "foaf:Agent");
        if let Some(name) = name {
            self.add(&a, "foaf:name", lit(&name));
        }
        if let Some(e) = get("email") {
            self.add(&a, "foaf:mbox", mailto(&e));
        }
        if let Some(u) = get("url").as_deref().and_then(absolute_iri) {
            self.g.add_type(&u.clone().into(), "foaf:Document");
            self.add(&a, "foaf:homepage", u);
        }
        if let Some(t) = get("type") {
            let o = self.concept(&t);
            self.add(&a, "dct:type", o);
        }
        if let Some(i) = get("identifier") {
            self.add(&a, "dct:identifier", lit(i.trim()));
        }
        Some(a)
    }

    /// An agent from a scheming object (`uri`, `name`/`name_translated`, `email`, `url`, `type`,
    /// `identifier`).
    fn agent_object(&mut self, o: &Map<String, Value>) -> NamedOrBlankNode {
        let a: NamedOrBlankNode = match field_str(o, &["uri"]).as_deref().and_then(absolute_iri) {
            Some(u) => u.into(),
            None => bnode(),
        };
        self.g.add_type(&a, "foaf:Agent");
        let mut names = texts(o, "name");
        if o.get("name_translated").is_some() {
            if let Some(plain) = field_str(o, &["name"]) {
                if !names.iter().any(|t| match t {
                    Term::Literal(l) => l.value() == plain,
                    _ => false,
                }) {
                    names.push(lit(&plain));
                }
            }
        }
        self.add_all(&a, "foaf:name", names);
        if let Some(e) = field_str(o, &["email"]) {
            self.add(&a, "vcard:hasEmail", mailto(&e));
        }
        if let Some(u) = field_str(o, &["url", "homepage"])
            .as_deref()
            .and_then(absolute_iri)
        {
            self.g.add_type(&u.clone().into(), "foaf:Document");
            self.add(&a, "foaf:homepage", u);
        }
        if let Some(t) = field_str(o, &["type"]) {
            let c = self.concept(&t);
            self.add(&a, "dct:type", c);
        }
        if let Some(i) = field_str(o, &["identifier"]) {
            self.add(&a, "dct:identifier", lit(i.trim()));
        }
        a
    }

    // ------------------------------------------------------------------ time and space

    fn period(&mut self, start: Option<&str>, end: Option<&str>) -> NamedOrBlankNode {
        let b = bnode();
        self.g.add_type(&b, "dct:PeriodOfTime");
        let (sp, ep) = if self.v == Version::V1 {
            ("schema:startDate", "schema:endDate")
        } else {
            ("dcat:startDate", "dcat:endDate")
        };
        if let Some(s) = start {
            self.add(&b, sp, date_literal(s));
        }
        if let Some(e) = end {
            self.add(&b, ep, date_literal(e));
        }
        b
    }

    fn temporal(&mut self, d: &Map<String, Value>, ds: &NamedOrBlankNode) {
        let start = field_str(d, &["temporal_start"]);
        let end = field_str(d, &["temporal_end"]);
        if start.is_some() || end.is_some() {
            let p = self.period(start.as_deref(), end.as_deref());
            self.add(ds, "dct:temporal", p);
        }
        if self.v == Version::V3 {
            for item in field_objects(d, "temporal_coverage") {
                let s = field_str(&item, &["start"]);
                let e = field_str(&item, &["end"]);
                if s.is_some() || e.is_some() {
                    let p = self.period(s.as_deref(), e.as_deref());
                    self.add(ds, "dct:temporal", p);
                }
            }
        }
    }

    /// Geometry literals of a GeoJSON value (text or object), one per configured format.
    fn geometry(&mut self, s: &NamedOrBlankNode, p: &str, value: &Value) {
        let text = match value {
            Value::String(t) => t.clone(),
            Value::Object(_) => value.to_string(),
            _ => return,
        };
        let Some(geom) = geo::parse_geojson(&text) else {
            return;
        };
        for f in &self.cx.settings.output_spatial_formats {
            let o = match f.as_str() {
                "geojson" => typed(&geo::python_json(&geom), geo::GEOJSON_LITERAL),
                _ => match geo::to_wkt(&geom) {
                    Some(w) => typed(&w, geo::WKT_LITERAL),
                    None => continue,
                },
            };
            self.add(s, p, o);
        }
    }

    fn spatial(&mut self, d: &Map<String, Value>, ds: &NamedOrBlankNode) {
        let uri = field_str(d, &["spatial_uri"]);
        let text = field(d, "spatial_text").cloned();
        let geom = field(d, "spatial").cloned();
        let (bbox, centroid) = if self.v >= Version::V2 {
            (
                field(d, "spatial_bbox").cloned(),
                field(d, "spatial_centroid").cloned(),
            )
        } else {
            (None, None)
        };
        if uri.is_some() || text.is_some() || geom.is_some() || bbox.is_some() || centroid.is_some()
        {
            let loc: NamedOrBlankNode = match uri.as_deref().and_then(absolute_iri) {
                Some(u) => u.into(),
                None => bnode(),
            };
            self.g.add_type(&loc, "dct:Location");
            if let Some(t) = text {
                match &t {
                    Value::Object(tr) => {
                        for (l, v) in tr {
                            if let Some(x) = value_str(v) {
                                self.add(&loc, "skos:prefLabel", lang_lit(&x, l));
                            }
                        }
                    }
                    other => {
                        if let Some(x) = value_str(other) {
                            self.add(&loc, "skos:prefLabel", lit(&x));
                        }
                    }
                }
            }
            if let Some(gv) = geom {
                self.geometry(&loc, "locn:geometry", &gv);
            }
            if let Some(b) = bbox {
                self.geometry(&loc, "dcat:bbox", &b);
            }
            if let Some(c) = centroid {
                self.geometry(&loc, "dcat:centroid", &c);
            }
            self.add(ds, "dct:spatial", loc);
        }
        if self.v == Version::V3 {
            for item in field_objects(d, "spatial_coverage") {
                let loc: NamedOrBlankNode =
                    match field_str(&item, &["uri"]).as_deref().and_then(absolute_iri) {
                        Some(u) => u.into(),
                        None => bnode(),
                    };
                self.g.add_type(&loc, "dct:Location");
                let labels = texts(&item, "text");
                self.add_all(&loc, "skos:prefLabel", labels);
                for (key, p) in [
                    ("geom", "locn:geometry"),
                    ("bbox", "dcat:bbox"),
                    ("centroid", "dcat:centroid"),
                ] {
                    if let Some(v) = field(&item, key).cloned() {
                        self.geometry(&loc, p, &v);
                    }
                }
                self.add(ds, "dct:spatial", loc);
            }
        }
    }

    // ------------------------------------------------------------------ v2+ objects

    fn activity(&mut self, act: &Map<String, Value>, ds: &NamedOrBlankNode) {
        let a: NamedOrBlankNode = match field_str(act, &["uri"]).as_deref().and_then(absolute_iri) {
            Some(u) => u.into(),
            None => bnode(),
        };
        self.g.add_type(&a, "prov:Activity");
        let labels = texts(act, "label");
        self.add_all(&a, "rdfs:label", labels);
        if let Some(u) = field_str(act, &["seeAlso"])
            .as_deref()
            .and_then(absolute_iri)
        {
            self.add(&a, "rdfs:seeAlso", u);
        }
        if let Some(t) = field_str(act, &["dct_type", "type"]) {
            let o = self.concept(&t);
            self.add(&a, "dct:type", o);
        }
        if let Some(t) = field_str(act, &["startedAtTime"]) {
            self.add(&a, "prov:startedAtTime", typed(t.trim(), "xsd:dateTime"));
        }
        for agent in field_objects(act, "wasAssociatedWith") {
            let ag = self.agent_object(&agent);
            self.add(&a, "prov:wasAssociatedWith", ag);
        }
        self.add(ds, "prov:wasGeneratedBy", a);
    }

    fn attribution(&mut self, att: &Map<String, Value>, ds: &NamedOrBlankNode) {
        let b = bnode();
        self.g.add_type(&b, "prov:Attribution");
        match field(att, "agent") {
            Some(Value::String(s)) if is_http(s) => self.add(&b, "prov:agent", iri(s)),
            Some(_) => {
                for agent in field_objects(att, "agent") {
                    let ag = self.agent_object(&agent);
                    self.add(&b, "prov:agent", ag);
                }
            }
            None => {}
        }
        if let Some(r) = field_str(att, &["role"]) {
            let o = self.concept(&r);
            self.add(&b, "dcat:hadRole", o);
        }
        self.add(ds, "prov:qualifiedAttribution", b);
    }

    fn relationship(&mut self, rel: &Map<String, Value>, ds: &NamedOrBlankNode) {
        let r: NamedOrBlankNode = match field_str(rel, &["uri"]).as_deref().and_then(absolute_iri) {
            Some(u) => u.into(),
            None => bnode(),
        };
        self.g.add_type(&r, "dcat:Relationship");
        if let Some(x) = field_str(rel, &["relation"]) {
            let o = self.resource_ref(&x, Some("rdfs:Resource"));
            self.add(&r, "dct:relation", o);
        }
        if let Some(x) = field_str(rel, &["role"]) {
            let o = self.node_for(&x, Some("dcat:Role"), "rdfs:label");
            self.add(&r, "dcat:hadRole", o);
        }
        self.add(ds, "dcat:qualifiedRelation", r);
    }

    // ------------------------------------------------------------------ distribution (§7.8)

    fn distribution(
        &mut self,
        d: &Map<String, Value>,
        r: &Map<String, Value>,
        dist: &NamedOrBlankNode,
        landing: Option<&str>,
    ) {
        let v = self.v;
        self.g.add_type(dist, "dcat:Distribution");
        let t = texts(r, "name");
        self.add_all(dist, "dct:title", t);
        let t = texts(r, "description");
        self.add_all(dist, "dct:description", t);
        if let Some(s) = field_str(r, &["status"]) {
            let o = self.concept(&s);
            self.add(dist, "adms:status", o);
        }

        // License (§7.9), inherited from the dataset when configured.
        let mut license = field_str(r, &["license"]);
        if license.is_none() && self.cx.settings.inherit_license {
            license = field_str(d, &["license_id"])
                .filter(|l| is_http(l))
                .or_else(|| field_str(d, &["license_url"]).filter(|l| is_http(l)));
        }
        if let Some(l) = license {
            let o = self.resource_ref(&l, Some("dct:LicenseDocument"));
            if let Term::NamedNode(node) = &o {
                self.add(
                    &node.clone().into(),
                    "dct:type",
                    n("http://purl.org/adms/licencetype/UnknownIPR"),
                );
            }
            self.add(dist, "dct:license", o);
        }

        // URLs: the matrix of §7.8; an accessURL is always written (DCAT-AP mandatory).
        let url = field_str(r, &["url"]);
        let access = field_str(r, &["access_url"]);
        let download = field_str(r, &["download_url"]);
        let access_target = access
            .clone()
            .or_else(|| url.clone())
            .or_else(|| download.clone())
            .or_else(|| landing.map(str::to_string));
        let access_node: NamedNode = access_target
            .as_deref()
            .and_then(absolute_iri)
            .unwrap_or_else(|| match dist {
                NamedOrBlankNode::NamedNode(nn) => nn.clone(),
                _ => iri(self.cx.catalog_uri()),
            });
        self.g
            .add_type(&access_node.clone().into(), "rdfs:Resource");
        self.add(dist, "dcat:accessURL", access_node);
        if let Some(dl) = download.as_deref().and_then(absolute_iri) {
            self.g.add_type(&dl.clone().into(), "rdfs:Resource");
            self.add(dist, "dcat:downloadURL", dl);
        }

        for p in field_list(r, &["documentation"]) {
            let o = self.resource_ref(&p, Some("foaf:Document"));
            self.add(dist, "foaf:page", o);
        }
        for l in field_list(r, &["language"]) {
            let o = self.language(&l);
            self.add(dist, "dct:language", o);
        }
        for c in field_list(r, &["conforms_to"]) {
            let o = self.resource_ref(&c, Some("dct:Standard"));
            self.add(dist, "dct:conformsTo", o);
        }
        self.statement(
            dist,
            "dct:rights",
            field(r, "rights"),
            "dct:RightsStatement",
        );
        self.dates(dist, "dct:issued", r, &["issued", "created"]);
        self.dates(dist, "dct:modified", r, &["modified", "metadata_modified"]);
        if let Some(size) = field_str(r, &["size"]) {
            if let Some(o) = byte_size(&size, v) {
                self.add(dist, "dcat:byteSize", o);
            }
        }
        if let Some(hash) = field_str(r, &["hash"]) {
            self.checksum(r, &hash, dist);
        }
        self.format(r, dist);

        if v >= Version::V2 {
            if let Some(a) = field_str(r, &["availability"]) {
                let o = self.concept(&a);
                self.add(dist, "dcatap:availability", o);
            }
            for (key, p) in [
                ("compress_format", "dcat:compressFormat"),
                ("package_format", "dcat:packageFormat"),
            ] {
                if let Some(f) = field_str(r, &[key]) {
                    let o = self.media_type(&f);
                    self.add(dist, p, o);
                }
            }
            if let Some(t) = field_str(r, &["temporal_resolution"]) {
                self.add(
                    dist,
                    "dcat:temporalResolution",
                    typed(t.trim(), "xsd:duration"),
                );
            }
            if let Some(s) = field_list(r, &["spatial_resolution_in_meters"]).first() {
                self.add(dist, "dcat:spatialResolutionInMeters", decimal(s));
            }
            self.legislation(r, dist);
            for svc in field_objects(r, "access_services") {
                self.access_service(&svc, dist);
            }
        }
    }

    /// `spdx:checksum`. DCAT-AP requires the algorithm (2.1.1: SHA-1 only), so a checksum whose
    /// algorithm is unknown (or, before v3, not SHA-1) is left out.
    fn checksum(&mut self, r: &Map<String, Value>, hash: &str, dist: &NamedOrBlankNode) {
        let named = field_str(r, &["hash_algorithm"]);
        let algo = match &named {
            Some(a) => vocab::checksum_algorithm_iri(a),
            None => vocab::checksum_algorithm_for(hash).map(str::to_string),
        };
        let Some(algo) = algo else {
            return;
        };
        if self.v < Version::V3 && !algo.ends_with("#checksumAlgorithm_sha1") {
            return;
        }
        let c = bnode();
        self.g.add_type(&c, "spdx:Checksum");
        self.add(
            &c,
            "spdx:checksumValue",
            typed(hash.trim(), "xsd:hexBinary"),
        );
        let o = iri(&algo);
        self.g.add_type(&o.clone().into(), "spdx:ChecksumAlgorithm");
        self.add(&c, "spdx:algorithm", o);
        self.add(dist, "spdx:checksum", c);
    }

    /// A media type: the IANA IRI, the IRI given, or a blank `dct:MediaType` with a label.
    fn media_type(&mut self, mt: &str) -> Term {
        let iri_text = if is_http(mt) {
            Some(mt.trim().to_string())
        } else {
            vocab::media_type_iri(mt)
        };
        match iri_text {
            Some(i) => {
                let o = iri(&i);
                self.g.add_type(&o.clone().into(), "dct:MediaType");
                o.into()
            }
            None => self.resource_ref(mt, Some("dct:MediaType")),
        }
    }

    /// `dct:format` and `dcat:mediaType` (§7.10), as IRIs from the EU file-type authority and
    /// IANA when the values are known ones.
    fn format(&mut self, r: &Map<String, Value>, dist: &NamedOrBlankNode) {
        let mut fmt = field_str(r, &["format"]);
        let mut mt = field_str(r, &["mimetype"]);
        if let Some(f) = fmt.clone() {
            if mt.is_none() || mt.as_deref() == Some(f.as_str()) {
                if f.contains("iana.org/assignments/media-types")
                    || (!f.starts_with("http") && f.contains('/'))
                {
                    mt = Some(f);
                    fmt = None;
                } else {
                    mt = None;
                }
            }
        }
        if let Some(m) = mt {
            let o = self.media_type(&m);
            self.add(dist, "dcat:mediaType", o);
        }
        if let Some(f) = fmt {
            let o = if is_http(&f) {
                let o = iri(&f);
                self.g.add_type(&o.clone().into(), "dct:MediaTypeOrExtent");
                o.into()
            } else if let Some(i) = vocab::format_iri(&f) {
                let o = iri(&i);
                self.g.add_type(&o.clone().into(), "dct:MediaTypeOrExtent");
                o.into()
            } else {
                self.resource_ref(&f, Some("dct:MediaTypeOrExtent"))
            };
            self.add(dist, "dct:format", o);
        }
    }

    fn access_service(&mut self, svc: &Map<String, Value>, dist: &NamedOrBlankNode) {
        let s: NamedOrBlankNode = match field_str(svc, &["uri"]).as_deref().and_then(absolute_iri) {
            Some(u) => u.into(),
            None => bnode(),
        };
        self.g.add_type(&s, "dcat:DataService");
        if let Some(a) = field_str(svc, &["availability"]) {
            let o = self.concept(&a);
            self.add(&s, "dcatap:availability", o);
        }
        if let Some(l) = field_str(svc, &["license"]) {
            let o = self.resource_ref(&l, Some("dct:LicenseDocument"));
            self.add(&s, "dct:license", o);
        }
        self.statement(
            &s,
            "dct:accessRights",
            field(svc, "access_rights"),
            "dct:RightsStatement",
        );
        let t = texts(svc, "title");
        self.add_all(&s, "dct:title", t);
        let t = texts(svc, "description");
        self.add_all(&s, "dct:description", t);
        for x in field_list(svc, &["endpoint_description"]) {
            let o = self.resource_ref(&x, Some("rdfs:Resource"));
            self.add(&s, "dcat:endpointDescription", o);
        }
        for x in field_list(svc, &["endpoint_url"]) {
            let o = self.resource_ref(&x, Some("rdfs:Resource"));
            self.add(&s, "dcat:endpointURL", o);
        }
        for x in field_list(svc, &["serves_dataset"]) {
            let o = self.resource_ref(&x, None);
            self.add(&s, "dcat:servesDataset", o);
        }
        self.dates(&s, "dct:modified", svc, &["modified"]);
        for c in field_objects(svc, "contact") {
            let o = self.contact_object(&c);
            self.add(&s, "dcat:contactPoint", o);
        }
        if let Some(p) = field_objects(svc, "publisher").first() {
            let o = self.agent_object(p);
            self.add(&s, "dct:publisher", o);
        }
        for c in field_objects(svc, "creator") {
            let o = self.agent_object(&c);
            self.add(&s, "dct:creator", o);
        }
        for c in field_list(svc, &["conforms_to"]) {
            let o = self.resource_ref(&c, Some("dct:Standard"));
            self.add(&s, "dct:conformsTo", o);
        }
        for f in field_list(svc, &["format"]) {
            let o = match vocab::format_iri(&f) {
                Some(i) if !is_http(&f) => iri(&i).into(),
                _ => self.resource_ref(&f, Some("dct:MediaTypeOrExtent")),
            };
            self.add(&s, "dct:format", o);
        }
        for l in field_list(svc, &["language"]) {
            let o = self.language(&l);
            self.add(&s, "dct:language", o);
        }
        for x in field_list(svc, &["landing_page"]) {
            let o = self.resource_ref(&x, Some("foaf:Document"));
            self.add(&s, "dcat:landingPage", o);
        }
        self.legislation(svc, &s);
        for th in field_list(svc, &["theme"]) {
            if let Some(i) = vocab::theme_iri(&th) {
                self.add(&s, "dcat:theme", iri(&i));
            }
        }
        for i in field_list(svc, &["identifier"]) {
            self.add(&s, "dct:identifier", lit(i.trim()));
        }
        for k in field_list(svc, &["keyword"]) {
            self.add(&s, "dcat:keyword", lit(&k));
        }
        self.add(dist, "dcat:accessService", s);
    }
}

/// `dcat:byteSize`: `xsd:decimal` (v1, v2) or `xsd:nonNegativeInteger` (v3); `None` when the
/// size is not a number.
fn byte_size(size: &str, v: Version) -> Option<Term> {
    let s = size.trim();
    let f: f64 = s.parse().ok()?;
    if v == Version::V3 {
        (f >= 0.0).then(|| typed(&format!("{}", f.trunc() as u64), "xsd:nonNegativeInteger"))
    } else {
        Some(typed(&decimal_text(f), "xsd:decimal"))
    }
}

fn decimal_text(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e18 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

/// An `xsd:decimal` literal for a number, a plain literal for anything else.
fn decimal(s: &str) -> Term {
    match s.trim().parse::<f64>() {
        Ok(f) if f.is_finite() => typed(&decimal_text(f), "xsd:decimal"),
        _ => lit(s),
    }
}
