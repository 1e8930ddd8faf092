//! A byte-exact port of what CKAN's `activity_diff` action takes from Python: CPython 3's
//! `difflib` (`SequenceMatcher`, `unified_diff`, `context_diff`, `ndiff` and
//! `HtmlDiff().make_table`), `json.dumps(obj, indent=2, sort_keys=True)` and the
//! `re.findall(r".{1,70}(?:\s+|$)", line)` the action wraps lines with before the HTML diff.
//!
//! The algorithms are CPython's (Lib/difflib.py, 3.11), heuristics included (the "autojunk"
//! popularity rule for sequences of 200 elements or more, `Differ._fancy_replace`'s 0.75 ratio
//! cutoff), so that the output is identical, character for character, to what CKAN answers.
//! Only the shapes differ where Python recursed: `_fancy_replace` runs on an explicit stack,
//! so that a big replaced block cannot overflow ours.
//!
//! Lengths, indices and columns count Unicode code points, as Python's `str` does.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Write as _;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use serde_json::{Number, Value};

// ---------------------------------------------------------------------------------------------
// The whole `activity_diff` computation
// ---------------------------------------------------------------------------------------------

/// What CKAN's `activity_diff` computes for `diff_type` (`"unified"`, `"context"` or
/// `"html"`) between the previous and this version of an object; `None` for another type.
/// `html_prefix_index` is the `HtmlDiff` anchor counter (see [`html_make_table`]), unused by
/// the other two types.
pub fn activity_diff(
    prev: &Value,
    this: &Value,
    diff_type: &str,
    html_prefix_index: usize,
) -> Option<String> {
    let a = json_lines(prev);
    let b = json_lines(this);
    match diff_type {
        "unified" => Some(unified_diff(&a, &b).join("\n")),
        "context" => Some(context_diff(&a, &b).join("\n")),
        "html" => {
            let wrap = |lines: &[String]| -> Vec<String> {
                lines.iter().flat_map(|line| wrap70(line)).collect()
            };
            Some(html_make_table(&wrap(&a), &wrap(&b), html_prefix_index))
        }
        _ => None,
    }
}

/// `json.dumps(v, indent=2, sort_keys=True).split("\n")`.
pub fn json_lines(v: &Value) -> Vec<String> {
    python_json_dumps_indent2_sorted(v)
        .split('\n')
        .map(str::to_owned)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Python's notion of whitespace
// ---------------------------------------------------------------------------------------------

/// `str.isspace()` for one character (also what `re`'s `\s` and `str.rstrip()` use): Unicode's
/// White_Space plus the four information separators U+001C..U+001F.
fn py_isspace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `s.rstrip()`.
fn py_rstrip(s: &str) -> &str {
    s.trim_end_matches(py_isspace)
}

// ---------------------------------------------------------------------------------------------
// json.dumps(v, indent=2, sort_keys=True)
// ---------------------------------------------------------------------------------------------

/// Exactly `json.dumps(v, indent=2, sort_keys=True)`: ASCII only (`\uXXXX` escapes, astral
/// characters as surrogate pairs), `",\n"` between items and `": "` after keys, `{}` and `[]`
/// for empty containers, keys in code point order, floats as Python's `repr`.
pub fn python_json_dumps_indent2_sorted(v: &Value) -> String {
    let mut out = String::new();
    dump_value(&mut out, v, 0);
    out
}

fn newline_indent(out: &mut String, level: usize) {
    out.push('\n');
    for _ in 0..level {
        out.push_str("  ");
    }
}

fn dump_value(out: &mut String, v: &Value, level: usize) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => dump_number(out, n),
        Value::String(s) => dump_str(out, s),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (idx, item) in items.iter().enumerate() {
                if idx > 0 {
                    out.push(',');
                }
                newline_indent(out, level + 1);
                dump_value(out, item, level + 1);
            }
            newline_indent(out, level);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            // Byte order of UTF-8 is code point order, Python's order of `str`.
            entries.sort_by(|x, y| x.0.cmp(y.0));
            out.push('{');
            for (idx, (key, item)) in entries.into_iter().enumerate() {
                if idx > 0 {
                    out.push(',');
                }
                newline_indent(out, level + 1);
                dump_str(out, key);
                out.push_str(": ");
                dump_value(out, item, level + 1);
            }
            newline_indent(out, level);
            out.push('}');
        }
    }
}

fn dump_number(out: &mut String, n: &Number) {
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
    } else if let Some(f) = n.as_f64() {
        out.push_str(&python_float_repr(f));
    } else {
        out.push_str(&n.to_string());
    }
}

/// Python's `float.__repr__` (the shortest string that reads back as the same double; fixed
/// notation for exponents -4..=15, else `d.ddde+XX`), with `json`'s names for the
/// non-finite values.
pub fn python_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    let mut out = String::new();
    if f.is_sign_negative() {
        out.push('-');
    }
    if f == 0.0 {
        out.push_str("0.0");
        return out;
    }
    // Rust's `{:e}` gives the same shortest round-trip digits as Python's repr.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let ndigits = digits.len() as i64;
    // The value is 0.DIGITS * 10**decpt.
    let decpt = exponent + 1;
    if decpt <= -4 || decpt > 16 {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let _ = write!(
            out,
            "e{}{:02}",
            if exponent < 0 { '-' } else { '+' },
            exponent.abs()
        );
    } else if decpt <= 0 {
        out.push_str("0.");
        for _ in 0..-decpt {
            out.push('0');
        }
        out.push_str(&digits);
    } else if decpt >= ndigits {
        out.push_str(&digits);
        for _ in 0..decpt - ndigits {
            out.push('0');
        }
        out.push_str(".0");
    } else {
        let (int, frac) = digits.split_at(decpt as usize);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    }
    out
}

fn dump_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let cp = u32::from(c);
                if cp >= 0x1_0000 {
                    let v = cp - 0x1_0000;
                    let high = 0xd800 | (v >> 10);
                    let low = 0xdc00 | (v & 0x3ff);
                    let _ = write!(out, "\\u{high:04x}\\u{low:04x}");
                } else {
                    let _ = write!(out, "\\u{cp:04x}");
                }
            }
        }
    }
    out.push('"');
}

// ---------------------------------------------------------------------------------------------
// re.findall(r".{1,70}(?:\s+|$)", line)
// ---------------------------------------------------------------------------------------------

/// `re.findall(r".{1,70}(?:\s+|$)", line)`: pieces of at most 70 characters (not newlines)
/// that end before whitespace (which the piece takes along, all of it) or at the end of the
/// line (or before a final newline). What cannot be split so (a word longer than 70
/// characters) is left out up to where a piece can start.
pub fn wrap70(line: &str) -> Vec<String> {
    findall_wrap(line, 70)
}

fn findall_wrap(line: &str, width: usize) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    // Byte offset of each character, and of the end.
    let offsets: Vec<usize> = line
        .char_indices()
        .map(|(o, _)| o)
        .chain(std::iter::once(line.len()))
        .collect();
    let n = chars.len();
    let is_space_at = |q: usize| chars.get(q).copied().is_some_and(py_isspace);
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < n {
        // `.{1,70}` greedy: the longest run of non-newlines, then backtracking.
        let mut run = 0;
        while run < width && chars.get(pos + run).is_some_and(|&c| c != '\n') {
            run += 1;
        }
        let mut end = None;
        for k in (1..=run).rev() {
            let q = pos + k;
            if is_space_at(q) {
                // `\s+`, greedy; nothing follows in the pattern.
                let mut e = q;
                while is_space_at(e) {
                    e += 1;
                }
                end = Some(e);
                break;
            }
            // `$`: at the end, or before a newline that ends the string.
            if q == n || (q + 1 == n && chars.get(q) == Some(&'\n')) {
                end = Some(q);
                break;
            }
        }
        match end {
            Some(e) => {
                let from = offsets.get(pos).copied().unwrap_or(line.len());
                let to = offsets.get(e).copied().unwrap_or(line.len());
                out.push(line.get(from..to).unwrap_or("").to_owned());
                pos = e;
            }
            None => pos += 1,
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// SequenceMatcher
// ---------------------------------------------------------------------------------------------

/// FxHash: a fast hash for small keys (characters, interned line numbers) we control.
#[derive(Default, Clone, Copy)]
struct FxHasher {
    hash: u64,
}

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.add(u64::from(byte));
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        self.hash
    }
}

