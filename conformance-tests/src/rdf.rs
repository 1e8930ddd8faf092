//! RDF bodies made comparable: parsed with oxigraph, volatile values redacted, blank nodes
//! labelled from what they hold (not from ids, timestamps or document order), and written as
//! sorted N-Triples lines. Two answers that differ only in those volatile values, in blank
//! node ids or in triple order give the same lines.

use std::collections::BTreeMap;

use oxigraph::io::{JsonLdProfileSet, RdfFormat, RdfParser};
use oxigraph::model::{NamedOrBlankNodeRef, TermRef, Triple};

use crate::Redactor;

/// The parser for a step's `rdf` syntax name.
pub fn syntax(name: &str) -> Option<RdfFormat> {
    match name {
        "rdfxml" => Some(RdfFormat::RdfXml),
        "turtle" => Some(RdfFormat::Turtle),
        "n3" => Some(RdfFormat::N3),
        "jsonld" => Some(RdfFormat::JsonLd {
            profile: JsonLdProfileSet::empty(),
        }),
        _ => None,
    }
}

/// Parses `body` and returns its canonical, redacted N-Triples lines.
pub fn canonical_lines(
    body: &[u8],
    syntax_name: &str,
    redactor: &Redactor,
) -> Result<Vec<String>, String> {
    let format = syntax(syntax_name).ok_or_else(|| format!("unknown syntax {syntax_name}"))?;
    let mut triples: Vec<Triple> = Vec::new();
    for q in RdfParser::from_format(format)
        .without_named_graphs()
        .for_slice(body)
    {
        let q = q.map_err(|e| e.to_string())?;
        triples.push(Triple::new(q.subject, q.predicate, q.object));
    }
    let term = |t: TermRef<'_>| -> String {
        match t {
            TermRef::NamedNode(n) => format!("<{}>", redactor.redact_str(n.as_str())),
            TermRef::Literal(l) => {
                let v = redactor
                    .redact_str(l.value())
                    .replace('\\', "\\\\")
                    .replace('"', "\\\"")
                    .replace('\n', "\\n");
                match l.language() {
                    Some(lang) => format!("\"{v}\"@{lang}"),
                    None if l.datatype().as_str() == "http://www.w3.org/2001/XMLSchema#string" => {
                        format!("\"{v}\"")
                    }
                    None => format!("\"{v}\"^^<{}>", l.datatype().as_str()),
                }
            }
            TermRef::BlankNode(b) => format!("_:{}", b.as_str()),
            #[allow(unreachable_patterns)]
            _ => t.to_string(),
        }
    };

    // Each blank node's signature: its outgoing (predicate, object) pairs, blank objects by
    // their own signature, sorted; then a short hash of it as the label.
    let mut out_edges: BTreeMap<String, Vec<(String, TermRef<'_>)>> = BTreeMap::new();
    for t in &triples {
        if let NamedOrBlankNodeRef::BlankNode(b) = t.subject.as_ref() {
            out_edges
                .entry(b.as_str().to_string())
                .or_default()
                .push((t.predicate.as_str().to_string(), t.object.as_ref()));
        }
    }
    fn signature(
        id: &str,
        edges: &BTreeMap<String, Vec<(String, TermRef<'_>)>>,
        term: &dyn Fn(TermRef<'_>) -> String,
        depth: usize,
    ) -> String {
        let mut parts: Vec<String> = edges
            .get(id)
            .map(|es| {
                es.iter()
                    .map(|(p, o)| match o {
                        TermRef::BlankNode(b) if depth < 8 => {
                            format!("{p} [{}]", signature(b.as_str(), edges, term, depth + 1))
                        }
                        // Deeper (or cyclic) chains: a fixed placeholder, never the random id.
                        TermRef::BlankNode(_) => format!("{p} [deep]"),
                        other => format!("{p} {}", term(*other)),
                    })
                    .collect()
            })
            .unwrap_or_default();
        parts.sort();
        parts.join(";")
    }
    let mut labels: BTreeMap<String, String> = BTreeMap::new();
    for id in out_edges.keys() {
        let sig = signature(id, &out_edges, &term, 0);
        labels.insert(id.clone(), format!("b{:016x}", fnv1a(sig.as_bytes())));
    }
    let show = |t: TermRef<'_>| -> String {
        match t {
            TermRef::BlankNode(b) => format!(
                "_:{}",
                labels
                    .get(b.as_str())
                    .cloned()
                    .unwrap_or_else(|| "b_empty".into())
            ),
            other => term(other),
        }
    };
    let mut lines: Vec<String> = triples
        .iter()
        .map(|t| {
            let s = match t.subject.as_ref() {
                NamedOrBlankNodeRef::NamedNode(n) => TermRef::NamedNode(n),
                NamedOrBlankNodeRef::BlankNode(b) => TermRef::BlankNode(b),
            };
            format!(
                "{} <{}> {} .",
                show(s),
                t.predicate.as_str(),
                show(t.object.as_ref())
            )
        })
        .collect();
    lines.sort();
    Ok(lines)
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_node_ids_order_and_volatile_values_do_not_change_the_lines() {
        let a = r#"@prefix dcat: <http://www.w3.org/ns/dcat#> .
<http://x/dataset/0b2c8f9e-6a43-4c55-9f4e-0a6f0f3d9c11> dcat:contactPoint _:a ; dcat:keyword "k" .
_:a <http://www.w3.org/2006/vcard/ns#fn> "Jane" ."#;
        let b = r#"<http://x/dataset/11111111-2222-3333-4444-555555555555> <http://www.w3.org/ns/dcat#keyword> "k" .
_:zz <http://www.w3.org/2006/vcard/ns#fn> "Jane" .
<http://x/dataset/11111111-2222-3333-4444-555555555555> <http://www.w3.org/ns/dcat#contactPoint> _:zz ."#;
        let r = Redactor::new();
        let la = canonical_lines(a.as_bytes(), "turtle", &r).unwrap();
        let lb = canonical_lines(b.as_bytes(), "turtle", &r).unwrap();
        assert_eq!(la, lb);
        assert_eq!(la.len(), 3);
        assert!(la[0].contains("<http://x/dataset/[uuid]>") || la[1].contains("[uuid]"));
        assert!(canonical_lines(b"not turtle <", "turtle", &r).is_err());
    }
}
