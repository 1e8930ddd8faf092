//! The layout rules of docs/ARCHITECTURE.md, checked against the code so that neither drifts:
//! the one import circle between files that the document names (and no other), plugin source
//! files and functions within their length limits, every plugin directory in the crate table,
//! plugins' own SQL kept off core's tables, the prelude's item count where the docs give it,
//! the number of plugins the binary links, every setting and every plugin in
//! docs/CONFIGURATION.md (and no setting there that the configuration lacks).
//!
//! The source is read as text: comments, strings and character literals are blanked first,
//! then `crate::`, `super::` and `self::` paths and `use` items (with their groups) are
//! resolved to the file of the longest module they name, and through a module's re-exports
//! (`pub use`, the prelude) to the file that defines the item. `mod x;` declarations and a
//! module's `pub use` of its children (a facade) are not imports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The source directory of every crate of the workspace, as a path relative to the root.
fn crate_dirs() -> Vec<String> {
    let mut dirs = vec!["src".to_string()];
    for base in ["", "plugins/", "examples/", "bench/"] {
        let Ok(entries) = std::fs::read_dir(root().join(base)) else {
            continue;
        };
        for e in entries.flatten() {
            let dir = format!("{base}{}", e.file_name().to_string_lossy());
            if root().join(&dir).join("Cargo.toml").is_file()
                && root().join(&dir).join("src").is_dir()
            {
                dirs.push(format!("{dir}/src"));
            }
        }
    }
    dirs.sort();
    dirs
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The text with comments, string literals and character literals replaced by spaces (line
/// breaks kept, so line numbers stay).
fn blank(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let keep = |c: u8| if c == b'\n' { b'\n' } else { b' ' };
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    out.extend([b' ', b' ']);
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    out.extend([b' ', b' ']);
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(keep(b[i]));
                    i += 1;
                }
            }
        } else if c == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            while j < b.len() {
                if b[j] == b'"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&b'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.extend(b[i..j.min(b.len())].iter().map(|&c| keep(c)));
            i = j;
        } else if c == b'"' {
            out.push(b' ');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    out.push(b' ');
                    i += 1;
                }
                if i < b.len() {
                    out.push(keep(b[i]));
                    i += 1;
                }
            }
            out.push(b' ');
            i += 1;
        } else if c == b'\'' {
            // A character literal ('x', '\n', '\u{1F600}'), not a lifetime ('a).
            let end = if b.get(i + 1) == Some(&b'\\') {
                (i + 3..b.len().min(i + 12)).find(|&j| b[j] == b'\'')
            } else {
                std::str::from_utf8(&b[i + 1..])
                    .ok()
                    .and_then(|s| s.chars().next())
                    .map(|ch| i + 1 + ch.len_utf8())
                    .filter(|&j| b.get(j) == Some(&b'\''))
            };
            match end {
                Some(j) => {
                    out.extend(b[i..=j].iter().map(|&c| keep(c)));
                    i = j + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One source file of a crate: its module path and its blanked text.
struct SourceFile {
    rel: String,
    module: Vec<String>,
    text: String,
}

fn crate_files(src_dir: &str) -> Vec<SourceFile> {
    let mut paths = Vec::new();
    rust_files(&root().join(src_dir), &mut paths);
    paths
        .into_iter()
        .map(|p| {
            let inner = p.strip_prefix(root().join(src_dir)).unwrap();
            let mut module: Vec<String> = inner
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            let last = module.pop().unwrap();
            let stem = last.trim_end_matches(".rs");
            if !(stem == "mod" || (module.is_empty() && (stem == "lib" || stem == "main"))) {
                module.push(stem.to_string());
            }
            SourceFile {
                rel: p
                    .strip_prefix(root())
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                module,
                text: blank(&std::fs::read_to_string(&p).unwrap()),
            }
        })
        .collect()
}

fn ident_at(b: &[u8], mut i: usize) -> (String, usize) {
    let start = i;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
        i += 1;
    }
    (String::from_utf8_lossy(&b[start..i]).into_owned(), i)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The paths of a use tree (or a plain path) starting at `i`, each with `prefix` before it and
/// the name it brings into scope (its last segment, its alias after `as`, the prefix's last
/// for `self`).
fn paths_at(b: &[u8], i: usize, prefix: &[String], out: &mut Vec<(Vec<String>, String)>) -> usize {
    let mut path = prefix.to_vec();
    let mut i = skip_ws(b, i);
    loop {
        if b.get(i) == Some(&b'{') {
            i += 1;
            loop {
                i = skip_ws(b, i);
                match b.get(i) {
                    Some(b'}') | None => return i + 1,
                    Some(b',') => i += 1,
                    _ => i = paths_at(b, i, &path, out),
                }
            }
        }
        let (name, j) = ident_at(b, i);
        if name.is_empty() {
            let local = path.last().cloned().unwrap_or_default();
            out.push((path, local));
            return i;
        }
        path.push(name);
        i = skip_ws(b, j);
        if b.get(i) == Some(&b':') && b.get(i + 1) == Some(&b':') {
            i = skip_ws(b, i + 2);
            continue;
        }
        if path.last().map(String::as_str) == Some("self") {
            path.pop();
        }
        let mut local = path.last().cloned().unwrap_or_default();
        let (word, after) = ident_at(b, i);
        if word == "as" {
            let (alias, end) = ident_at(b, skip_ws(b, after));
            local = alias;
            i = end;
        }
        out.push((path, local));
        return i;
    }
}

/// Where a `use` in the module `module` starts resolving: `crate::` from the root, `self::` and
/// a child module's name from the module, `super::` (repeated) from its parents; `None` for a
/// path into another crate.
fn use_base(
    files_modules: &BTreeSet<Vec<String>>,
    module: &[String],
    first: &str,
) -> Option<Vec<String>> {
    match first {
        "crate" | "self" | "super" => None,
        _ => {
            let mut child = module.to_vec();
            child.push(first.to_string());
            files_modules.contains(&child).then(|| module.to_vec())
        }
    }
}

/// The files each file imports, inside one crate. A path to an item a module re-exports
/// (`pub use a::Thing` in `lib.rs`, then `crate::Thing`) counts as an import of the file that
/// defines it.
fn imports(files: &[SourceFile]) -> BTreeMap<usize, BTreeSet<usize>> {
    let by_module: BTreeMap<&[String], usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.module.as_slice(), i))
        .collect();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let found: Vec<Vec<(Vec<String>, String, Kind)>> =
        files.iter().map(|f| paths_of(f, &modules)).collect();
    // What each file's `use` items bring into its scope: local name → full path.
    let scope: Vec<BTreeMap<String, Vec<String>>> = files
        .iter()
        .zip(&found)
        .map(|(f, paths)| {
            let mut names: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for (p, local, _) in paths
                .iter()
                .filter(|(_, _, kind)| *kind != Kind::Expression)
            {
                if p.len() > f.module.len() || !p.starts_with(&f.module) {
                    names.insert(local.clone(), p.clone());
                }
            }
            names
        })
        .collect();
    // `#[macro_export]` puts a file's macros at the crate root: `crate::name!` is that file.
    let mut scope = scope;
    if let Some(&root) = by_module.get([].as_slice()) {
        for f in files {
            for (at, _) in f.text.match_indices("macro_rules!") {
                let name = ident_at(f.text.as_bytes(), skip_ws(f.text.as_bytes(), at + 12)).0;
                let mut path = f.module.clone();
                path.push(name.clone());
                scope[root].insert(name, path);
            }
        }
    }
    fn resolve(
        path: &[String],
        by_module: &BTreeMap<&[String], usize>,
        scope: &[BTreeMap<String, Vec<String>>],
        hops: usize,
    ) -> Option<usize> {
        if path.first().map(String::as_str) == Some(EXTERN) {
            return None;
        }
        let n = (0..=path.len())
            .rev()
            .find(|n| by_module.contains_key(&path[..*n]))?;
        let file = by_module[&path[..n]];
        // The first segment past the module that the module brought in with a `use` (a
        // re-export, or one of an inline module such as `prelude`) leads on.
        let via = path[n..].iter().find_map(|s| scope[file].get(s));
        match via {
            Some(target) if hops < 4 && target.as_slice() != path => {
                resolve(target, by_module, scope, hops + 1)
            }
            _ => Some(file),
        }
    }
    let mut edges: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for (from, paths) in found.iter().enumerate() {
        for (p, _, _) in paths.iter().filter(|(_, _, kind)| *kind != Kind::Reexport) {
            if let Some(to) = resolve(p, &by_module, &scope, 0) {
                if to != from {
                    edges.entry(from).or_default().insert(to);
                }
            }
        }
    }
    edges
}

/// The first segment of a path into another crate.
const EXTERN: &str = "<extern>";

/// Where a path stands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// In code: an import of the file it names.
    Expression,
    /// A private `use` item: an import, and a name in the module's scope.
    Use,
    /// A `pub use` item: a name in the module's scope only (a facade: who imports the name
    /// through it imports the file that defines it).
    Reexport,
}

