//! Schema files in YAML, read as PyYAML's `safe_load` reads them (ckanext-scheming's loader):
//! plain scalars resolved by YAML 1.1's rules (`yes`/`on` are booleans, `~` is null), merge
//! keys, anchors and aliases — with every alias expansion counted against a node budget, so a
//! "billion laughs" file is refused instead of filling memory. Each mapping entry and sequence
//! item keeps the line it starts on, so a bad field is reported at its line.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// At most this many nodes (scalars, lists, mappings) after aliases are expanded: a real
/// schema file has a few thousand.
pub const MAX_NODES: usize = 200_000;

/// A parsed document and the line (1-based) of each node, by JSON pointer (`/dataset_fields/3`).
#[derive(Debug, Default)]
pub struct Document {
    pub value: Value,
    pub lines: HashMap<String, usize>,
}

impl Document {
    /// The line of the node at `pointer`, or of its nearest ancestor that has one.
    pub fn line(&self, pointer: &str) -> Option<usize> {
        let mut p = pointer;
        loop {
            if let Some(l) = self.lines.get(p) {
                return Some(*l);
            }
            let cut = p.rfind('/')?;
            p = &p[..cut];
        }
    }
}

/// Parses one YAML document (an empty file is null).
pub fn parse(text: &str) -> Result<Document, String> {
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(text);
    parser
        .load(&mut builder, false)
        .map_err(|e| format!("YAML syntax error: {e}"))?;
    if let Some(e) = builder.error {
        return Err(e);
    }
    Ok(Document {
        value: builder.root.unwrap_or(Value::Null),
        lines: builder.lines,
    })
}

/// A collection being read: its items, its anchor, and the nodes under it (aliases counted).
enum Open {
    Seq(Vec<Value>, usize, usize),
    Map(
        Map<String, Value>,
        Option<String>,
        usize,
        usize,
        Vec<String>,
    ),
}

#[derive(Default)]
struct Builder {
    stack: Vec<(Open, String)>,
    root: Option<Value>,
    anchors: HashMap<usize, (Value, usize)>,
    lines: HashMap<String, usize>,
    nodes: usize,
    error: Option<String>,
}

/// JSON pointer escaping of one key.
fn escape(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

impl Builder {
    fn fail(&mut self, msg: String) {
        if self.error.is_none() {
            self.error = Some(msg);
        }
    }

    /// The pointer the next value goes to, or `None` when it is a mapping key.
    fn next_pointer(&self) -> Option<String> {
        match self.stack.last() {
            None => Some(String::new()),
            Some((Open::Seq(items, ..), p)) => Some(format!("{p}/{}", items.len())),
            Some((Open::Map(_, Some(k), ..), p)) => Some(format!("{p}/{}", escape(k))),
            Some((Open::Map(_, None, ..), _)) => None,
        }
    }

    fn count(&mut self, n: usize, mark: Marker) -> bool {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > MAX_NODES {
            self.fail(format!(
                "line {}: the document expands to more than {MAX_NODES} nodes (aliases expanded); refused",
                mark.line()
            ));
            return false;
        }
        true
    }

    /// Puts a finished value where it belongs (a key, a mapping value, a list item, the root).
    fn place(&mut self, value: Value, size: usize, anchor: usize, mark: Marker) {
        if anchor > 0 {
            self.anchors.insert(anchor, (value.clone(), size));
        }
        match self.stack.last_mut() {
            None => self.root = Some(value),
            Some((Open::Seq(items, _, n), _)) => {
                items.push(value);
                *n += size;
            }
            Some((Open::Map(_, key @ None, _, _, merged), _)) => {
                let k = match value {
                    Value::String(s) => s,
                    Value::Null => "None".into(),
                    Value::Bool(b) => if b { "True" } else { "False" }.into(),
                    Value::Number(n) => n.to_string(),
                    _ => {
                        let line = mark.line();
                        self.fail(format!("line {line}: a mapping key must be a scalar"));
                        return;
                    }
                };
                if let Some(i) = merged.iter().position(|m| *m == k) {
                    // A key set here wins over one a merge key brought in.
                    merged.swap_remove(i);
                }
                // A key given twice: the last value wins, as PyYAML reads it (a file
                // ckanext-scheming ships, ckan_formpages_draft.yaml, has one).
                *key = Some(k);
            }
            Some((Open::Map(map, key @ Some(_), _, n, merged), _)) => {
                let k = key.take().unwrap_or_default();
                *n += size;
                if k == "<<" {
                    // YAML 1.1 merge key: the keys of the mapping (or mappings) not set here.
                    let sources = match value {
                        Value::Object(m) => vec![m],
                        Value::Array(items) => items
                            .into_iter()
                            .filter_map(|v| match v {
                                Value::Object(m) => Some(m),
                                _ => None,
                            })
                            .collect(),
                        _ => Vec::new(),
                    };
                    for source in sources {
                        for (sk, sv) in source {
                            if !map.contains_key(&sk) {
                                merged.push(sk.clone());
                                map.insert(sk, sv);
                            }
                        }
                    }
                } else {
                    map.insert(k, value);
                }
            }
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        if self.error.is_some() {
            return;
        }
        match ev {
            Event::Scalar(text, style, anchor, tag) => {
                if !self.count(1, mark) {
                    return;
                }
                if let Some(p) = self.next_pointer() {
                    self.lines.insert(p, mark.line());
                }
                let plain = style == TScalarStyle::Plain && tag.is_none();
                let value = if plain {
                    resolve_plain(&text)
                } else {
                    Value::String(text)
                };
                self.place(value, 1, anchor, mark);
            }
            Event::SequenceStart(_, _) | Event::MappingStart(_, _) => {
                if !self.count(1, mark) {
                    return;
                }
                let pointer = match self.next_pointer() {
                    Some(p) => p,
                    None => {
                        self.fail(format!(
                            "line {}: a mapping key must be a scalar",
                            mark.line()
                        ));
                        return;
                    }
                };
                self.lines.insert(pointer.clone(), mark.line());
                let anchor = match ev {
                    Event::SequenceStart(a, _) | Event::MappingStart(a, _) => a,
                    _ => 0,
                };
                let open = if matches!(ev, Event::SequenceStart(..)) {
                    Open::Seq(Vec::new(), anchor, 1)
                } else {
                    Open::Map(Map::new(), None, anchor, 1, Vec::new())
                };
                self.stack.push((open, pointer));
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some((open, _)) = self.stack.pop() else {
                    return;
                };
                let (value, size, anchor) = match open {
                    Open::Seq(items, anchor, n) => (Value::Array(items), n, anchor),
                    Open::Map(map, _, anchor, n, _) => (Value::Object(map), n, anchor),
                };
                self.place(value, size, anchor, mark);
            }
            Event::Alias(id) => {
                let Some((value, size)) = self.anchors.get(&id).cloned() else {
                    self.fail(format!(
                        "line {}: an alias to an unknown anchor",
                        mark.line()
                    ));
                    return;
                };
                if !self.count(size, mark) {
                    return;
                }
                if let Some(p) = self.next_pointer() {
                    self.lines.insert(p, mark.line());
                }
                self.place(value, size, 0, mark);
            }
            Event::Nothing
            | Event::StreamStart
            | Event::StreamEnd
            | Event::DocumentStart
            | Event::DocumentEnd => {}
        }
    }
}

/// A plain scalar as PyYAML's resolver reads it (YAML 1.1): null, booleans, integers
/// (decimal, `0x`, `0o`/leading-zero octal, `_` separators), floats (`.inf`, `.nan`), else text.
pub fn resolve_plain(s: &str) -> Value {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Value::Bool(true)
        }
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Value::Bool(false)
        }
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => {
            // JSON has no infinities: kept as the text (schemas never use them).
            return Value::String(s.into());
        }
        _ => {}
    }
    if let Some(n) = resolve_int(s) {
        return Value::Number(n.into());
    }
    if let Some(f) = resolve_float(s) {
        if let Some(n) = Number::from_f64(f) {
            return Value::Number(n);
        }
    }
    Value::String(s.into())
}