type FxBuild = BuildHasherDefault<FxHasher>;
type FxMap<K, V> = HashMap<K, V, FxBuild>;
type FxSet<K> = HashSet<K, FxBuild>;

/// A matching block: `a[a..a+size] == b[b..b+size]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Match {
    pub a: usize,
    pub b: usize,
    pub size: usize,
}

/// An opcode's tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    Replace,
    Delete,
    Insert,
    Equal,
}

impl Tag {
    /// Python's name of the tag.
    pub fn as_str(self) -> &'static str {
        match self {
            Tag::Replace => "replace",
            Tag::Delete => "delete",
            Tag::Insert => "insert",
            Tag::Equal => "equal",
        }
    }
}

/// `(tag, i1, i2, j1, j2)`: `a[i1..i2]` becomes `b[j1..j2]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opcode {
    pub tag: Tag,
    pub i1: usize,
    pub i2: usize,
    pub j1: usize,
    pub j2: usize,
}

/// `2.0 * matches / length`, or 1.0 for two empty sequences.
fn calculate_ratio(matches: usize, length: usize) -> f64 {
    if length > 0 {
        2.0 * matches as f64 / length as f64
    } else {
        1.0
    }
}

/// CPython's `difflib.SequenceMatcher`, over sequences of hashable `Copy` elements (diff
/// lines as interned numbers, characters of a line).
pub struct SequenceMatcher<'s, T> {
    isjunk: Option<fn(&T) -> bool>,
    autojunk: bool,
    a: &'s [T],
    b: &'s [T],
    b2j: FxMap<T, Vec<usize>>,
    bjunk: FxSet<T>,
    bpopular: FxSet<T>,
    fullbcount: Option<FxMap<T, usize>>,
    matching_blocks: Option<Vec<Match>>,
    opcodes: Option<Vec<Opcode>>,
    // find_longest_match's `j2len` and `newj2len` as dense arrays over `b`, zero except at
    // the indices listed alongside (reset after use, kept between calls).
    j2len: Vec<usize>,
    newj2len: Vec<usize>,
    touched: Vec<usize>,
    newtouched: Vec<usize>,
}

impl<'s, T: Copy + Eq + Hash> SequenceMatcher<'s, T> {
    /// `SequenceMatcher(isjunk, a, b)` (autojunk on).
    pub fn new(isjunk: Option<fn(&T) -> bool>, a: &'s [T], b: &'s [T]) -> Self {
        Self::with_autojunk(isjunk, a, b, true)
    }

    /// `SequenceMatcher(isjunk, a, b, autojunk)`.
    pub fn with_autojunk(
        isjunk: Option<fn(&T) -> bool>,
        a: &'s [T],
        b: &'s [T],
        autojunk: bool,
    ) -> Self {
        let mut matcher = SequenceMatcher {
            isjunk,
            autojunk,
            a,
            b,
            b2j: FxMap::default(),
            bjunk: FxSet::default(),
            bpopular: FxSet::default(),
            fullbcount: None,
            matching_blocks: None,
            opcodes: None,
            j2len: Vec::new(),
            newj2len: Vec::new(),
            touched: Vec::new(),
            newtouched: Vec::new(),
        };
        matcher.chain_b();
        matcher
    }

    /// `set_seqs(a, b)`.
    pub fn set_seqs(&mut self, a: &'s [T], b: &'s [T]) {
        self.set_seq1(a);
        self.set_seq2(b);
    }

    /// `set_seq1(a)`.
    pub fn set_seq1(&mut self, a: &'s [T]) {
        if std::ptr::eq(a, self.a) {
            return;
        }
        self.a = a;
        self.matching_blocks = None;
        self.opcodes = None;
    }

    /// `set_seq2(b)`.
    pub fn set_seq2(&mut self, b: &'s [T]) {
        if std::ptr::eq(b, self.b) {
            return;
        }
        self.b = b;
        self.matching_blocks = None;
        self.opcodes = None;
        self.fullbcount = None;
        self.chain_b();
    }

    /// Whether `elt` is in `bjunk`: an element of `b` that `isjunk` calls junk.
    pub fn is_bjunk(&self, elt: &T) -> bool {
        self.bjunk.contains(elt)
    }

    /// Whether `elt` is in `bpopular`: an element of `b` the autojunk heuristic left out.
    pub fn is_bpopular(&self, elt: &T) -> bool {
        self.bpopular.contains(elt)
    }

    fn chain_b(&mut self) {
        let b = self.b;
        let mut b2j: FxMap<T, Vec<usize>> = FxMap::default();
        for (i, &elt) in b.iter().enumerate() {
            b2j.entry(elt).or_default().push(i);
        }
        self.bjunk.clear();
        if let Some(isjunk) = self.isjunk {
            for elt in b2j.keys() {
                if isjunk(elt) {
                    self.bjunk.insert(*elt);
                }
            }
            for elt in &self.bjunk {
                b2j.remove(elt);
            }
        }
        self.bpopular.clear();
        let n = b.len();
        if self.autojunk && n >= 200 {
            let ntest = n / 100 + 1;
            for (elt, idxs) in &b2j {
                if idxs.len() > ntest {
                    self.bpopular.insert(*elt);
                }
            }
            for elt in &self.bpopular {
                b2j.remove(elt);
            }
        }
        self.b2j = b2j;
        self.j2len = vec![0; n];
        self.newj2len = vec![0; n];
        self.touched.clear();
        self.newtouched.clear();
    }

    /// `find_longest_match(alo, ahi, blo, bhi)` (bounds past the ends are cut to them).
    pub fn find_longest_match(&mut self, alo: usize, ahi: usize, blo: usize, bhi: usize) -> Match {
        let (a, b) = (self.a, self.b);
        let ahi = ahi.min(a.len());
        let bhi = bhi.min(b.len());
        let (mut besti, mut bestj, mut bestsize) = (alo, blo, 0usize);
        if alo < ahi && blo < bhi {
            for (i, ai) in a.iter().enumerate().take(ahi).skip(alo) {
                if let Some(indices) = self.b2j.get(ai) {
                    for &j in indices {
                        if j < blo {
                            continue;
                        }
                        if j >= bhi {
                            break;
                        }
                        let previous = match j.checked_sub(1) {
                            Some(jm1) => self.j2len.get(jm1).copied().unwrap_or(0),
                            None => 0,
                        };
                        let k = previous + 1;
                        if let Some(slot) = self.newj2len.get_mut(j) {
                            *slot = k;
                            self.newtouched.push(j);
                        }
                        if k > bestsize {
                            besti = i + 1 - k;
                            bestj = j + 1 - k;
                            bestsize = k;
                        }
                    }
                }
                // j2len = newj2len
                for &j in &self.touched {
                    if let Some(slot) = self.j2len.get_mut(j) {
                        *slot = 0;
                    }
                }
                self.touched.clear();
                std::mem::swap(&mut self.j2len, &mut self.newj2len);
                std::mem::swap(&mut self.touched, &mut self.newtouched);
            }
            for &j in &self.touched {
                if let Some(slot) = self.j2len.get_mut(j) {
                    *slot = 0;
                }
            }
            self.touched.clear();
        }

        let bjunk = &self.bjunk;
        let a_at = |i: usize| a.get(i);
        let b_at = |j: usize| b.get(j);
        let is_junk = |j: usize| b.get(j).is_some_and(|x| bjunk.contains(x));
        let same = |i: usize, j: usize| matches!((a_at(i), b_at(j)), (Some(x), Some(y)) if x == y);
        while besti > alo && bestj > blo && !is_junk(bestj - 1) && same(besti - 1, bestj - 1) {
            besti -= 1;
            bestj -= 1;
            bestsize += 1;
        }
        while besti + bestsize < ahi
            && bestj + bestsize < bhi
            && !is_junk(bestj + bestsize)
            && same(besti + bestsize, bestj + bestsize)
        {
            bestsize += 1;
        }
        while besti > alo && bestj > blo && is_junk(bestj - 1) && same(besti - 1, bestj - 1) {
            besti -= 1;
            bestj -= 1;
            bestsize += 1;
        }
        while besti + bestsize < ahi
            && bestj + bestsize < bhi
            && is_junk(bestj + bestsize)
            && same(besti + bestsize, bestj + bestsize)
        {
            bestsize += 1;
        }
        Match {
            a: besti,
            b: bestj,
            size: bestsize,
        }
    }

