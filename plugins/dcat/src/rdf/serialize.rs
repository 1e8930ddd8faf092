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

/// Elements an RDF/XML document from outside may nest, and brackets a Turtle or N3 one may
/// nest. Real catalogs nest a dozen; oxrdfxml's cost grows faster than the depth (100,000
/// levels took minutes) and the Turtle parser keeps about 1.5 KB per open bracket.
pub const MAX_XML_DEPTH: usize = 256;

/// Objects and arrays a JSON-LD document from outside may nest: the JSON-LD parser's cost grows
/// with the square of the depth of nested node objects and its stack overflows (aborting the
/// process) at about a thousand.
pub const MAX_JSON_LD_DEPTH: usize = 64;

/// What one parse of a document from outside may cost: how deep it may nest, how many triples
/// it may hold (a parsed triple costs about 1 KB of memory) and when it must be done by.
#[derive(Debug, Clone, Copy)]
pub struct ParseLimits {
    /// The deepest element nesting of RDF/XML, and bracket nesting of Turtle and N3.
    pub max_xml_depth: usize,
    /// The deepest object and array nesting of JSON-LD.
    pub max_json_depth: usize,
    /// The most triples kept; `None`: no bound.
    pub max_triples: Option<usize>,
    /// Past this instant the parse stops with an error (checked between triples).
    pub deadline: Option<std::time::Instant>,
}

impl Default for ParseLimits {
    fn default() -> Self {
        ParseLimits {
            max_xml_depth: MAX_XML_DEPTH,
            max_json_depth: MAX_JSON_LD_DEPTH,
            max_triples: None,
            deadline: None,
        }
    }
}

/// Parses a document in one of the four formats, with the default [`ParseLimits`] (no
/// deadline, no bound on triples).
pub fn parse(body: &[u8], format: RdfFormat, base_iri: Option<&str>) -> Result<Graph, String> {
    parse_within(body, format, base_iri, ParseLimits::default())
}

/// Parses a document in one of the four formats within `limits`. Its nesting is measured
/// first, in one pass that parses nothing: RDF/XML by the parser's own tokenizer, which also
/// refuses a DOCTYPE anywhere (its entities would be expanded: a few hundred bytes can become
/// gigabytes); Turtle and N3 by their brackets; JSON-LD by its objects and arrays.
pub fn parse_within(
    body: &[u8],
    format: RdfFormat,
    base_iri: Option<&str>,
    limits: ParseLimits,
) -> Result<Graph, String> {
    match format {
        RdfFormat::RdfXml => check_xml(body, limits.max_xml_depth)?,
        RdfFormat::Turtle | RdfFormat::N3 => check_turtle_depth(body, limits.max_xml_depth)?,
        RdfFormat::JsonLd => check_json_depth(body, limits.max_json_depth)?,
    }
    let mut parser = RdfParser::from_format(format.oxigraph()).without_named_graphs();
    if let Some(b) = base_iri {
        parser = parser.with_base_iri(b).map_err(|e| e.to_string())?;
    }
    let late = || {
        limits
            .deadline
            .is_some_and(|d| std::time::Instant::now() > d)
    };
    let mut g = Graph::new();
    for (n, q) in parser.for_slice(body).enumerate() {
        let q = q.map_err(|e| e.to_string())?;
        if limits.max_triples.is_some_and(|max| n >= max) {
            return Err(format!(
                "the document holds more than {} triples",
                limits.max_triples.unwrap_or_default()
            ));
        }
        g.insert(q.as_ref());
        if n % 1024 == 1023 && late() {
            return Err("the document took too long to parse".into());
        }
    }
    if late() {
        return Err("the document took too long to parse".into());
    }
    Ok(g)
}

