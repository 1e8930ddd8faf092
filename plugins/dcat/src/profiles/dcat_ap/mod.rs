//! The DCAT-AP profiles `euro_dcat_ap` (1.1), `euro_dcat_ap_2` (2.1) and `euro_dcat_ap_3` (3.0):
//! one mapping parametrised by [`Version`] (spec/dcat.md §6, §7). Where ckanext-dcat's output
//! breaks the official SHACL shapes we write the DCAT-AP form instead; each such place is listed
//! in `docs/DCAT-DEVIATIONS.md`.
//!
//! The writer's methods are grouped by the part of the graph they write: the catalog (§6) in
//! `catalog.rs`, the dataset (§7.3) in `dataset.rs`, contact points and agents (§7.4, §7.5) in
//! `agents.rs`, time and space in `coverage.rs`, the v2+ provenance objects in
//! `provenance.rs` and distributions with their access services (§7.8) in `distribution.rs`;
//! what several of them use is here.

mod agents;
mod catalog;
mod coverage;
mod dataset;
mod distribution;
mod provenance;

use crate::prelude::*;
use crate::rdf::graph::{
    absolute_iri, bnode, date_literal, field, field_list, field_str, iri, is_http, lang_lit, lit,
    n, typed, value_str,
};
use catalog_framework::prelude::*;
use oxigraph::model::{NamedOrBlankNode, Term};

use super::vocab;

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

    fn legislation(&mut self, d: &Map<String, Value>, s: &NamedOrBlankNode) {
        for l in field_list(d, &["applicable_legislation"]) {
            // dcatap:applicableLegislation must be an IRI: text that is not one is left out.
            if let Some(o) = absolute_iri(&l).filter(|_| is_http(&l)) {
                self.g.add_type(&o.clone().into(), "eli:LegalResource");
                self.add(s, "dcatap:applicableLegislation", o);
            }
        }
    }
}

pub(super) fn decimal_text(f: f64) -> String {
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
