//! The plugin guide's chapter walks through this crate: every Rust block in it must be a copy
//! of this crate's code, so that the book cannot drift from the API.
//!
//! Lines are compared trimmed and blank lines skipped, so a block may be dedented; a line
//! `// …` in a block separates pieces that are checked one by one.

use std::path::Path;

const CHAPTER: &str = "../../book/src/plugin-guide/dcat-profile.md";
const SOURCES: &[&str] = &[
    "src/lib.rs",
    "tests/integration/main.rs",
    "tests/integration/graph.rs",
    "tests/integration/round_trip.rs",
    "tests/integration/registry.rs",
];

fn lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect()
}

/// The Rust blocks of a markdown text, each split at `// …` lines.
fn rust_pieces(markdown: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_start()) {
            (None, fence) if fence.starts_with("```rust") => current = Some(String::new()),
            (Some(_), "```") => pieces.push(current.take().unwrap_or_default()),
            (Some(piece), "// …") => pieces.push(std::mem::take(piece)),
            (Some(piece), _) => {
                piece.push_str(line);
                piece.push('\n');
            }
            (None, _) => {}
        }
    }
    pieces.retain(|p| !p.trim().is_empty());
    pieces
}

#[test]
fn the_chapters_rust_blocks_are_copies_of_this_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let chapter = std::fs::read_to_string(root.join(CHAPTER)).expect("the chapter exists");
    let sources: Vec<String> = SOURCES
        .iter()
        .map(|s| std::fs::read_to_string(root.join(s)).expect("source exists"))
        .collect();
    let source_lines: Vec<Vec<&str>> = sources.iter().map(|s| lines(s)).collect();

    let pieces = rust_pieces(&chapter);
    assert!(pieces.len() >= 3, "the chapter shows the profile's code");
    for piece in &pieces {
        let want = lines(piece);
        let found = source_lines
            .iter()
            .any(|src| src.windows(want.len()).any(|w| w == want.as_slice()));
        assert!(found, "not a copy of this crate's code:\n{piece}");
    }
}