    /// `get_matching_blocks()`, the last one `(len(a), len(b), 0)`.
    pub fn get_matching_blocks(&mut self) -> &[Match] {
        if self.matching_blocks.is_none() {
            let blocks = self.compute_matching_blocks();
            self.matching_blocks = Some(blocks);
        }
        self.matching_blocks.as_deref().unwrap_or(&[])
    }

    fn compute_matching_blocks(&mut self) -> Vec<Match> {
        let (la, lb) = (self.a.len(), self.b.len());
        let mut queue = vec![(0, la, 0, lb)];
        let mut blocks = Vec::new();
        while let Some((alo, ahi, blo, bhi)) = queue.pop() {
            let x = self.find_longest_match(alo, ahi, blo, bhi);
            let (i, j, k) = (x.a, x.b, x.size);
            if k > 0 {
                blocks.push(x);
                if alo < i && blo < j {
                    queue.push((alo, i, blo, j));
                }
                if i + k < ahi && j + k < bhi {
                    queue.push((i + k, ahi, j + k, bhi));
                }
            }
        }
        blocks.sort();

        let (mut i1, mut j1, mut k1) = (0, 0, 0);
        let mut non_adjacent = Vec::with_capacity(blocks.len() + 1);
        for Match {
            a: i2,
            b: j2,
            size: k2,
        } in blocks
        {
            if i1 + k1 == i2 && j1 + k1 == j2 {
                k1 += k2;
            } else {
                if k1 > 0 {
                    non_adjacent.push(Match {
                        a: i1,
                        b: j1,
                        size: k1,
                    });
                }
                (i1, j1, k1) = (i2, j2, k2);
            }
        }
        if k1 > 0 {
            non_adjacent.push(Match {
                a: i1,
                b: j1,
                size: k1,
            });
        }
        non_adjacent.push(Match {
            a: la,
            b: lb,
            size: 0,
        });
        non_adjacent
    }

    /// `get_opcodes()`.
    pub fn get_opcodes(&mut self) -> &[Opcode] {
        if self.opcodes.is_none() {
            let mut answer = Vec::new();
            let (mut i, mut j) = (0, 0);
            for &Match { a: ai, b: bj, size } in self.get_matching_blocks() {
                let tag = if i < ai && j < bj {
                    Some(Tag::Replace)
                } else if i < ai {
                    Some(Tag::Delete)
                } else if j < bj {
                    Some(Tag::Insert)
                } else {
                    None
                };
                if let Some(tag) = tag {
                    answer.push(Opcode {
                        tag,
                        i1: i,
                        i2: ai,
                        j1: j,
                        j2: bj,
                    });
                }
                (i, j) = (ai + size, bj + size);
                if size > 0 {
                    answer.push(Opcode {
                        tag: Tag::Equal,
                        i1: ai,
                        i2: i,
                        j1: bj,
                        j2: j,
                    });
                }
            }
            self.opcodes = Some(answer);
        }
        self.opcodes.as_deref().unwrap_or(&[])
    }

    /// `get_grouped_opcodes(n)`: the changes with up to `n` lines of context.
    pub fn get_grouped_opcodes(&mut self, n: usize) -> Vec<Vec<Opcode>> {
        let mut codes = self.get_opcodes().to_vec();
        if codes.is_empty() {
            codes.push(Opcode {
                tag: Tag::Equal,
                i1: 0,
                i2: 1,
                j1: 0,
                j2: 1,
            });
        }
        if let Some(first) = codes.first_mut() {
            if first.tag == Tag::Equal {
                first.i1 = first.i1.max(first.i2.saturating_sub(n));
                first.j1 = first.j1.max(first.j2.saturating_sub(n));
            }
        }
        if let Some(last) = codes.last_mut() {
            if last.tag == Tag::Equal {
                last.i2 = last.i2.min(last.i1 + n);
                last.j2 = last.j2.min(last.j1 + n);
            }
        }
        let nn = n + n;
        let mut groups = Vec::new();
        let mut group = Vec::new();
        for code in codes {
            let Opcode {
                tag,
                mut i1,
                i2,
                mut j1,
                j2,
            } = code;
            if tag == Tag::Equal && i2.saturating_sub(i1) > nn {
                group.push(Opcode {
                    tag,
                    i1,
                    i2: i2.min(i1 + n),
                    j1,
                    j2: j2.min(j1 + n),
                });
                groups.push(std::mem::take(&mut group));
                i1 = i1.max(i2.saturating_sub(n));
                j1 = j1.max(j2.saturating_sub(n));
            }
            group.push(Opcode {
                tag,
                i1,
                i2,
                j1,
                j2,
            });
        }
        let only_equal = matches!(group.as_slice(), [single] if single.tag == Tag::Equal);
        if !group.is_empty() && !only_equal {
            groups.push(group);
        }
        groups
    }

    /// `ratio()`.
    pub fn ratio(&mut self) -> f64 {
        let matches: usize = self.get_matching_blocks().iter().map(|m| m.size).sum();
        calculate_ratio(matches, self.a.len() + self.b.len())
    }

    /// `quick_ratio()`.
    pub fn quick_ratio(&mut self) -> f64 {
        let b = self.b;
        let fullbcount = self.fullbcount.get_or_insert_with(|| {
            let mut counts: FxMap<T, usize> = FxMap::default();
            for &elt in b {
                *counts.entry(elt).or_insert(0) += 1;
            }
            counts
        });
        let mut avail: FxMap<T, isize> = FxMap::default();
        let mut matches = 0;
        for elt in self.a {
            let numb = match avail.get(elt) {
                Some(&numb) => numb,
                None => fullbcount.get(elt).map_or(0, |&c| c as isize),
            };
            avail.insert(*elt, numb - 1);
            if numb > 0 {
                matches += 1;
            }
        }
        calculate_ratio(matches, self.a.len() + self.b.len())
    }

    /// `real_quick_ratio()`.
    pub fn real_quick_ratio(&self) -> f64 {
        let (la, lb) = (self.a.len(), self.b.len());
        calculate_ratio(la.min(lb), la + lb)
    }
}

/// Lines as numbers, equal numbers for equal lines: what the line matchers compare.
fn intern<S: AsRef<str>>(a: &[S], b: &[S]) -> (Vec<usize>, Vec<usize>) {
    let mut ids: HashMap<&str, usize> = HashMap::with_capacity(a.len().max(b.len()));
    let mut numbered = [Vec::with_capacity(a.len()), Vec::with_capacity(b.len())];
    for (lines, out) in [a, b].into_iter().zip(numbered.iter_mut()) {
        for line in lines {
            let next = ids.len();
            out.push(*ids.entry(line.as_ref()).or_insert(next));
        }
    }
    let [ia, ib] = numbered;
    (ia, ib)
}

