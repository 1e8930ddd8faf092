//! The dataset (§7.3).

use crate::profiles::vocab;
use crate::rdf::graph::{
    absolute_iri, bnode, field, field_list, field_objects, field_str, iri, is_http, lang_lit,
    list_values, lit, typed, value_str,
};
use catalog_framework::prelude::*;
use oxigraph::model::{NamedOrBlankNode, Term};

use super::{decimal, texts, Version, Writer};

impl Writer<'_, '_> {
    pub(super) fn dataset(&mut self, d: &Map<String, Value>, ds: &NamedOrBlankNode) {
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
        self.describe(d, ds);
        self.keywords(d, ds);
        self.dates(ds, "dct:issued", d, &["issued", "metadata_created"]);
        self.dates(ds, "dct:modified", d, &["modified", "metadata_modified"]);
        self.relations(d, ds);
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
            self.v2_properties(d, ds);
        }
        if v == Version::V3 {
            for rel in field_objects(d, "qualified_relation") {
                self.relationship(&rel, ds);
            }
        }

        self.distributions(d, ds);
    }

    /// Title, description, landing page, identifier, version, frequency and type.
    fn describe(&mut self, d: &Map<String, Value>, ds: &NamedOrBlankNode) {
        let v = self.v;
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
    }

    /// Languages, themes, standards, pages, related resources, versions and identifiers.
    fn relations(&mut self, d: &Map<String, Value>, ds: &NamedOrBlankNode) {
        let v = self.v;
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
    }

    /// What `euro_dcat_ap_2` and later add.
    fn v2_properties(&mut self, d: &Map<String, Value>, ds: &NamedOrBlankNode) {
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

    /// A `dcat:distribution` per resource.
    fn distributions(&mut self, d: &Map<String, Value>, ds: &NamedOrBlankNode) {
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
}
