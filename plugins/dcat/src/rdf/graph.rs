//! The RDF graph profiles write into, the namespaces they use, and ckanext-dcat's value helpers
//! (spec/dcat.md §7.1–7.2): IRI cleaning, IRI-or-literal, list values, the date rule.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use oxigraph::model::{
    BlankNode, Graph, Literal, NamedNode, NamedNodeRef, NamedOrBlankNode, Term, TermRef, TripleRef,
};
use serde_json::{Map, Value};

/// The prefixes every DCAT graph binds (spec/dcat.md §7.12, plus `hydra`, `prov`, `eli`).
pub const PREFIXES: &[(&str, &str)] = &[
    ("adms", "http://www.w3.org/ns/adms#"),
    ("cnt", "http://www.w3.org/2011/content#"),
    ("dcat", "http://www.w3.org/ns/dcat#"),
    ("dcatap", "http://data.europa.eu/r5r/"),
    ("dct", "http://purl.org/dc/terms/"),
    ("eli", "http://data.europa.eu/eli/ontology#"),
    ("foaf", "http://xmlns.com/foaf/0.1/"),
    ("gsp", "http://www.opengis.net/ont/geosparql#"),
    ("hydra", "http://www.w3.org/ns/hydra/core#"),
    ("locn", "http://www.w3.org/ns/locn#"),
    ("org", "http://www.w3.org/ns/org#"),
    ("owl", "http://www.w3.org/2002/07/owl#"),
    ("prov", "http://www.w3.org/ns/prov#"),
    ("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"),
    ("rdfs", "http://www.w3.org/2000/01/rdf-schema#"),
    ("schema", "http://schema.org/"),
    ("skos", "http://www.w3.org/2004/02/skos/core#"),
    ("spdx", "http://spdx.org/rdf/terms#"),
    ("time", "http://www.w3.org/2006/time#"),
    ("vcard", "http://www.w3.org/2006/vcard/ns#"),
    ("xsd", "http://www.w3.org/2001/XMLSchema#"),
];

/// Expands a compact name of one of [`PREFIXES`] (`"dcat:keyword"`) to a node. A name with an
/// unknown prefix is taken as a full IRI.
pub fn n(curie: &str) -> NamedNode {
    if let Some((p, local)) = curie.split_once(':') {
        if let Some((_, ns)) = PREFIXES.iter().find(|(name, _)| *name == p) {
            return NamedNode::new_unchecked(format!("{ns}{local}"));
        }
    }
    iri(curie)
}

/// The compact form of a full IRI with one of the graph's prefixes, if one fits.
pub fn compact(prefixes: &BTreeMap<String, String>, full: &str) -> Option<String> {
    prefixes
        .iter()
        .filter(|(_, ns)| full.starts_with(ns.as_str()))
        .max_by_key(|(_, ns)| ns.len())
        .map(|(p, ns)| format!("{p}:{}", &full[ns.len()..]))
        .filter(|c| {
            let local = &c[c.find(':').unwrap_or(0) + 1..];
            local
                .chars()
                .all(|ch| ch.is_alphanumeric() || matches!(ch, '_' | '-' | '.'))
                && !local.ends_with('.')
        })
}