/// `lines[lo:hi]`, empty where Python's slice would be.
fn slice<S>(lines: &[S], lo: usize, hi: usize) -> &[S] {
    lines.get(lo..hi.min(lines.len())).unwrap_or(&[])
}

// ---------------------------------------------------------------------------------------------
// unified_diff, context_diff
// ---------------------------------------------------------------------------------------------

fn format_range_unified(start: usize, stop: usize) -> String {
    let mut beginning = start + 1;
    let length = stop.saturating_sub(start);
    if length == 1 {
        return beginning.to_string();
    }
    if length == 0 {
        beginning -= 1;
    }
    format!("{beginning},{length}")
}

/// `difflib.unified_diff(a, b)` with its defaults (no file names or dates, 3 lines of
/// context, `lineterm="\n"`): the header lines end in `"\n"`, the others are `a`'s and `b`'s
/// lines behind their one-character prefix. Nothing for equal inputs.
pub fn unified_diff(a: &[String], b: &[String]) -> Vec<String> {
    let (ia, ib) = intern(a, b);
    let mut matcher = SequenceMatcher::new(None, &ia, &ib);
    let mut out = Vec::new();
    for (index, group) in matcher.get_grouped_opcodes(3).iter().enumerate() {
        if index == 0 {
            out.push("--- \n".to_owned());
            out.push("+++ \n".to_owned());
        }
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        out.push(format!(
            "@@ -{} +{} @@\n",
            format_range_unified(first.i1, last.i2),
            format_range_unified(first.j1, last.j2)
        ));
        for op in group {
            if op.tag == Tag::Equal {
                out.extend(slice(a, op.i1, op.i2).iter().map(|l| format!(" {l}")));
                continue;
            }
            if matches!(op.tag, Tag::Replace | Tag::Delete) {
                out.extend(slice(a, op.i1, op.i2).iter().map(|l| format!("-{l}")));
            }
            if matches!(op.tag, Tag::Replace | Tag::Insert) {
                out.extend(slice(b, op.j1, op.j2).iter().map(|l| format!("+{l}")));
            }
        }
    }
    out
}

fn format_range_context(start: usize, stop: usize) -> String {
    let mut beginning = start + 1;
    let length = stop.saturating_sub(start);
    if length == 0 {
        beginning -= 1;
    }
    if length <= 1 {
        return beginning.to_string();
    }
    format!("{beginning},{}", beginning + length - 1)
}