/// Refuses Turtle or N3 whose brackets (`[`, `(`, `{`) nest deeper than `max_depth`, counted
/// outside strings, IRIs and comments.
fn check_turtle_depth(body: &[u8], max_depth: usize) -> Result<(), String> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'#' => {
                while i < body.len() && body[i] != b'\n' && body[i] != b'\r' {
                    i += 1;
                }
            }
            b'<' => {
                // An IRI: to its `>` (an IRI holds no space; N3's `<=` is no IRI).
                let mut j = i + 1;
                while j < body.len() && !matches!(body[j], b'>' | b' ' | b'\n' | b'\t' | b'\r') {
                    j += 1;
                }
                i = if body.get(j) == Some(&b'>') { j } else { i };
            }
            q @ (b'"' | b'\'') => {
                let long = body.get(i + 1) == Some(&q) && body.get(i + 2) == Some(&q);
                i += if long { 3 } else { 1 };
                while i < body.len() {
                    if body[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if body[i] == q
                        && (!long || (body.get(i + 1) == Some(&q) && body.get(i + 2) == Some(&q)))
                    {
                        i += if long { 2 } else { 0 };
                        break;
                    }
                    i += 1;
                }
            }
            b'[' | b'(' | b'{' => {
                depth += 1;
                if depth > max_depth {
                    return Err(format!(
                        "brackets nested deeper than {max_depth} levels are refused"
                    ));
                }
            }
            b']' | b')' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Refuses JSON whose objects and arrays nest deeper than `max_depth`, counted outside strings.
fn check_json_depth(body: &[u8], max_depth: usize) -> Result<(), String> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut i = 0;
    while i < body.len() {
        let b = body[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => {
                    depth += 1;
                    if depth > max_depth {
                        return Err(format!(
                            "JSON nested deeper than {max_depth} levels is refused"
                        ));
                    }
                }
                b'}' | b']' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        i += 1;
    }
    Ok(())
}

/// Refuses an XML document with a DOCTYPE anywhere (before the root element or after it: the
/// tokenizer reports one wherever it stands) or with elements nested deeper than `max_depth`.
/// The tokenizer is the one oxrdfxml reads with, so what it finds is what the parser would
/// see; its own errors are the document's errors.
pub fn check_xml(body: &[u8], max_depth: usize) -> Result<(), String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_reader(body);
    let mut depth = 0usize;
    loop {
        match reader.read_event() {
            Ok(Event::DocType(_)) => {
                return Err(
                    "XML documents with a DOCTYPE or entity declarations are refused".into(),
                )
            }
            Ok(Event::Start(_)) => {
                depth += 1;
                if depth > max_depth {
                    return Err(format!(
                        "XML elements nested deeper than {max_depth} levels are refused"
                    ));
                }
            }
            Ok(Event::End(_)) => depth = depth.saturating_sub(1),
            Ok(Event::Eof) => return Ok(()),
            Ok(_) => {}
            Err(e) => return Err(format!("{e} (at byte {})", reader.error_position())),
        }
    }
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

    const RDF_OPEN: &str = "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" \
        xmlns:dct=\"http://purl.org/dc/terms/\" xmlns:dcat=\"http://www.w3.org/ns/dcat#\">";

    /// An entity bomb behind `prolog_bytes` of comment: found wherever it stands.
    fn bomb(prolog_bytes: usize) -> Vec<u8> {
        let mut doc = format!(
            "<?xml version=\"1.0\"?>\n<!--{}-->\n",
            "c".repeat(prolog_bytes)
        );
        doc.push_str("<!DOCTYPE r [<!ENTITY a \"aaaaaaaaaa\">");
        for level in 1..7 {
            let prev = if level == 1 {
                "a".to_string()
            } else {
                format!("e{}", level - 1)
            };
            doc.push_str(&format!(
                "<!ENTITY e{level} \"{}\">",
                format!("&{prev};").repeat(10)
            ));
        }
        doc.push_str("]>\n");
        doc.push_str(RDF_OPEN);
        doc.push_str("<dcat:Dataset rdf:about=\"http://x/ds/1\"><dct:title>&e6;</dct:title></dcat:Dataset></rdf:RDF>");
        doc.into_bytes()
    }

    #[test]
    fn a_doctype_is_refused_wherever_it_stands() {
        for prolog in [0, 1_100_000] {
            let e = parse(&bomb(prolog), RdfFormat::RdfXml, None).unwrap_err();
            assert!(e.contains("DOCTYPE"), "{prolog}: {e}");
        }
        // After the root element too, and in any case.
        let late = format!("{RDF_OPEN}</rdf:RDF><!doctype x [<!ENTITY a \"b\">]>");
        let e = check_xml(late.as_bytes(), MAX_XML_DEPTH);
        assert!(e.is_err_and(|e| e.contains("DOCTYPE") || e.contains("byte")));
        // A DOCTYPE only spelled in a comment, a CDATA section or a literal is not one.
        let fine = format!(
            "{RDF_OPEN}<!-- <!DOCTYPE x> --><dcat:Dataset rdf:about=\"http://x/1\">\
             <dct:title><![CDATA[<!DOCTYPE y>]]></dct:title>\
             <dct:description>&lt;!ENTITY z&gt;</dct:description></dcat:Dataset></rdf:RDF>"
        );
        let g = parse(fine.as_bytes(), RdfFormat::RdfXml, None).unwrap();
        assert_eq!(g.len(), 3);
    }

    #[test]
    fn deep_rdf_xml_is_refused_before_parsing() {
        let depth = 100_000;
        let mut doc = String::from(RDF_OPEN);
        doc.push_str(&"<rdf:Description><dct:hasPart>".repeat(depth / 2));
        doc.push_str(&"</dct:hasPart></rdf:Description>".repeat(depth / 2));
        doc.push_str("</rdf:RDF>");
        let started = std::time::Instant::now();
        let e = parse(doc.as_bytes(), RdfFormat::RdfXml, None).unwrap_err();
        assert!(e.contains("nested deeper than 256"), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        // Within the bound it parses.
        let mut ok = String::from(RDF_OPEN);
        ok.push_str(&"<rdf:Description><dct:hasPart>".repeat(100));
        ok.push_str(&"</dct:hasPart></rdf:Description>".repeat(100));
        ok.push_str("</rdf:RDF>");
        assert!(parse(ok.as_bytes(), RdfFormat::RdfXml, None).is_ok());
    }

    #[test]
    fn a_parse_past_its_deadline_stops() {
        let mut doc = String::from("@prefix dct: <http://purl.org/dc/terms/> .\n");
        for i in 0..5000 {
            doc.push_str(&format!("<http://x/{i}> dct:title \"t{i}\" .\n"));
        }
        let limits = ParseLimits {
            deadline: Some(std::time::Instant::now()),
            ..ParseLimits::default()
        };
        let e = parse_within(doc.as_bytes(), RdfFormat::Turtle, None, limits).unwrap_err();
        assert!(e.contains("too long"), "{e}");
    }

    /// A megabyte of nesting, or of the densest triples, in any format is refused in well
    /// under a second: by its depth, or by the triple bound (a 1 MB collection holds 500,000).
    #[test]
    fn a_megabyte_of_nesting_or_triples_is_refused_cheaply() {
        let mb = 1 << 20;
        let limits = ParseLimits {
            max_triples: Some(50_000),
            ..ParseLimits::default()
        };
        let cases = [
            (
                "nested blank nodes",
                RdfFormat::Turtle,
                format!(
                    "@prefix : <http://x/> .\n:a :p {}1{} .",
                    "[:p ".repeat(mb / 5),
                    "]".repeat(mb / 5)
                ),
            ),
            (
                "nested collections",
                RdfFormat::N3,
                format!(
                    "<http://x/1> <http://x/p> {}1{} .",
                    "(".repeat(mb / 2),
                    ")".repeat(mb / 2)
                ),
            ),
            (
                "a flat collection",
                RdfFormat::Turtle,
                format!("<http://x/1> <http://x/p> ( {} ) .", "1 ".repeat(mb / 2)),
            ),
            (
                "nested node objects",
                RdfFormat::JsonLd,
                format!(
                    "{}\"x\"{}",
                    "{\"@id\": \"http://x/1\", \"http://x/p\": ".repeat(mb / 40),
                    "}".repeat(mb / 40)
                ),
            ),
            (
                "nested arrays",
                RdfFormat::JsonLd,
                format!(
                    "{{\"http://x/p\": {}1{}}}",
                    "[".repeat(mb / 2),
                    "]".repeat(mb / 2)
                ),
            ),
        ];
        for (what, format, doc) in cases {
            let started = std::time::Instant::now();
            let e = parse_within(doc.as_bytes(), format, None, limits).unwrap_err();
            let took = started.elapsed();
            assert!(took < std::time::Duration::from_secs(1), "{what}: {took:?}");
            assert!(e.contains("deeper") || e.contains("triples"), "{what}: {e}");
        }
        // Brackets inside strings, IRIs and comments are not nesting.
        let quoted = format!(
            "<http://x/1> <http://x/p> \"{0}\", '{0}', \"\"\"{0}\"\"\" . # {0}\n<http://x/(((> <http://x/p> 1 .",
            "[".repeat(1000)
        );
        // Three spellings of one literal, and a second subject.
        assert_eq!(
            parse(quoted.as_bytes(), RdfFormat::Turtle, None)
                .unwrap()
                .len(),
            2
        );
        let json = format!(
            "{{\"@id\": \"http://x/1\", \"http://x/p\": \"{}\\\"\"}}",
            "[".repeat(1000)
        );
        assert_eq!(
            parse(json.as_bytes(), RdfFormat::JsonLd, None)
                .unwrap()
                .len(),
            1
        );
    }
}