/// ckanext-dcat's IRI cleaning: trim, then percent-encode the characters an IRI may not hold
/// (space, `!"$'()*,;<>[]{|}\^` and backtick). Idempotent.
pub fn clean_iri(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.trim().chars() {
        match ch {
            ' ' | '!' | '"' | '$' | '\'' | '(' | ')' | '*' | ',' | ';' | '<' | '>' | '[' | ']'
            | '{' | '|' | '}' | '\\' | '^' | '`' => out.push_str(&format!("%{:02X}", ch as u32)),
            c if c.is_control() => out.push_str(&format!("%{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// A node for an IRI, cleaned first. If the cleaned text is still not a valid IRI (a `%` not
/// followed by two hex digits, a second `#`, …) every character an IRI cannot hold there is
/// percent-encoded. A string with no scheme stays relative: use [`absolute_iri`]
/// where that matters (the parsers of the four formats reject relative IRIs in some positions).
pub fn iri(s: &str) -> NamedNode {
    let cleaned = clean_iri(s);
    match NamedNode::new(cleaned.clone()) {
        Ok(n) => n,
        Err(_) => {
            let strict = encode_strict(&cleaned);
            NamedNode::new(strict.clone()).unwrap_or_else(|_| NamedNode::new_unchecked(strict))
        }
    }
}

/// The node of `s` (cleaned as [`iri`] does) when that is an absolute IRI: a scheme and a
/// valid rest. Relative text (`10.5281/zenodo.123`) gives `None`.
pub fn absolute_iri(s: &str) -> Option<NamedNode> {
    let node = iri(s);
    let scheme_ok = node.as_str().split_once(':').is_some_and(|(scheme, _)| {
        scheme
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    (scheme_ok && NamedNode::new(node.as_str()).is_ok()).then_some(node)
}

/// Percent-encodes `%` without two hex digits after it, `#` after the first one, and any
/// ASCII character outside RFC 3987's allowed set.
fn encode_strict(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len() + 8);
    let mut seen_hash = false;
    for (i, ch) in s.char_indices() {
        let keep = match ch {
            '%' => {
                bytes.len() > i + 2
                    && bytes[i + 1].is_ascii_hexdigit()
                    && bytes[i + 2].is_ascii_hexdigit()
            }
            '#' => !std::mem::replace(&mut seen_hash, true),
            c if c.is_ascii() => c.is_ascii_alphanumeric() || "-._~:/?[]@!$&'()*+,;=".contains(c),
            c => !c.is_control(),
        };
        if keep {
            out.push(ch);
        } else {
            let mut buf = [0u8; 4];
            for b in ch.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// True for the strings ckanext-dcat turns into IRIs: they start with `http://` or `https://`.
pub fn is_http(s: &str) -> bool {
    let t = s.trim();
    t.starts_with("http://") || t.starts_with("https://")
}

/// A plain (`xsd:string`) literal.
pub fn lit(s: &str) -> Term {
    Literal::new_simple_literal(s).into()
}

/// A typed literal; `datatype` is a compact name (`"xsd:decimal"`) or a full IRI.
pub fn typed(s: &str, datatype: &str) -> Term {
    Literal::new_typed_literal(s, n(datatype)).into()
}

/// A language-tagged literal; a tag that is not BCP 47 gives a plain literal.
pub fn lang_lit(s: &str, lang: &str) -> Term {
    Literal::new_language_tagged_literal(s, lang)
        .map(Term::from)
        .unwrap_or_else(|_| lit(s))
}

/// An IRI when the value starts with `http(s)://`, else a plain literal.
pub fn iri_or_literal(s: &str) -> Term {
    if is_http(s) {
        iri(s).into()
    } else {
        lit(s)
    }
}

/// `mailto:` + the address, whatever prefix it had.
pub fn mailto(email: &str) -> NamedNode {
    let e = email.trim();
    iri(&format!(
        "mailto:{}",
        e.strip_prefix("mailto:").unwrap_or(e)
    ))
}

/// A fresh blank node.
pub fn bnode() -> NamedOrBlankNode {
    BlankNode::default().into()
}

/// The string form of a JSON value: strings as they are, numbers and booleans printed, null and
/// empty strings as `None`.
pub fn value_str(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// ckanext-dcat's field lookup: the root key if it has a value, else the first extra whose key
/// is `key` or `dcat_` + `key`.
pub fn field<'a>(d: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if let Some(v) = d.get(key).filter(|v| !is_empty(v)) {
        return Some(v);
    }
    let extras = d.get("extras")?.as_array()?;
    let dcat_key = format!("dcat_{key}");
    extras
        .iter()
        .find(|e| {
            let k = e.get("key").and_then(Value::as_str);
            k == Some(key) || k == Some(dcat_key.as_str())
        })
        .and_then(|e| e.get("value"))
        .filter(|v| !is_empty(v))
}

/// The string value of [`field`], trying each key in order (the fallbacks of the mapping tables).
pub fn field_str(d: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| field(d, k).and_then(value_str))
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// ckanext-dcat's list rule: a JSON list (real or as a string) gives one item each; a number
/// one item; other text with a comma is split on commas (items not trimmed); else one item.
pub fn list_values(v: &Value) -> Vec<String> {
    match v {
        Value::Array(a) => a.iter().filter_map(value_str).collect(),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Array(a)) => a.iter().filter_map(value_str).collect(),
            Ok(n @ Value::Number(_)) => value_str(&n).into_iter().collect(),
            _ if s.contains(',') => s
                .split(',')
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect(),
            _ => value_str(v).into_iter().collect(),
        },
        other => value_str(other).into_iter().collect(),
    }
}

/// [`list_values`] of the first key in `keys` that has a value.
pub fn field_list(d: &Map<String, Value>, keys: &[&str]) -> Vec<String> {
    keys.iter()
        .find_map(|k| field(d, k))
        .map(list_values)
        .unwrap_or_default()
}

/// The items of a list-of-objects field (scheming style: `contact`, `publisher`, …), given as
/// a JSON list or a JSON string holding one.
pub fn field_objects(d: &Map<String, Value>, key: &str) -> Vec<Map<String, Value>> {
    let items = match field(d, key) {
        Some(Value::Array(a)) => a.clone(),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Array(a)) => a,
            Ok(Value::Object(o)) => vec![Value::Object(o)],
            _ => Vec::new(),
        },
        Some(Value::Object(o)) => vec![Value::Object(o.clone())],
        _ => Vec::new(),
    };
    items
        .into_iter()
        .filter_map(|v| match v {
            Value::Object(o) if o.values().any(|v| !is_empty(v)) => Some(o),
            _ => None,
        })
        .collect()
}

/// The date rule (spec/dcat.md §7.2): `YYYY` → `xsd:gYear`, `YYYY-MM` → `xsd:gYearMonth`,
/// `YYYY-MM-DD` → `xsd:date` (lexical form unchanged), any other parseable date or time →
/// `xsd:dateTime` in ISO form, anything else a plain literal.
pub fn date_literal(s: &str) -> Term {
    let t = s.trim();
    if !t.is_ascii() {
        // No date form below has a non-ASCII character (and byte slicing would split one).
        return lit(s);
    }
    let (body, tz) = split_tz(t);
    let digits = |x: &str| x.chars().all(|c| c.is_ascii_digit());
    let kind = match body.len() {
        4 if digits(body) => Some("xsd:gYear"),
        7 if digits(&body[..4]) && &body[4..5] == "-" && digits(&body[5..]) => {
            Some("xsd:gYearMonth")
        }
        10 if NaiveDate::parse_from_str(body, "%Y-%m-%d").is_ok() => Some("xsd:date"),
        _ => None,
    };
    if let Some(dt) = kind {
        return typed(t, dt);
    }
    match parse_datetime(body) {
        Some(dt) => {
            let mut out = iso_datetime(dt);
            match tz {
                "Z" | "z" => out.push_str("+00:00"),
                other => out.push_str(other),
            }
            typed(&out, "xsd:dateTime")
        }
        None => lit(s),
    }
}

fn split_tz(t: &str) -> (&str, &str) {
    if let Some(b) = t.strip_suffix(['Z', 'z']) {
        return (b, &t[b.len()..]);
    }
    if t.len() > 6 {
        let (b, tz) = t.split_at(t.len() - 6);
        let tzb = tz.as_bytes();
        if (tzb[0] == b'+' || tzb[0] == b'-')
            && tzb[3] == b':'
            && tz[1..3].chars().all(|c| c.is_ascii_digit())
            && tz[4..].chars().all(|c| c.is_ascii_digit())
            && (b.contains(['T', ' ', ':']) || b.len() == 10)
        {
            return (b, tz);
        }
    }
    (t, "")
}

/// dateutil's `isoformat()`: `YYYY-MM-DDTHH:MM:SS`, plus `.ffffff` when there are microseconds.
pub fn iso_datetime(dt: NaiveDateTime) -> String {
    let mut out = dt.format("%Y-%m-%dT%H:%M:%S").to_string();
    let micros = dt.and_utc().timestamp_subsec_micros();
    if micros != 0 {
        out.push_str(&format!(".{micros:06}"));
    }
    out
}

/// A lenient date/time parser for the forms CKAN data holds.
pub fn parse_datetime(s: &str) -> Option<NaiveDateTime> {
    const DATETIMES: &[&str] = &[
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
        "%Y/%m/%d %H:%M:%S",
        "%Y%m%dT%H%M%S",
    ];
    const DATES: &[&str] = &[
        "%Y-%m-%d",
        "%Y/%m/%d",
        "%d/%m/%Y",
        "%d.%m.%Y",
        "%Y%m%d",
        "%B %d, %Y",
        "%d %B %Y",
    ];
    let s = s.trim();
    if let Some(dt) = DATETIMES
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(s, f).ok())
    {
        return Some(dt);
    }
    if let Some(d) = DATES
        .iter()
        .find_map(|f| NaiveDate::parse_from_str(s, f).ok())
    {
        return Some(d.and_time(NaiveTime::MIN));
    }
    // "June 2020" → 2020-06-01
    NaiveDate::parse_from_str(&format!("1 {s}"), "%d %B %Y")
        .ok()
        .map(|d| d.and_time(NaiveTime::MIN))
}

/// A graph plus the prefixes its serializations use.
#[derive(Debug, Clone)]
pub struct RdfGraph {
    pub graph: Graph,
    /// Shared with every other graph until a profile binds a prefix of its own (copy on write):
    /// a request's graph does not copy [`PREFIXES`].
    prefixes: Arc<BTreeMap<String, String>>,
}

static DEFAULT_PREFIXES: LazyLock<Arc<BTreeMap<String, String>>> = LazyLock::new(|| {
    Arc::new(
        PREFIXES
            .iter()
            .map(|(p, ns)| (p.to_string(), ns.to_string()))
            .collect(),
    )
});

impl Default for RdfGraph {
    fn default() -> Self {
        RdfGraph::new()
    }
}

impl RdfGraph {
    /// An empty graph with [`PREFIXES`] bound.
    pub fn new() -> RdfGraph {
        RdfGraph {
            graph: Graph::new(),
            prefixes: DEFAULT_PREFIXES.clone(),
        }
    }

    /// Wraps a parsed graph.
    pub fn from_graph(graph: Graph) -> RdfGraph {
        RdfGraph {
            graph,
            ..RdfGraph::new()
        }
    }

    /// Binds (or rebinds) a prefix for the serializations.
    pub fn bind(&mut self, prefix: &str, namespace: &str) {
        Arc::make_mut(&mut self.prefixes).insert(prefix.into(), namespace.into());
    }

    pub fn prefixes(&self) -> &BTreeMap<String, String> {
        &self.prefixes
    }

    /// Adds one triple.
    pub fn add(&mut self, s: &NamedOrBlankNode, p: &NamedNode, o: impl Into<Term>) {
        let o = o.into();
        self.graph.insert(TripleRef::new(s, p, &o));
    }

    /// Adds `s p o`, plus `o a class` when `o` is an IRI (ckanext-dcat's class typing).
    pub fn add_classed(&mut self, s: &NamedOrBlankNode, p: &NamedNode, o: Term, class: &str) {
        if let Term::NamedNode(node) = &o {
            let node: NamedOrBlankNode = node.clone().into();
            self.add(&node, &n("rdf:type"), n(class));
        }
        self.add(s, p, o);
    }

    /// Adds `s rdf:type class`.
    pub fn add_type(&mut self, s: &NamedOrBlankNode, class: &str) {
        self.add(s, &n("rdf:type"), n(class));
    }

    /// Removes every `s p ?o`.
    pub fn remove_all(&mut self, s: &NamedOrBlankNode, p: &NamedNode) {
        let objects = self.objects(s, p);
        for o in objects {
            self.graph.remove(TripleRef::new(s, p, &o));
        }
    }

    /// Removes one triple.
    pub fn remove(&mut self, s: &NamedOrBlankNode, p: &NamedNode, o: &Term) {
        self.graph.remove(TripleRef::new(s, p, o));
    }

    /// The objects of `s p ?o`, in the graph's order.
    pub fn objects(&self, s: &NamedOrBlankNode, p: &NamedNode) -> Vec<Term> {
        self.graph
            .objects_for_subject_predicate(s, p)
            .map(TermRef::into_owned)
            .collect()
    }

    /// The first object of `s p ?o`.
    pub fn object(&self, s: &NamedOrBlankNode, p: &NamedNode) -> Option<Term> {
        self.graph
            .object_for_subject_predicate(s, p)
            .map(TermRef::into_owned)
    }

    /// The lexical value of the first object of `s p ?o` (IRI text or literal value).
    pub fn value(&self, s: &NamedOrBlankNode, p: &NamedNode) -> Option<String> {
        self.object(s, p).map(|t| term_value(&t))
    }

    /// The lexical values of every object of `s p ?o`.
    pub fn values(&self, s: &NamedOrBlankNode, p: &NamedNode) -> Vec<String> {
        self.objects(s, p).iter().map(term_value).collect()
    }

    /// Subjects of `?s rdf:type class`.
    pub fn subjects_of_type(&self, class: &str) -> Vec<NamedOrBlankNode> {
        let class = n(class);
        self.graph
            .subjects_for_predicate_object(&n("rdf:type"), &class)
            .map(|s| s.into_owned())
            .collect()
    }

    /// True when `s rdf:type class` holds.
    pub fn has_type(&self, s: &NamedOrBlankNode, class: &str) -> bool {
        let class: Term = n(class).into();
        self.graph
            .contains(TripleRef::new(s, &n("rdf:type"), &class))
    }

    pub fn len(&self) -> usize {
        self.graph.len()
    }

    pub fn is_empty(&self) -> bool {
        self.graph.is_empty()
    }
}

/// The text of a term: an IRI's string, a literal's lexical value, a blank node's id.
pub fn term_value(t: &Term) -> String {
    match t {
        Term::NamedNode(n) => n.as_str().to_string(),
        Term::BlankNode(b) => b.as_str().to_string(),
        Term::Literal(l) => l.value().to_string(),
        #[allow(unreachable_patterns)]
        _ => String::new(),
    }
}

/// A term as a subject, when it can be one.
pub fn as_subject(t: &Term) -> Option<NamedOrBlankNode> {
    match t {
        Term::NamedNode(n) => Some(n.clone().into()),
        Term::BlankNode(b) => Some(b.clone().into()),
        _ => None,
    }
}

/// The datatype IRI of a literal term.
pub fn datatype(t: &Term) -> Option<NamedNodeRef<'_>> {
    match t {
        Term::Literal(l) => Some(l.datatype()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(t: &Term) -> (String, String) {
        match t {
            Term::Literal(l) => (l.value().to_string(), l.datatype().as_str().to_string()),
            other => (term_value(other), "iri".into()),
        }
    }

    #[test]
    fn date_rule_follows_ckanext_dcat() {
        let x = "http://www.w3.org/2001/XMLSchema#";
        for (input, value, ty) in [
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
            ("2015/07/14", "2015-07-14T00:00:00", "dateTime"),
            ("June 2020", "2020-06-01T00:00:00", "dateTime"),
            (
                "2024-05-31T12:30:01Z",
                "2024-05-31T12:30:01+00:00",
                "dateTime",
            ),
            (
                "2024-05-31T12:30:01+02:00",
                "2024-05-31T12:30:01+02:00",
                "dateTime",
            ),
        ] {
            assert_eq!(
                dt(&date_literal(input)),
                (value.to_string(), format!("{x}{ty}")),
                "{input}"
            );
        }
        assert_eq!(
            dt(&date_literal("not a date")),
            ("not a date".into(), format!("{x}string"))
        );
    }

    #[test]
    fn iri_cleaning_and_lists() {
        assert_eq!(clean_iri(" http://a.b/x y(1) "), "http://a.b/x%20y%281%29");
        assert_eq!(clean_iri(&clean_iri("http://a/ b")), "http://a/%20b");
        assert_eq!(
            list_values(&Value::String("[\"a\", \"b\"]".into())),
            ["a", "b"]
        );
        assert_eq!(list_values(&Value::String("a, b".into())), ["a", " b"]);
        assert_eq!(list_values(&Value::String("5".into())), ["5"]);
        assert_eq!(list_values(&serde_json::json!(["x", 2])), ["x", "2"]);
        assert!(matches!(iri_or_literal("mailto:a@b"), Term::Literal(_)));
        assert!(matches!(iri_or_literal("https://x"), Term::NamedNode(_)));
        assert_eq!(
            iri("http://example.org/report_100%.pdf").as_str(),
            "http://example.org/report_100%25.pdf"
        );
        assert_eq!(iri("http://x/a#b#c").as_str(), "http://x/a#b%23c");
        assert!(absolute_iri("http://x/a b").is_some());
        assert!(absolute_iri("10.5281/zenodo.123").is_none());
        assert!(
            matches!(date_literal("Été 2024"), Term::Literal(l) if l.datatype().as_str().ends_with("#string"))
        );
        assert!(
            matches!(date_literal("19–20"), Term::Literal(l) if l.datatype().as_str().ends_with("#string"))
        );
        assert!(
            matches!(date_literal("2024-05-31+02:00"), Term::Literal(l) if l.datatype().as_str().ends_with("#date"))
        );
    }

    #[test]
    fn field_lookup_reads_root_then_extras_then_dcat_prefixed_extras() {
        let d = serde_json::json!({"a": "", "extras": [{"key": "dcat_a", "value": "x"}, {"key": "b", "value": "y"}]});
        let d = d.as_object().unwrap();
        assert_eq!(field_str(d, &["a"]).as_deref(), Some("x"));
        assert_eq!(field_str(d, &["c", "b"]).as_deref(), Some("y"));
    }
}