/// Every path of one file into its own crate, and what kind of path it is: `crate::`, `self::` and `super::` paths anywhere (not
/// `$crate::` in a macro body), and `use` items that start at a child module or another crate.
fn paths_of(f: &SourceFile, modules: &BTreeSet<Vec<String>>) -> Vec<(Vec<String>, String, Kind)> {
    let b = f.text.as_bytes();
    let mut found: Vec<(Vec<String>, String, Kind)> = Vec::new();
    let mut take = |kind: Kind, paths: Vec<(Vec<String>, String)>| {
        found.extend(paths.into_iter().map(|(p, local)| (p, local, kind)));
    };
    let mut reexport = false;
    // Inline modules (`mod tests { … }`) open at a brace depth: `super::` inside one names the
    // file's own module.
    let mut depth = 0usize;
    let mut inline: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let at_word =
            i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'$');
        match b[i] {
            b'{' => {
                depth += 1;
                i += 1;
                continue;
            }
            b'}' => {
                if inline.last() == Some(&depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
                continue;
            }
            _ => {}
        }
        if !at_word || !(b[i].is_ascii_alphabetic()) {
            i += 1;
            continue;
        }
        let (word, j) = ident_at(b, i);
        let k = skip_ws(b, j);
        if word == "mod" {
            let (_, after) = ident_at(b, skip_ws(b, k));
            if b.get(skip_ws(b, after)) == Some(&b'{') {
                inline.push(depth + 1);
            }
            i = j;
            continue;
        }
        if word == "use" {
            // `pub use` / `pub(crate) use`: a re-export (a facade), not an import of the file.
            let before = String::from_utf8_lossy(&b[..i]);
            let before = before.trim_end();
            reexport = before.ends_with("pub") || before.ends_with(')');
            let (first, _) = ident_at(b, k);
            if !matches!(first.as_str(), "crate" | "self" | "super") {
                // A child module's path, or another crate's (kept, marked, so that a
                // re-export of it resolves to no file of this crate).
                let base = use_base(modules, &f.module, &first)
                    .unwrap_or_else(|| vec![EXTERN.to_string()]);
                let mut paths = Vec::new();
                i = paths_at(b, k, &base, &mut paths);
                take(if reexport { Kind::Reexport } else { Kind::Use }, paths);
                continue;
            }
        }
        let starts_path = b.get(k) == Some(&b':') && b.get(k + 1) == Some(&b':');
        if !starts_path || !matches!(word.as_str(), "crate" | "super" | "self") {
            i = j;
            continue;
        }
        let kind = if !String::from_utf8_lossy(&b[..i]).trim_end().ends_with("use") {
            Kind::Expression
        } else if reexport {
            Kind::Reexport
        } else {
            Kind::Use
        };
        let mut base: Vec<String> = match word.as_str() {
            "crate" => Vec::new(),
            _ if !inline.is_empty() => f.module.clone(),
            "self" => f.module.clone(),
            _ => f.module[..f.module.len().saturating_sub(1)].to_vec(),
        };
        let mut at = k + 2;
        // super::super::…
        loop {
            let s = skip_ws(b, at);
            let (w, e) = ident_at(b, s);
            let e2 = skip_ws(b, e);
            if w == "super" && b.get(e2) == Some(&b':') && b.get(e2 + 1) == Some(&b':') {
                base.pop();
                at = e2 + 2;
            } else {
                break;
            }
        }
        let mut paths = Vec::new();
        i = paths_at(b, at, &base, &mut paths);
        take(kind, paths);
    }
    found
}