/// `difflib.context_diff(a, b)` with its defaults, as [`unified_diff`].
pub fn context_diff(a: &[String], b: &[String]) -> Vec<String> {
    let (ia, ib) = intern(a, b);
    let mut matcher = SequenceMatcher::new(None, &ia, &ib);
    let prefix = |tag: Tag| match tag {
        Tag::Insert => "+ ",
        Tag::Delete => "- ",
        Tag::Replace => "! ",
        Tag::Equal => "  ",
    };
    let mut out = Vec::new();
    for (index, group) in matcher.get_grouped_opcodes(3).iter().enumerate() {
        if index == 0 {
            out.push("*** \n".to_owned());
            out.push("--- \n".to_owned());
        }
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        out.push("***************\n".to_owned());
        out.push(format!(
            "*** {} ****\n",
            format_range_context(first.i1, last.i2)
        ));
        if group
            .iter()
            .any(|op| matches!(op.tag, Tag::Replace | Tag::Delete))
        {
            for op in group.iter().filter(|op| op.tag != Tag::Insert) {
                let p = prefix(op.tag);
                out.extend(slice(a, op.i1, op.i2).iter().map(|l| format!("{p}{l}")));
            }
        }
        out.push(format!(
            "--- {} ----\n",
            format_range_context(first.j1, last.j2)
        ));
        if group
            .iter()
            .any(|op| matches!(op.tag, Tag::Replace | Tag::Insert))
        {
            for op in group.iter().filter(|op| op.tag != Tag::Delete) {
                let p = prefix(op.tag);
                out.extend(slice(b, op.j1, op.j2).iter().map(|l| format!("{p}{l}")));
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Differ (ndiff with IS_CHARACTER_JUNK)
// ---------------------------------------------------------------------------------------------

/// `difflib.IS_CHARACTER_JUNK`: a space or a tab.
fn is_character_junk(c: &char) -> bool {
    *c == ' ' || *c == '\t'
}

/// One line of `ndiff`'s output: its tag (`-`, `+`, ` `, `?`; `X` for the end) and what
/// follows the tag and its space (a `?` line's body ends in `"\n"`).
struct NdLine<'a> {
    tag: u8,
    body: Cow<'a, str>,
}

impl<'a> NdLine<'a> {
    fn end() -> Self {
        NdLine {
            tag: b'X',
            body: Cow::Borrowed(""),
        }
    }
}

/// `difflib.ndiff(a, b)` (no line junk, `IS_CHARACTER_JUNK`), each line as Python yields
/// it: `"- "`, `"+ "`, `"  "` or `"? "` then the text (`?` lines end in `"\n"`).
pub fn ndiff(a: &[String], b: &[String]) -> Vec<String> {
    ndiff_lines(a, b)
        .into_iter()
        .map(|line| {
            let mut s = String::with_capacity(line.body.len() + 2);
            s.push(char::from(line.tag));
            s.push(' ');
            s.push_str(&line.body);
            s
        })
        .collect()
}

fn ndiff_lines<'a, S: AsRef<str>>(a: &'a [S], b: &'a [S]) -> Vec<NdLine<'a>> {
    let (ia, ib) = intern(a, b);
    let mut matcher = SequenceMatcher::new(None, &ia, &ib);
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    for op in matcher.get_opcodes().to_vec() {
        match op.tag {
            Tag::Replace if fancy_work(a, b, op) > MAX_FANCY_WORK => {
                plain_replace(a, b, (op.i1, op.i2, op.j1, op.j2), &mut out)
            }
            Tag::Replace => fancy_replace(a, b, &ia, &ib, op, &mut out),
            Tag::Delete => dump(b'-', a, op.i1, op.i2, &mut out),
            Tag::Insert => dump(b'+', b, op.j1, op.j2, &mut out),
            Tag::Equal => dump(b' ', a, op.i1, op.i2, &mut out),
        }
    }
    out
}

/// The most work `_fancy_replace` may do on one replaced block, counted as the product of the
/// two sides' characters: it compares every line of one side with every line of the other,
/// character by character, so its time grows with that product (two rewritten 99,000-character
/// texts took a minute). A larger block is written as Python's `_plain_replace` writes it
/// (all its old lines, then all its new ones, without the intraline marks): the one place
/// where the output differs from CPython's (docs/API-COMPAT.md).
const MAX_FANCY_WORK: usize = 40_000_000;

/// The characters of the old side of a replaced block times those of its new side.
fn fancy_work<S: AsRef<str>>(a: &[S], b: &[S], op: Opcode) -> usize {
    let chars = |x: &[S]| -> usize { x.iter().map(|l| l.as_ref().chars().count() + 1).sum() };
    chars(slice(a, op.i1, op.i2)).saturating_mul(chars(slice(b, op.j1, op.j2)))
}

fn dump<'a, S: AsRef<str>>(tag: u8, x: &'a [S], lo: usize, hi: usize, out: &mut Vec<NdLine<'a>>) {
    out.extend(slice(x, lo, hi).iter().map(|line| NdLine {
        tag,
        body: Cow::Borrowed(line.as_ref()),
    }));
}

fn plain_replace<'a, S: AsRef<str>>(
    a: &'a [S],
    b: &'a [S],
    (alo, ahi, blo, bhi): (usize, usize, usize, usize),
    out: &mut Vec<NdLine<'a>>,
) {
    if bhi - blo < ahi - alo {
        dump(b'+', b, blo, bhi, out);
        dump(b'-', a, alo, ahi, out);
    } else {
        dump(b'-', a, alo, ahi, out);
        dump(b'+', b, blo, bhi, out);
    }
}

/// What `_fancy_replace` does next, in place of its recursion.
enum Step {
    /// `_fancy_replace(a, alo, ahi, b, blo, bhi)`
    Replace(usize, usize, usize, usize),
    /// `_fancy_helper(a, alo, ahi, b, blo, bhi)`
    Helper(usize, usize, usize, usize),
    /// The synch pair: identical lines, or lines to mark up with `?` lines.
    Pair { i: usize, j: usize, identical: bool },
}

/// `Differ._fancy_replace` over one replaced block `a[i1..i2]` / `b[j1..j2]`.
fn fancy_replace<'a, S: AsRef<str>>(
    a: &'a [S],
    b: &'a [S],
    ia: &[usize],
    ib: &[usize],
    op: Opcode,
    out: &mut Vec<NdLine<'a>>,
) {
    let (base_a, base_b) = (op.i1, op.j1);
    let a_chars: Vec<Vec<char>> = slice(a, op.i1, op.i2)
        .iter()
        .map(|l| l.as_ref().chars().collect())
        .collect();
    let b_chars: Vec<Vec<char>> = slice(b, op.j1, op.j2)
        .iter()
        .map(|l| l.as_ref().chars().collect())
        .collect();
    let chars_a = |i: usize| {
        i.checked_sub(base_a)
            .and_then(|k| a_chars.get(k))
            .map_or(&[][..], Vec::as_slice)
    };
    let chars_b = |j: usize| {
        j.checked_sub(base_b)
            .and_then(|k| b_chars.get(k))
            .map_or(&[][..], Vec::as_slice)
    };
    let text = |x: &'a [S], i: usize| x.get(i).map_or("", |l| l.as_ref());
    let mut cruncher: SequenceMatcher<'_, char> =
        SequenceMatcher::new(Some(is_character_junk), &[], &[]);

    let mut stack = vec![Step::Replace(op.i1, op.i2, op.j1, op.j2)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Replace(alo, ahi, blo, bhi) => {
                let (mut best_ratio, cutoff) = (0.74_f64, 0.75_f64);
                let mut best = None;
                let mut eq = None;
                for j in blo..bhi {
                    cruncher.set_seq2(chars_b(j));
                    for i in alo..ahi {
                        if ia.get(i) == ib.get(j) {
                            if eq.is_none() {
                                eq = Some((i, j));
                            }
                            continue;
                        }
                        cruncher.set_seq1(chars_a(i));
                        if cruncher.real_quick_ratio() > best_ratio
                            && cruncher.quick_ratio() > best_ratio
                        {
                            let ratio = cruncher.ratio();
                            if ratio > best_ratio {
                                best_ratio = ratio;
                                best = Some((i, j));
                            }
                        }
                    }
                }
                let (best_i, best_j, identical) = match (best_ratio < cutoff, best, eq) {
                    (true, _, Some((i, j))) => (i, j, true),
                    (false, Some((i, j)), _) => (i, j, false),
                    _ => {
                        plain_replace(a, b, (alo, ahi, blo, bhi), out);
                        continue;
                    }
                };
                stack.push(Step::Helper(best_i + 1, ahi, best_j + 1, bhi));
                stack.push(Step::Pair {
                    i: best_i,
                    j: best_j,
                    identical,
                });
                stack.push(Step::Helper(alo, best_i, blo, best_j));
            }
            Step::Helper(alo, ahi, blo, bhi) => {
                if alo < ahi {
                    if blo < bhi {
                        stack.push(Step::Replace(alo, ahi, blo, bhi));
                    } else {
                        dump(b'-', a, alo, ahi, out);
                    }
                } else if blo < bhi {
                    dump(b'+', b, blo, bhi, out);
                }
            }
            Step::Pair { i, j, identical } => {
                let (aelt, belt) = (text(a, i), text(b, j));
                if identical {
                    out.push(NdLine {
                        tag: b' ',
                        body: Cow::Borrowed(aelt),
                    });
                    continue;
                }
                let (ac, bc) = (chars_a(i), chars_b(j));
                let mut atags = String::new();
                let mut btags = String::new();
                let mut matcher = SequenceMatcher::new(Some(is_character_junk), ac, bc);
                for o in matcher.get_opcodes() {
                    let (la, lb) = (o.i2 - o.i1, o.j2 - o.j1);
                    match o.tag {
                        Tag::Replace => {
                            atags.extend(std::iter::repeat_n('^', la));
                            btags.extend(std::iter::repeat_n('^', lb));
                        }
                        Tag::Delete => atags.extend(std::iter::repeat_n('-', la)),
                        Tag::Insert => btags.extend(std::iter::repeat_n('+', lb)),
                        Tag::Equal => {
                            atags.extend(std::iter::repeat_n(' ', la));
                            btags.extend(std::iter::repeat_n(' ', lb));
                        }
                    }
                }
                let atags = keep_original_ws(ac, &atags);
                let btags = keep_original_ws(bc, &btags);
                out.push(NdLine {
                    tag: b'-',
                    body: Cow::Borrowed(aelt),
                });
                if !atags.is_empty() {
                    out.push(NdLine {
                        tag: b'?',
                        body: Cow::Owned(atags + "\n"),
                    });
                }
                out.push(NdLine {
                    tag: b'+',
                    body: Cow::Borrowed(belt),
                });
                if !btags.is_empty() {
                    out.push(NdLine {
                        tag: b'?',
                        body: Cow::Owned(btags + "\n"),
                    });
                }
            }
        }
    }
}

/// `_keep_original_ws(s, tags).rstrip()`.
fn keep_original_ws(s: &[char], tags: &str) -> String {
    let kept: String = s
        .iter()
        .zip(tags.chars())
        .map(|(&c, t)| if t == ' ' && py_isspace(c) { c } else { t })
        .collect();
    py_rstrip(&kept).to_owned()
}

// ---------------------------------------------------------------------------------------------
// _mdiff and HtmlDiff.make_table
// ---------------------------------------------------------------------------------------------

/// One side of a row of `_mdiff`: `(line number, marked-up text)` or the blank `('', '\n')`.
enum Cell {
    Line(usize, String),
    Blank,
}

/// `_make_line`'s format key.
#[derive(Clone, Copy)]
enum Key {
    /// `None`: the text as it is.
    Plain,
    /// `'?'`: marked up from the following `?` line.
    Marked,
    /// `'-'` or `'+'`: all of it marked.
    Whole(char),
}

/// `_mdiff._make_line`.
fn make_line(
    lines: &mut VecDeque<NdLine<'_>>,
    key: Key,
    side: usize,
    num_lines: &mut [usize; 2],
) -> Cell {
    let number = match num_lines.get_mut(side) {
        Some(n) => {
            *n += 1;
            *n
        }
        None => 0,
    };
    let mut pop = || lines.pop_front().unwrap_or_else(NdLine::end).body;
    let text = match key {
        Key::Plain => pop().into_owned(),
        Key::Marked => {
            let text = pop();
            let markers = pop();
            mark_up(&text, &markers)
        }
        Key::Whole(k) => {
            let body = pop();
            let body: &str = if body.is_empty() { " " } else { &body };
            let mut s = String::with_capacity(body.len() + 3);
            s.push('\0');
            s.push(k);
            s.push_str(body);
            s.push('\u{1}');
            s
        }
    };
    Cell::Line(number, text)
}

