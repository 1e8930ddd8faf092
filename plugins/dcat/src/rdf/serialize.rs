//! The four serializations of the seed (RDF/XML, Turtle, N3, JSON-LD), parsing them back, and a
//! canonical N-Triples form for snapshots.

use std::collections::BTreeMap;

use oxigraph::io::{RdfParser, RdfSerializer};
use oxigraph::model::Graph;
use serde_json::{json, Map, Value};

use super::graph::{compact, RdfGraph};

/// A serialization format of the RDF endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RdfFormat {
    RdfXml,
    Turtle,
    N3,
    JsonLd,
}

/// Every extension the endpoints accept, in the order error messages list them.
pub const EXTENSIONS: &[&str] = &["rdf", "xml", "ttl", "n3", "jsonld"];

impl RdfFormat {
    /// `rdf` and `xml` → RDF/XML, `ttl` → Turtle, `n3` → N3, `jsonld` → JSON-LD.
    pub fn from_extension(ext: &str) -> Option<RdfFormat> {
        match ext {
            "rdf" | "xml" => Some(RdfFormat::RdfXml),
            "ttl" => Some(RdfFormat::Turtle),
            "n3" => Some(RdfFormat::N3),
            "jsonld" => Some(RdfFormat::JsonLd),
            _ => None,
        }
    }

    /// The exact `Content-Type` of the seed (no charset).
    pub fn media_type(self) -> &'static str {
        match self {
            RdfFormat::RdfXml => "application/rdf+xml",
            RdfFormat::Turtle => "text/turtle",
            RdfFormat::N3 => "text/n3",
            RdfFormat::JsonLd => "application/ld+json",
        }
    }

    /// The format named by an exact media type.
    pub fn from_media_type(mt: &str) -> Option<RdfFormat> {
        [
            RdfFormat::RdfXml,
            RdfFormat::N3,
            RdfFormat::Turtle,
            RdfFormat::JsonLd,
        ]
        .into_iter()
        .find(|f| f.media_type() == mt)
    }

    fn oxigraph(self) -> oxigraph::io::RdfFormat {
        match self {
            RdfFormat::RdfXml => oxigraph::io::RdfFormat::RdfXml,
            RdfFormat::Turtle => oxigraph::io::RdfFormat::Turtle,
            RdfFormat::N3 => oxigraph::io::RdfFormat::N3,
            RdfFormat::JsonLd => oxigraph::io::RdfFormat::JsonLd {
                profile: oxigraph::io::JsonLdProfileSet::empty(),
            },
        }
    }
}

/// Serializes a graph. RDF/XML, Turtle and N3 come from oxigraph's writers with the graph's
/// prefixes (only those in use are printed); JSON-LD is compacted with an `@context` of the
/// prefixes in use and an `@graph` of node objects (oxigraph's writer prints full IRIs only).
pub fn serialize(g: &RdfGraph, format: RdfFormat) -> Result<Vec<u8>, String> {
    if format == RdfFormat::JsonLd {
        return serde_json::to_vec_pretty(&to_jsonld(g)).map_err(|e| e.to_string());
    }
    if format == RdfFormat::RdfXml && has_xml_invalid_chars(g) {
        return serialize(&without_xml_invalid_chars(g), format);
    }
    let used = used_prefixes(g);
    let mut ser = RdfSerializer::from_format(format.oxigraph());
    for (p, ns) in &used {
        ser = ser.with_prefix(p, ns).map_err(|e| e.to_string())?;
    }
    let mut w = ser.for_writer(Vec::with_capacity(g.len() * 64));
    for t in sorted_triples(&g.graph) {
        w.serialize_triple(t).map_err(|e| e.to_string())?;
    }
    w.finish().map_err(|e| e.to_string())
}