/// Groups of more than one file that import each other in a loop (Tarjan's algorithm).
fn circles(n: usize, edges: &BTreeMap<usize, BTreeSet<usize>>) -> Vec<Vec<usize>> {
    struct T<'a> {
        edges: &'a BTreeMap<usize, BTreeSet<usize>>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(t: &mut T<'_>, v: usize) {
        t.index[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        let targets: Vec<usize> = t
            .edges
            .get(&v)
            .map(|s| s.iter().copied().collect())
            .unwrap_or_default();
        for w in targets {
            match t.index[w] {
                None => {
                    visit(t, w);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(t.low[v]) == t.index[v] {
            let mut group = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on[w] = false;
                group.push(w);
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                t.out.push(group);
            }
        }
    }
    let mut t = T {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            visit(&mut t, v);
        }
    }
    t.out
}

fn all_circles() -> Vec<Vec<String>> {
    let mut all = Vec::new();
    for dir in crate_dirs() {
        let files = crate_files(&dir);
        for group in circles(files.len(), &imports(&files)) {
            all.push(group.into_iter().map(|i| files[i].rel.clone()).collect());
        }
    }
    all
}

#[test]
fn the_only_import_circle_is_the_one_the_architecture_names() {
    let doc = read("docs/ARCHITECTURE.md").replace('\n', " ");
    let sentence = doc
        .split("The only import circle between files left is the plugin API's own heart:")
        .nth(1)
        .and_then(|rest| rest.split(" of `catalog-framework`").next())
        .expect("docs/ARCHITECTURE.md names the one import circle left");
    let named: BTreeSet<String> = sentence
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|m| format!("catalog-framework/src/{m}.rs"))
        .collect();
    let found = all_circles();
    let expected: Vec<Vec<String>> = vec![named.into_iter().collect()];
    assert_eq!(
        found, expected,
        "the import circles between files (left) are not the one docs/ARCHITECTURE.md names (right)"
    );
}