/// `text` with each run of `+`, `-` or `^` in `markers` (`(\++|\-+|\^+)`) wrapped in
/// `"\0" + marker` … `"\1"`; positions are code points.
fn mark_up(text: &str, markers: &str) -> String {
    let marks: Vec<char> = markers.chars().collect();
    let offsets: Vec<usize> = text
        .char_indices()
        .map(|(o, _)| o)
        .chain(std::iter::once(text.len()))
        .collect();
    let at = |ci: usize| offsets.get(ci).copied().unwrap_or(text.len());
    let mut out = String::with_capacity(text.len() + 8);
    let mut cur = 0;
    let mut k = 0;
    while let Some(&c) = marks.get(k) {
        if !matches!(c, '+' | '-' | '^') {
            k += 1;
            continue;
        }
        let start = k;
        while marks.get(k) == Some(&c) {
            k += 1;
        }
        let begin = at(start).max(cur);
        let end = at(k).max(begin);
        out.push_str(text.get(cur..begin).unwrap_or(""));
        out.push('\0');
        out.push(c);
        out.push_str(text.get(begin..end).unwrap_or(""));
        out.push('\u{1}');
        cur = end;
    }
    out.push_str(text.get(cur..).unwrap_or(""));
    out
}

/// `_line_pair_iterator` fed by `_line_iterator`, formatting each row's sides as they pair up
/// (`HtmlDiff._collect_lines`).
struct Rows<'p> {
    prefixes: [&'p str; 2],
    from_queue: VecDeque<(Cell, bool)>,
    to_queue: VecDeque<(Cell, bool)>,
    from_cells: Vec<String>,
    to_cells: Vec<String>,
    flags: Vec<bool>,
}

impl Rows<'_> {
    fn push(&mut self, from: Option<Cell>, to: Option<Cell>, found_diff: bool) {
        if let Some(cell) = from {
            self.from_queue.push_back((cell, found_diff));
        }
        if let Some(cell) = to {
            self.to_queue.push_back((cell, found_diff));
        }
        while !self.from_queue.is_empty() && !self.to_queue.is_empty() {
            let (Some((from, from_diff)), Some((to, to_diff))) =
                (self.from_queue.pop_front(), self.to_queue.pop_front())
            else {
                break;
            };
            self.from_cells.push(format_line(self.prefixes[0], from));
            self.to_cells.push(format_line(self.prefixes[1], to));
            self.flags.push(from_diff || to_diff);
        }
    }
}

/// `HtmlDiff._format_line`.
fn format_line(prefix: &str, cell: Cell) -> String {
    let (id, linenum, text) = match cell {
        Cell::Line(n, text) => (format!(" id=\"{prefix}{n}\""), n.to_string(), text),
        Cell::Blank => (String::new(), String::new(), "\n".to_owned()),
    };
    let mut escaped = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '>' => escaped.push_str("&gt;"),
            '<' => escaped.push_str("&lt;"),
            ' ' => escaped.push_str("&nbsp;"),
            _ => escaped.push(c),
        }
    }
    format!(
        "<td class=\"diff_header\"{id}>{linenum}</td><td nowrap=\"nowrap\">{}</td>",
        py_rstrip(&escaped)
    )
}

/// `HtmlDiff._tab_newline_replace` on one line (tab size 8): tabs become tab characters up
/// to the next stop (shown as `&nbsp;` in the end), NULs spaces, final newlines go.
fn expand_tabs(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut column = 0usize;
    for c in line.chars() {
        match c {
            '\t' => {
                let incr = 8 - column % 8;
                column += incr;
                out.extend(std::iter::repeat_n('\t', incr));
            }
            ' ' | '\0' => {
                column += 1;
                out.push(' ');
            }
            '\n' | '\r' => {
                column = 0;
                out.push(c);
            }
            _ => {
                column += 1;
                out.push(c);
            }
        }
    }
    let kept = out.trim_end_matches('\n').len();
    out.truncate(kept);
    out
}

/// The rows of `_mdiff(fromlines, tolines)` (no context), formatted.
fn mdiff_rows(from: &[String], to: &[String], rows: &mut Rows<'_>) {
    let mut source = ndiff_lines(from, to).into_iter();
    let mut lines: VecDeque<NdLine<'_>> = VecDeque::with_capacity(4);
    let mut num_lines = [0usize; 2];
    let mut pending: isize = 0;
    loop {
        while lines.len() < 4 {
            lines.push_back(source.next().unwrap_or_else(NdLine::end));
        }
        let mut s = [b'X'; 4];
        for (slot, line) in s.iter_mut().zip(lines.iter()) {
            *slot = line.tag;
        }
        let sw = |p: &[u8]| s.starts_with(p);
        let at_end = sw(b"X");
        let to_yield: isize;
        let (from_line, to_line);
        if at_end {
            to_yield = pending;
            (from_line, to_line) = (None, None);
        } else if sw(b"-?+?") {
            let f = make_line(&mut lines, Key::Marked, 0, &mut num_lines);
            let t = make_line(&mut lines, Key::Marked, 1, &mut num_lines);
            rows.push(Some(f), Some(t), true);
            continue;
        } else if sw(b"--++") {
            pending -= 1;
            let f = make_line(&mut lines, Key::Whole('-'), 0, &mut num_lines);
            rows.push(Some(f), None, true);
            continue;
        } else if sw(b"--?+") || sw(b"--+") || sw(b"- ") {
            from_line = Some(make_line(&mut lines, Key::Whole('-'), 0, &mut num_lines));
            to_line = None;
            to_yield = pending - 1;
            pending = 0;
        } else if sw(b"-+?") {
            let f = make_line(&mut lines, Key::Plain, 0, &mut num_lines);
            let t = make_line(&mut lines, Key::Marked, 1, &mut num_lines);
            rows.push(Some(f), Some(t), true);
            continue;
        } else if sw(b"-?+") {
            let f = make_line(&mut lines, Key::Marked, 0, &mut num_lines);
            let t = make_line(&mut lines, Key::Plain, 1, &mut num_lines);
            rows.push(Some(f), Some(t), true);
            continue;
        } else if sw(b"-") {
            pending -= 1;
            let f = make_line(&mut lines, Key::Whole('-'), 0, &mut num_lines);
            rows.push(Some(f), None, true);
            continue;
        } else if sw(b"+--") {
            pending += 1;
            let t = make_line(&mut lines, Key::Whole('+'), 1, &mut num_lines);
            rows.push(None, Some(t), true);
            continue;
        } else if sw(b"+ ") || sw(b"+-") {
            from_line = None;
            to_line = Some(make_line(&mut lines, Key::Whole('+'), 1, &mut num_lines));
            to_yield = pending + 1;
            pending = 0;
        } else if sw(b"+") {
            pending += 1;
            let t = make_line(&mut lines, Key::Whole('+'), 1, &mut num_lines);
            rows.push(None, Some(t), true);
            continue;
        } else if sw(b" ") {
            // `_make_line(lines[:], None, 0)`: the same text, counted on the "from" side.
            num_lines[0] += 1;
            let text = lines
                .front()
                .map(|l| l.body.to_string())
                .unwrap_or_default();
            let f = Cell::Line(num_lines[0], text);
            let t = make_line(&mut lines, Key::Plain, 1, &mut num_lines);
            rows.push(Some(f), Some(t), false);
            continue;
        } else {
            // A `?` line out of place: ndiff never makes one; skip it.
            lines.pop_front();
            continue;
        }
        let mut to_yield = to_yield;
        while to_yield < 0 {
            to_yield += 1;
            rows.push(None, Some(Cell::Blank), true);
        }
        while to_yield > 0 {
            to_yield -= 1;
            rows.push(Some(Cell::Blank), None, true);
        }
        if at_end {
            return;
        }
        rows.push(from_line, to_line, true);
    }
}