fn resolve_int(s: &str) -> Option<i64> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let clean: String = body.chars().filter(|c| *c != '_').collect();
    if clean.is_empty() || body.starts_with('_') {
        return None;
    }
    let n = if let Some(hex) = clean.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()?
    } else if let Some(oct) = clean.strip_prefix("0o") {
        i64::from_str_radix(oct, 8).ok()?
    } else if clean.len() > 1 && clean.starts_with('0') {
        i64::from_str_radix(&clean[1..], 8).ok()?
    } else if clean.bytes().all(|b| b.is_ascii_digit()) {
        clean.parse().ok()?
    } else {
        return None;
    };
    Some(if neg { -n } else { n })
}

fn resolve_float(s: &str) -> Option<f64> {
    // PyYAML's float: [-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)?
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int, frac) = mantissa.split_once('.')?;
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    if !digits(int) || !digits(frac) || int.starts_with('_') || (int.is_empty() && frac.is_empty())
    {
        return None;
    }
    if let Some(e) = exp {
        let e = e.strip_prefix(['-', '+'])?;
        if e.is_empty() || !e.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
    }
    s.replace('_', "").parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_resolve_as_pyyaml_does() {
        let d =
            parse("a: yes\nb: ~\nc: 12\nd: 1.5\ne: '12'\nf: text here\ng: 0x1F\nh: off\n").unwrap();
        assert_eq!(
            d.value,
            json!({"a": true, "b": null, "c": 12, "d": 1.5, "e": "12", "f": "text here", "g": 31, "h": false})
        );
    }

    #[test]
    fn lines_are_kept_per_item() {
        let d = parse("fields:\n- field_name: a\n\n- field_name: b\n  label: B\n").unwrap();
        assert_eq!(d.line("/fields/1"), Some(4));
        assert_eq!(d.line("/fields/1/label"), Some(5));
        assert_eq!(d.line("/fields/1/nothing"), Some(4));
    }

    #[test]
    fn aliases_and_merge_keys_expand() {
        let d = parse("base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  y: 3\nlist: [*b]\n").unwrap();
        assert_eq!(d.value["other"], json!({"y": 3, "x": 1}));
        assert_eq!(d.value["list"], json!([{"x": 1, "y": 2}]));
    }

    #[test]
    fn a_yaml_bomb_is_refused_not_expanded() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        let err = parse(&text).unwrap_err();
        assert!(err.contains("more than 200000 nodes"), "{err}");
    }

    #[test]
    fn duplicate_keys_keep_the_last_and_syntax_errors_name_their_line() {
        assert_eq!(
            parse("a: 1\nb: 2\na: 3\n").unwrap().value,
            json!({"a": 3, "b": 2})
        );
        assert!(parse("a: [1, 2\n")
            .unwrap_err()
            .starts_with("YAML syntax error"));
    }
}