#[test]
fn the_circle_finder_sees_a_circle() {
    // Two files that import each other, through a use group and a super:: path.
    let files = vec![
        SourceFile {
            rel: "a/mod.rs".into(),
            module: vec!["a".into()],
            text: blank("use crate::{a::b::{self, Thing as Other}, c};\n// crate::d::x\nfn f() {}"),
        },
        SourceFile {
            rel: "a/b.rs".into(),
            module: vec!["a".into(), "b".into()],
            text: blank("pub fn g() { super::f() }\nconst S: &str = \"crate::c\";"),
        },
        SourceFile {
            rel: "c.rs".into(),
            module: vec!["c".into()],
            text: blank("#[cfg(test)] mod tests { use super::*; }"),
        },
        SourceFile {
            rel: "d.rs".into(),
            module: vec!["d".into()],
            text: String::new(),
        },
    ];
    let edges = imports(&files);
    assert_eq!(circles(files.len(), &edges), vec![vec![0, 1]]);
    assert!(
        !edges.contains_key(&2),
        "super:: inside an inline module is the file itself"
    );
    assert!(!edges[&0].contains(&3), "a comment is no import");
    assert!(!edges[&1].contains(&2), "a string is no import");
}

/// Lines of each `fn` in blanked text: from its line to its closing brace's.
fn long_fns(text: &str, limit: usize) -> Vec<(String, usize)> {
    let b = text.as_bytes();
    let line_of = |i: usize| b[..i].iter().filter(|&&c| c == b'\n').count();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 < b.len() {
        let at_word = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if at_word && &b[i..i + 2] == b"fn" && b[i + 2].is_ascii_whitespace() {
            let (name, j) = ident_at(b, skip_ws(b, i + 2));
            let Some(open) = (j..b.len()).find(|&k| b[k] == b'{' || b[k] == b';') else {
                break;
            };
            if b[open] == b'{' {
                let mut depth = 0;
                let mut k = open;
                while k < b.len() {
                    match b[k] {
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    k += 1;
                }
                let lines = line_of(k) - line_of(i) + 1;
                if lines > limit {
                    out.push((name, lines));
                }
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// Spec ports, exempt from the limits (ADR 0007 names them).
const EXEMPT: &[&str] = &["plugins/activity/src/difflib.rs"];
const MAX_FILE_LINES: usize = 800;
const MAX_FN_LINES: usize = 150;

#[test]
fn plugin_files_and_functions_stay_within_their_limits() {
    let mut over = Vec::new();
    for dir in crate_dirs()
        .into_iter()
        .filter(|d| d.starts_with("plugins/"))
    {
        let mut paths = Vec::new();
        rust_files(&root().join(&dir), &mut paths);
        for p in paths {
            let rel = p
                .strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if EXEMPT.contains(&rel.as_str()) {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let lines = text.lines().count();
            if lines > MAX_FILE_LINES {
                over.push(format!("{rel}: {lines} lines"));
            }
            for (name, n) in long_fns(&blank(&text), MAX_FN_LINES) {
                over.push(format!("{rel}: fn {name}: {n} lines"));
            }
        }
    }
    assert!(
        over.is_empty(),
        "over {MAX_FILE_LINES} lines a file or {MAX_FN_LINES} a function (split them): {over:#?}"
    );
    assert_eq!(
        long_fns(&blank("fn a() {\n{\n}\n}\nfn b();"), 3),
        vec![("a".to_string(), 4)]
    );
}

#[test]
fn the_crate_table_names_every_plugin() {
    let doc = read("docs/ARCHITECTURE.md");
    let mut missing = Vec::new();
    for dir in crate_dirs()
        .into_iter()
        .filter(|d| d.starts_with("plugins/"))
    {
        let dir = dir.trim_end_matches("src");
        if !doc.lines().any(|l| l.starts_with(dir)) {
            missing.push(dir.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md's crate table lacks {missing:?}"
    );
}

/// The tables core's migrations create (catalog-store's), by name.
fn core_tables() -> BTreeSet<String> {
    let mut tables = BTreeSet::new();
    let dir = root().join("catalog-store/src/migrations/sqlite");
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let sql = std::fs::read_to_string(e.path()).unwrap();
        let words: Vec<&str> = sql.split_whitespace().collect();
        for w in words.windows(3) {
            if w[0].eq_ignore_ascii_case("create") && w[1].eq_ignore_ascii_case("table") {
                let name = w[2].trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
                if !name.eq_ignore_ascii_case("if") && name.len() > 1 {
                    tables.insert(name.to_ascii_lowercase());
                }
            }
        }
    }
    tables
}

/// `FROM x`, `JOIN x`, `UPDATE x`, `INTO x` in `text` where `x` is one of `tables`.
fn sql_on(text: &str, tables: &BTreeSet<String>) -> Vec<String> {
    let words: Vec<String> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    words
        .windows(2)
        .filter(|w| ["FROM", "JOIN", "UPDATE", "INTO"].contains(&w[0].as_str()))
        .filter(|w| tables.contains(&w[1]))
        .map(|w| format!("{} {}", w[0], w[1]))
        .collect()
}

#[test]
fn plugins_touch_cores_tables_only_through_the_repository() {
    let doc = read("docs/ARCHITECTURE.md");
    assert!(
        doc.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains(
            "Plugins touch core's tables only through the repository (`catalog_framework::store`)"
        ),
        "the claim this test checks is no longer in docs/ARCHITECTURE.md"
    );
    let tables = core_tables();
    assert!(
        tables.contains("package") && tables.contains("member"),
        "{tables:?}"
    );
    let mut found = Vec::new();
    for dir in crate_dirs()
        .into_iter()
        .filter(|d| d.starts_with("plugins/") && d != "plugins/core/src")
    {
        let mut files = Vec::new();
        rust_files(&root().join(&dir), &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            // SQL is in strings; comments only talk about it.
            let code: String = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            for hit in sql_on(&code, &tables) {
                found.push(format!(
                    "{}: {hit}",
                    f.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "plugins' own SQL on core's tables (use catalog_framework::store): {found:#?}"
    );
    assert_eq!(
        sql_on("SELECT 1 FROM package p JOIN member", &tables),
        vec!["FROM package", "JOIN member"]
    );
}

/// The names `catalog_framework::prelude` exports.
fn prelude_items() -> BTreeSet<String> {
    let lib = blank(&read("catalog-framework/src/lib.rs"));
    let body = lib
        .split("pub mod prelude")
        .nth(1)
        .expect("catalog-framework's lib.rs declares the prelude inline");
    let b = body.as_bytes();
    let end = {
        let mut depth = 0;
        let mut k = 0;
        loop {
            match b[k] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break k;
                    }
                }
                _ => {}
            }
            k += 1;
        }
    };
    let mut names = BTreeSet::new();
    for stmt in body[..end].split(';') {
        let Some(tree) = stmt
            .trim()
            .trim_start_matches('{')
            .trim()
            .strip_prefix("pub use ")
        else {
            continue;
        };
        let mut paths = Vec::new();
        paths_at(tree.as_bytes(), 0, &[], &mut paths);
        for (_, local) in paths {
            names.insert(local);
        }
    }
    names.remove("self");
    names
}

#[test]
fn the_docs_count_the_prelude_right() {
    let n = prelude_items().len();
    for (file, phrase) in [
        ("docs/ARCHITECTURE.md", "`prelude` ("),
        (
            "docs/adr/0007-framework-floors-as-crates.md",
            "The prelude has ",
        ),
        ("book/src/plugin-guide/overview.md", "It brings, in "),
    ] {
        let text = read(file).replace('\n', " ");
        let said: usize = text
            .split(phrase)
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("{file} gives the prelude's count after {phrase:?}"));
        assert_eq!(
            said, n,
            "{file} says the prelude has {said} items; it has {n}"
        );
    }
}

#[test]
fn the_book_counts_the_plugins_the_binary_links() {
    let main = read("src/main.rs");
    let linked = main
        .lines()
        .filter(|l| l.starts_with("use catalog_plugin_") && l.ends_with(" as _;"))
        .count();
    let words = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
    ];
    let text = read("book/src/plugin-guide/binary.md").replace('\n', " ");
    let said = text
        .split("The `catalog` binary links the ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .expect("the book says how many plugins the binary links");
    assert_eq!(
        said, words[linked],
        "the book says the binary links {said} plugins; src/main.rs links {linked}"
    );
}

/// The dotted keys of a JSON object's leaves (`catalog.search.rows_max`): a value that is not
/// an object, or an empty object, is a leaf.
fn leaf_keys(prefix: &str, v: &serde_json::Value, out: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) if !m.is_empty() => {
            for (k, v) in m {
                leaf_keys(&format!("{prefix}.{k}"), v, out);
            }
        }
        _ => {
            out.insert(prefix.to_string());
        }
    }
}

/// The keys the first column of docs/CONFIGURATION.md's tables names (`` | `key` | ``).
fn documented_keys(prefix: &str) -> BTreeSet<String> {
    read("docs/CONFIGURATION.md")
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .filter(|k| k.starts_with(prefix))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_catalog_setting_is_documented_and_every_documented_one_exists() {
    let config = serde_json::to_value(catalog_framework::prelude::Config::default()).unwrap();
    let mut keys = BTreeSet::new();
    leaf_keys("catalog", &config["catalog"], &mut keys);
    let documented = documented_keys("catalog.");
    let undocumented: Vec<&String> = keys.iter().filter(|k| !documented.contains(*k)).collect();
    assert!(
        undocumented.is_empty(),
        "settings docs/CONFIGURATION.md does not list: {undocumented:#?}"
    );
    // A documented key is a setting, or a section whose settings are documented one by one,
    // or one read from the keys the core configuration does not know (a plugin's): then the
    // code names it, whole or by its last word, in a string.
    let mut sources = String::new();
    for dir in crate_dirs() {
        let mut files = Vec::new();
        rust_files(&root().join(dir), &mut files);
        for f in files {
            sources.push_str(&std::fs::read_to_string(f).unwrap());
        }
    }
    let unknown: Vec<&String> = documented
        .iter()
        .filter(|d| {
            let leaf = d.rsplit('.').next().unwrap_or(d);
            !keys
                .iter()
                .any(|k| k == *d || k.starts_with(&format!("{d}.")))
                && !sources.contains(&format!("\"{leaf}\""))
                && !sources.contains(&format!("\"{d}\""))
        })
        .collect();
    assert!(
        unknown.is_empty(),
        "docs/CONFIGURATION.md lists settings the configuration does not have: {unknown:#?}"
    );
}

#[test]
fn the_configuration_lists_every_plugin() {
    let registry = crate::test_plugin::shipped_registry();
    let documented = documented_keys("");
    let missing: Vec<&str> = registry
        .plugins()
        .into_iter()
        .filter(|p| !documented.contains(*p))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/CONFIGURATION.md's table of plugins lacks {missing:?}"
    );
}

/// Issue 47's bar for typed parameters: at most 15 % of the action parameters the shipped
/// binary registers are untyped (`Option<Value>` or `Raw`: an empty schema in the OpenAPI
/// document). A parameter that really takes any JSON value is one of the 15 %.
#[test]
fn action_parameters_are_typed() {
    let registry = crate::test_plugin::shipped_registry();
    let (mut all, mut untyped) = (0usize, Vec::new());
    for (name, action) in registry.actions() {
        let Some(schema) = action.params_schema() else {
            continue;
        };
        for (key, s) in schema["properties"].as_object().into_iter().flatten() {
            all += 1;
            let typed = s
                .as_object()
                .is_some_and(|m| m.keys().any(|k| k != "description"));
            if !typed {
                untyped.push(format!("{name}.{key}"));
            }
        }
    }
    assert!(all > 300, "only {all} parameters found");
    assert!(
        untyped.len() * 100 <= all * 15,
        "{} of {all} action parameters are untyped (at most 15 %): {untyped:#?}",
        untyped.len()
    );
}