/// Exactly `difflib.HtmlDiff().make_table(a, b)` (full diff, not context; tab size 8; no
/// wrapping; `IS_CHARACTER_JUNK`), as if `HtmlDiff._default_prefix` were `prefix_index`
/// (Python numbers the anchors of each table it makes, process-wide, from 0:
/// `from0_1`, `to0_1`, `difflib_chg_to0__top`, …).
pub fn html_make_table(a: &[String], b: &[String], prefix_index: usize) -> String {
    let from_prefix = format!("from{prefix_index}_");
    let to_prefix = format!("to{prefix_index}_");
    let a: Vec<String> = a.iter().map(|l| expand_tabs(l)).collect();
    let b: Vec<String> = b.iter().map(|l| expand_tabs(l)).collect();
    let mut rows = Rows {
        prefixes: [&from_prefix, &to_prefix],
        from_queue: VecDeque::new(),
        to_queue: VecDeque::new(),
        from_cells: Vec::new(),
        to_cells: Vec::new(),
        flags: Vec::new(),
    };
    mdiff_rows(&a, &b, &mut rows);
    let Rows {
        mut from_cells,
        mut to_cells,
        mut flags,
        ..
    } = rows;

    // _convert_flags (numlines=5)
    let numlines = 5;
    let mut next_id = vec![String::new(); flags.len()];
    let mut next_href = vec![String::new(); flags.len()];
    let (mut num_chg, mut in_change, mut last) = (0usize, false, 0usize);
    for (i, &flag) in flags.iter().enumerate() {
        if flag {
            if !in_change {
                in_change = true;
                last = i;
                if let Some(id) = next_id.get_mut(i.saturating_sub(numlines)) {
                    *id = format!(" id=\"difflib_chg_{to_prefix}_{num_chg}\"");
                }
                num_chg += 1;
                if let Some(href) = next_href.get_mut(last) {
                    *href = format!("<a href=\"#difflib_chg_{to_prefix}_{num_chg}\">n</a>");
                }
            }
        } else {
            in_change = false;
        }
    }
    if flags.is_empty() {
        flags = vec![false];
        next_id = vec![String::new()];
        next_href = vec![String::new()];
        last = 0;
        let empty = "<td></td><td>&nbsp;Empty File&nbsp;</td>".to_owned();
        from_cells = vec![empty.clone()];
        to_cells = vec![empty];
    }
    if flags.first() == Some(&false) {
        if let Some(href) = next_href.first_mut() {
            *href = format!("<a href=\"#difflib_chg_{to_prefix}_0\">f</a>");
        }
    }
    if let Some(href) = next_href.get_mut(last) {
        *href = format!("<a href=\"#difflib_chg_{to_prefix}_top\">t</a>");
    }

    let mut data_rows = String::new();
    for (((id, href), from), to) in next_id
        .iter()
        .zip(next_href.iter())
        .zip(from_cells.iter())
        .zip(to_cells.iter())
    {
        let _ = writeln!(
            data_rows,
            "            <tr><td class=\"diff_next\"{id}>{href}</td>{from}<td class=\"diff_next\">{href}</td>{to}</tr>"
        );
    }
    let table = format!(
        "\n    <table class=\"diff\" id=\"difflib_chg_{to_prefix}_top\"\n           \
         cellspacing=\"0\" cellpadding=\"0\" rules=\"groups\" >\n        \
         <colgroup></colgroup> <colgroup></colgroup> <colgroup></colgroup>\n        \
         <colgroup></colgroup> <colgroup></colgroup> <colgroup></colgroup>\n        \
         \n        <tbody>\n{data_rows}        </tbody>\n    </table>"
    );
    table
        .replace("\0+", "<span class=\"diff_add\">")
        .replace("\0-", "<span class=\"diff_sub\">")
        .replace("\0^", "<span class=\"diff_chg\">")
        .replace('\u{1}', "</span>")
        .replace('\t', "&nbsp;")
}

#[cfg(test)]
mod tests {
    //! Against fixtures CPython wrote (tests/difflib/gen.py), and CKAN's own answers.

    use super::*;
    use serde_json::json;

    fn fixture(text: &str) -> Value {
        serde_json::from_str(text).expect("fixture is JSON")
    }

    fn strings(v: &Value) -> Vec<String> {
        v.as_array()
            .expect("a list")
            .iter()
            .map(|s| s.as_str().expect("a string").to_owned())
            .collect()
    }

    fn fnv1a64(text: &str) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &byte in text.as_bytes() {
            h ^= u64::from(byte);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{h:016x}")
    }

    /// `actual` against what gen.py stored: the text, the lines, or the length and hash of a
    /// big one.
    fn check(what: &str, actual: &[String], expected: &Value) {
        let joined = actual.join("\n");
        match expected {
            Value::String(text) => assert_eq!(&joined, text, "{what}"),
            Value::Array(_) => assert_eq!(actual, strings(expected).as_slice(), "{what}"),
            _ => {
                assert_eq!(
                    json!(joined.len()),
                    expected["len"],
                    "{what}: length\n{joined}"
                );
                assert_eq!(
                    json!(fnv1a64(&joined)),
                    expected["fnv"],
                    "{what}: hash\n{joined}"
                );
            }
        }
    }

    #[test]
    fn json_dumps_is_pythons() {
        let cases = fixture(include_str!("../tests/difflib/dumps.json"));
        for case in cases.as_array().expect("cases") {
            let text = case["json"].as_str().expect("json");
            // serde_json (without its float_roundtrip feature) may read a float one bit off
            // what Python reads; Rust's own parser is exact.
            let value: Value = match text.parse::<f64>() {
                Ok(f) if text.contains(['.', 'e', 'E']) => json!(f),
                _ => serde_json::from_str(text).expect("parses"),
            };
            assert_eq!(
                python_json_dumps_indent2_sorted(&value),
                case["dumps"].as_str().expect("dumps"),
                "json.dumps({text})"
            );
        }
    }