/// Characters XML 1.0 cannot hold (C0 controls but tab, newline and carriage return; U+FFFE,
/// U+FFFF): oxigraph's RDF/XML writer prints them as they are, which no XML parser reads.
fn xml_invalid(c: char) -> bool {
    (c < '\u{20}' && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{FFFE}' | '\u{FFFF}')
}

fn has_xml_invalid_chars(g: &RdfGraph) -> bool {
    g.graph.iter().any(|t| match t.object {
        oxigraph::model::TermRef::Literal(l) => l.value().chars().any(xml_invalid),
        _ => false,
    })
}

/// A copy of the graph with the characters XML cannot hold dropped from literals.
fn without_xml_invalid_chars(g: &RdfGraph) -> RdfGraph {
    use oxigraph::model::{Literal, Term, TermRef, Triple};
    let mut out = g.clone();
    out.graph = Graph::new();
    for t in g.graph.iter() {
        let object: Term = match t.object {
            TermRef::Literal(l) if l.value().chars().any(xml_invalid) => {
                let v: String = l.value().chars().filter(|c| !xml_invalid(*c)).collect();
                match l.language() {
                    Some(lang) => Literal::new_language_tagged_literal_unchecked(v, lang).into(),
                    None => Literal::new_typed_literal(v, l.datatype().into_owned()).into(),
                }
            }
            other => other.into_owned(),
        };
        out.graph.insert(&Triple::new(
            t.subject.into_owned(),
            t.predicate.into_owned(),
            object,
        ));
    }
    out
}

/// Triples grouped by subject (named nodes first, then blank nodes) and predicate, so writers
/// can nest them. The sort compares borrowed strings only (no allocation per comparison); the
/// graph's own order breaks ties, which is deterministic for one graph.
fn sorted_triples(g: &Graph) -> Vec<oxigraph::model::TripleRef<'_>> {
    use oxigraph::model::NamedOrBlankNodeRef;
    fn key<'a>(s: &NamedOrBlankNodeRef<'a>) -> (u8, &'a str) {
        match s {
            NamedOrBlankNodeRef::NamedNode(n) => (0, n.as_str()),
            NamedOrBlankNodeRef::BlankNode(b) => (1, b.as_str()),
        }
    }
    let mut ts: Vec<_> = g.iter().collect();
    ts.sort_by(|a, b| {
        key(&a.subject)
            .cmp(&key(&b.subject))
            .then_with(|| a.predicate.as_str().cmp(b.predicate.as_str()))
    });
    ts
}

/// The prefixes whose namespace some IRI of the graph starts with.
fn used_prefixes(g: &RdfGraph) -> BTreeMap<String, String> {
    let mut iris: Vec<&str> = Vec::new();
    for t in g.graph.iter() {
        if let oxigraph::model::NamedOrBlankNodeRef::NamedNode(n) = t.subject {
            iris.push(n.as_str());
        }
        // `a` and plain strings need no prefix in any of the syntaxes.
        if t.predicate.as_str() != RDF_TYPE {
            iris.push(t.predicate.as_str());
        }
        match t.object {
            oxigraph::model::TermRef::NamedNode(n) => iris.push(n.as_str()),
            oxigraph::model::TermRef::Literal(l) if l.datatype().as_str() != XSD_STRING => {
                iris.push(l.datatype().as_str())
            }
            _ => {}
        }
    }
    g.prefixes()
        .iter()
        .filter(|(_, ns)| iris.iter().any(|i| i.starts_with(ns.as_str())))
        .map(|(p, ns)| (p.clone(), ns.clone()))
        .collect()
}

const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
const XSD_STRING: &str = "http://www.w3.org/2001/XMLSchema#string";

/// The compacted JSON-LD document of a graph.
pub fn to_jsonld<'g>(g: &'g RdfGraph) -> Value {
    use oxigraph::model::{NamedOrBlankNodeRef, TermRef};
    let prefixes = used_prefixes(g);
    // Each distinct IRI is compacted once.
    let cache: std::cell::RefCell<std::collections::HashMap<&'g str, String>> = Default::default();
    let c = |iri: &'g str| -> String {
        if let Some(v) = cache.borrow().get(iri) {
            return v.clone();
        }
        let v = compact(&prefixes, iri).unwrap_or_else(|| iri.to_string());
        cache.borrow_mut().insert(iri, v.clone());
        v
    };
    let id = |s: NamedOrBlankNodeRef<'g>| match s {
        NamedOrBlankNodeRef::NamedNode(n) => c(n.as_str()),
        NamedOrBlankNodeRef::BlankNode(b) => format!("_:{}", b.as_str()),
    };
    // Triples come grouped by subject: one node object per run of one subject.
    let mut nodes: Vec<Value> = Vec::new();
    let mut current: Option<(NamedOrBlankNodeRef<'g>, Map<String, Value>)> = None;
    for t in sorted_triples(&g.graph) {
        if current.as_ref().is_none_or(|(s, _)| *s != t.subject) {
            if let Some((_, node)) = current.take() {
                nodes.push(Value::Object(node));
            }
            let mut m = Map::new();
            m.insert("@id".into(), Value::String(id(t.subject)));
            current = Some((t.subject, m));
        }
        let Some((_, node)) = current.as_mut() else {
            continue;
        };
        if t.predicate.as_str() == RDF_TYPE {
            if let TermRef::NamedNode(class) = t.object {
                push(node, "@type", Value::String(c(class.as_str())));
                continue;
            }
        }
        let value = match t.object {
            TermRef::NamedNode(n) => json!({"@id": c(n.as_str())}),
            TermRef::BlankNode(b) => json!({"@id": format!("_:{}", b.as_str())}),
            TermRef::Literal(l) => {
                if let Some(lang) = l.language() {
                    json!({"@value": l.value(), "@language": lang})
                } else if l.datatype().as_str() == XSD_STRING {
                    Value::String(l.value().to_string())
                } else {
                    json!({"@value": l.value(), "@type": c(l.datatype().as_str())})
                }
            }
            #[allow(unreachable_patterns)]
            _ => continue,
        };
        push(node, &c(t.predicate.as_str()), value);
    }
    if let Some((_, node)) = current {
        nodes.push(Value::Object(node));
    }
    let context: Map<String, Value> = prefixes
        .iter()
        .map(|(p, ns)| (p.clone(), Value::String(ns.clone())))
        .collect();
    json!({ "@context": context, "@graph": nodes })
}

