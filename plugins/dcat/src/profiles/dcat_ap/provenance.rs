//! The v2+ objects: `prov:Activity`, `prov:Attribution` and `dcat:Relationship`.

use crate::rdf::graph::{
    absolute_iri, bnode, field, field_objects, field_str, iri, is_http, typed,
};
use catalog_framework::prelude::*;
use oxigraph::model::NamedOrBlankNode;

use super::{texts, Writer};

impl Writer<'_, '_> {
    pub(super) fn activity(&mut self, act: &Map<String, Value>, ds: &NamedOrBlankNode) {
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

    pub(super) fn attribution(&mut self, att: &Map<String, Value>, ds: &NamedOrBlankNode) {
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

    pub(super) fn relationship(&mut self, rel: &Map<String, Value>, ds: &NamedOrBlankNode) {
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
}