    #[test]
    fn float_repr_is_pythons() {
        for (f, repr) in [
            (0.1, "0.1"),
            (1.0, "1.0"),
            (-0.0, "-0.0"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1e-5, "1e-05"),
            (1e-4, "0.0001"),
            (1.5e300, "1.5e+300"),
            (5e-324, "5e-324"),
            (123.456, "123.456"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(python_float_repr(f), repr);
        }
    }

    #[test]
    fn wrap70_is_re_findall() {
        let cases = fixture(include_str!("../tests/difflib/wrap70.json"));
        for case in cases.as_array().expect("cases") {
            let input = case["input"].as_str().expect("input");
            assert_eq!(wrap70(input), strings(&case["output"]), "wrap70({input:?})");
        }
    }

    #[test]
    fn sequence_matcher_is_pythons() {
        let cases = fixture(include_str!("../tests/difflib/matcher.json"));
        let triples = |ms: &[Match]| -> Value {
            ms.iter()
                .map(|m| json!([m.a, m.b, m.size]))
                .collect::<Vec<_>>()
                .into()
        };
        let codes = |ops: &[Opcode]| -> Value {
            ops.iter()
                .map(|o| json!([o.tag.as_str(), o.i1, o.i2, o.j1, o.j2]))
                .collect::<Vec<_>>()
                .into()
        };
        for case in cases.as_array().expect("cases") {
            let a: Vec<char> = case["a"].as_str().expect("a").chars().collect();
            let b: Vec<char> = case["b"].as_str().expect("b").chars().collect();
            let junk: Option<fn(&char) -> bool> = if case["junk"] == json!(true) {
                Some(is_character_junk)
            } else {
                None
            };
            let what = format!("{:?} / {:?}", case["a"], case["b"]);
            let mut sm = SequenceMatcher::new(junk, &a, &b);
            assert_eq!(
                triples(sm.get_matching_blocks()),
                case["matching_blocks"],
                "{what}"
            );
            assert_eq!(codes(sm.get_opcodes()), case["opcodes"], "{what}");
            let grouped: Vec<Value> = sm.get_grouped_opcodes(3).iter().map(|g| codes(g)).collect();
            assert_eq!(Value::from(grouped), case["grouped"], "{what}");
            assert_eq!(
                json!(python_float_repr(sm.ratio())),
                case["ratio"],
                "{what}"
            );
            assert_eq!(
                json!(python_float_repr(sm.quick_ratio())),
                case["quick_ratio"],
                "{what}"
            );
            assert_eq!(
                json!(python_float_repr(sm.real_quick_ratio())),
                case["real_quick_ratio"],
                "{what}"
            );
            if !case["longest_2_8_1_9"].is_null() {
                let m = sm.find_longest_match(2, 8.min(a.len()), 1, 9.min(b.len()));
                assert_eq!(triples(&[m]), json!([case["longest_2_8_1_9"]]), "{what}");
            }
        }
    }

    #[test]
    fn activity_diffs_of_packages_are_pythons() {
        let cases = fixture(include_str!("../tests/difflib/cases_json.json"));
        for case in cases.as_array().expect("cases") {
            let name = case["name"].as_str().expect("name");
            let prefix = case["html_prefix"].as_u64().expect("prefix") as usize;
            for kind in ["unified", "context", "html"] {
                let diff = activity_diff(&case["prev"], &case["this"], kind, prefix)
                    .expect("a known type");
                check(&format!("{name} {kind}"), &[diff], &case[kind]);
            }
        }
        assert_eq!(activity_diff(&json!({}), &json!({}), "ndiff", 0), None);
    }

    #[test]
    fn identical_inputs_give_empty_text_diffs() {
        let package = json!({"name": "a", "resources": [{"id": "r"}]});
        assert_eq!(
            activity_diff(&package, &package, "unified", 0),
            Some(String::new())
        );
        assert_eq!(
            activity_diff(&package, &package, "context", 0),
            Some(String::new())
        );
        let lines = json_lines(&package);
        assert!(unified_diff(&lines, &lines).is_empty());
        assert!(context_diff(&lines, &lines).is_empty());
    }

    #[test]
    fn line_diffs_are_pythons() {
        let cases = fixture(include_str!("../tests/difflib/cases_lines.json"));
        for case in cases.as_array().expect("cases") {
            let name = case["name"].as_str().expect("name");
            let (a, b) = (strings(&case["a"]), strings(&case["b"]));
            let prefix = case["html_prefix"].as_u64().expect("prefix") as usize;
            check(
                &format!("{name} unified"),
                &unified_diff(&a, &b),
                &case["unified"],
            );
            check(
                &format!("{name} context"),
                &context_diff(&a, &b),
                &case["context"],
            );
            check(&format!("{name} ndiff"), &ndiff(&a, &b), &case["ndiff"]);
            check(
                &format!("{name} html"),
                &[html_make_table(&a, &b, prefix)],
                &case["html"],
            );
        }
    }

    #[test]
    fn ckan_answers_are_reproduced() {
        let sample = fixture(include_str!("../tests/difflib/ckan_sample.json"));
        let (prev, this) = (&sample["prev"], &sample["this"]);
        for kind in ["unified", "context", "html"] {
            assert_eq!(
                activity_diff(prev, this, kind, 0).as_deref(),
                sample[kind].as_str(),
                "{kind}"
            );
        }
        // The documented doubling of the header lines' newlines.
        let unified = activity_diff(prev, this, "unified", 0).unwrap_or_default();
        assert!(unified.starts_with("--- \n\n+++ \n\n@@ -21,7 +21,7 @@\n\n   "));
    }

    #[test]
    fn big_inputs_are_pythons() {
        let expected = fixture(include_str!("../tests/difflib/big.json"));
        // Thousands of resources (17,500 lines), a few changes; the same as gen.py's.
        let resources: Vec<Value> = (0..2500)
            .map(|i| {
                json!({"id": format!("r{i}"), "name": format!("data {i}"), "format": "CSV",
                       "size": null, "url": format!("http://example.com/{i}.csv")})
            })
            .collect();
        let prev = json!({"name": "big", "resources": resources});
        let mut this = prev.clone();
        if let Some(list) = this["resources"].as_array_mut() {
            list[1000]["name"] = json!("renamed");
            list.remove(2000);
            list.push(json!({"id": "new"}));
        }
        let package = &expected["package"];
        for kind in ["unified", "context", "html"] {
            let diff = activity_diff(&prev, &this, kind, 7).unwrap_or_default();
            check(&format!("big package {kind}"), &[diff], &package[kind]);
        }

        // A wholly rewritten block: _fancy_replace pairs lines hundreds of levels deep.
        let a: Vec<String> = (1..=400)
            .map(|k| format!("{}a", "x".repeat(k % 7 + 1)))
            .collect();
        let b: Vec<String> = (1..=400)
            .map(|k| format!("{}b", "x".repeat(k % 7 + 1)))
            .collect();
        let rewritten = &expected["rewritten"];
        check("rewritten ndiff", &ndiff(&a, &b), &rewritten["ndiff"]);
        check(
            "rewritten html",
            &[html_make_table(&a, &b, 0)],
            &rewritten["html"],
        );
    }

    #[test]
    fn a_huge_rewrite_is_diffed_in_bounded_time() {
        // Two different 99,000-character notes: every wrapped line of one is compared with
        // every line of the other by CPython's `_fancy_replace` (a minute of CPU); here the
        // block is over MAX_FANCY_WORK and written as a plain replace.
        let text = |seed: u64| -> String {
            let mut x = seed;
            let mut out = String::new();
            while out.len() < 99_000 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                out.push_str(
                    ["lorem ", "ipsum ", "dolor ", "sit ", "amet "][(x >> 33) as usize % 5],
                );
            }
            out
        };
        let (old, new) = (json!({"notes": text(1)}), json!({"notes": text(2)}));
        let started = std::time::Instant::now();
        let html = activity_diff(&old, &new, "html", 0).unwrap();
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert!(html.contains("diff_sub") && html.contains("diff_add"));
        assert!(
            !html.contains("diff_chg"),
            "a plain replace marks no intraline change"
        );
        // A small rewritten block is still Python's fancy one.
        let (a, b) = (
            json!({"notes": "one two three"}),
            json!({"notes": "one two four"}),
        );
        assert!(activity_diff(&a, &b, "html", 0)
            .unwrap()
            .contains("diff_chg"));
    }

    #[test]
    fn odd_inputs_do_not_panic() {
        let weird = [
            String::new(),
            "\0\u{1}\t\r\n".to_owned(),
            "\u{1}\u{1}".to_owned(),
            "?".to_owned(),
            " ".repeat(300),
        ];
        let mut other = weird.to_vec();
        other.reverse();
        let _ = html_make_table(&weird, &other, usize::MAX);
        let _ = unified_diff(&weird, &[]);
        let _ = context_diff(&[], &weird);
        let _ = ndiff(&weird, &other);
        let chars: Vec<char> = "abc".chars().collect();
        let mut sm = SequenceMatcher::new(None, &chars, &chars);
        let m = sm.find_longest_match(2, 100, 5, 1);
        assert_eq!(m.size, 0);
        assert_eq!(sm.get_grouped_opcodes(0).len(), 0);
        assert_eq!(wrap70("\n\n\n"), Vec::<String>::new());
    }
}