fn push(node: &mut Map<String, Value>, key: &str, v: Value) {
    match node.get_mut(key) {
        Some(Value::Array(a)) => a.push(v),
        Some(first) => {
            let f = first.take();
            *first = Value::Array(vec![f, v]);
        }
        None => {
            node.insert(key.into(), v);
        }
    }
}

/// Parses a document in one of the four formats.
pub fn parse(body: &[u8], format: RdfFormat, base_iri: Option<&str>) -> Result<Graph, String> {
    let mut parser = RdfParser::from_format(format.oxigraph()).without_named_graphs();
    if let Some(b) = base_iri {
        parser = parser.with_base_iri(b).map_err(|e| e.to_string())?;
    }
    let mut g = Graph::new();
    for q in parser.for_slice(body) {
        let q = q.map_err(|e| e.to_string())?;
        g.insert(q.as_ref());
    }
    Ok(g)
}

/// Canonical N-Triples: blank nodes relabelled from the graph's shape, lines sorted. Two
/// isomorphic graphs give the same text; snapshots use it.
pub fn canonical_ntriples(g: &Graph) -> String {
    let mut g = g.clone();
    g.canonicalize(oxigraph::model::dataset::CanonicalizationAlgorithm::Unstable);
    let mut lines: Vec<String> = g.iter().map(|t| format!("{t} .")).collect();
    lines.sort();
    lines.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::super::graph::{bnode, date_literal, iri, lit, n};
    use super::*;
    use oxigraph::model::NamedOrBlankNode;

    fn sample() -> RdfGraph {
        let mut g = RdfGraph::new();
        let ds: NamedOrBlankNode = iri("http://example.org/dataset/1").into();
        g.add_type(&ds, "dcat:Dataset");
        g.add(&ds, &n("dct:title"), lit("Café \"quoted\" <title>"));
        g.add(&ds, &n("dct:issued"), date_literal("2024-05-31T12:30:01"));
        let contact = bnode();
        g.add(&ds, &n("dcat:contactPoint"), contact.clone());
        g.add_type(&contact, "vcard:Kind");
        g.add(&contact, &n("vcard:fn"), lit("Jane"));
        g.add(&ds, &n("dcat:keyword"), lit("a"));
        g.add(&ds, &n("dcat:keyword"), lit("b"));
        g
    }

    #[test]
    fn every_format_parses_back_to_the_same_graph() {
        let g = sample();
        let want = canonical_ntriples(&g.graph);
        for f in [
            RdfFormat::RdfXml,
            RdfFormat::Turtle,
            RdfFormat::N3,
            RdfFormat::JsonLd,
        ] {
            let body = serialize(&g, f).unwrap();
            let back = parse(&body, f, None)
                .unwrap_or_else(|e| panic!("{f:?}: {e}\n{}", String::from_utf8_lossy(&body)));
            assert_eq!(canonical_ntriples(&back), want, "{f:?}");
        }
    }

    #[test]
    fn jsonld_is_compacted_with_used_prefixes_only() {
        let doc = to_jsonld(&sample());
        let ctx = doc["@context"].as_object().unwrap();
        assert!(ctx.contains_key("dcat") && ctx.contains_key("vcard"));
        assert!(!ctx.contains_key("hydra"));
        let ds = &doc["@graph"][0];
        assert_eq!(ds["@type"], "dcat:Dataset");
        assert_eq!(ds["dct:issued"]["@type"], "xsd:dateTime");
        assert_eq!(ds["dcat:keyword"].as_array().unwrap().len(), 2);
        assert_eq!(ds["dct:title"], "Café \"quoted\" <title>");
    }

    #[test]
    fn rdf_xml_drops_characters_xml_cannot_hold() {
        let mut g = sample();
        let ds: NamedOrBlankNode = iri("http://example.org/dataset/1").into();
        g.add(
            &ds,
            &n("dct:description"),
            lit("pasted\u{b}from a word processor"),
        );
        let body = serialize(&g, RdfFormat::RdfXml).unwrap();
        let back = parse(&body, RdfFormat::RdfXml, None).unwrap();
        assert!(canonical_ntriples(&back).contains("pastedfrom a word processor"));
    }
}
