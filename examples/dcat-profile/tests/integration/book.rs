//! The plugin guide's chapter walks through this crate: every Rust block in it must be a copy
//! of this crate's code, so that the book cannot drift from the API.

use std::path::Path;

const CHAPTER: &str = "../../book/src/plugin-guide/dcat-profile.md";
const SOURCES: &[&str] = &[
    "src/lib.rs",
    "tests/integration/main.rs",
    "tests/integration/graph.rs",
    "tests/integration/round_trip.rs",
    "tests/integration/registry.rs",
];

#[test]
fn the_chapters_rust_blocks_are_copies_of_this_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let chapter = root.join(CHAPTER);
    let text = std::fs::read_to_string(&chapter).expect("the chapter exists");
    assert!(
        catalog_host::testkit::rust_pieces(&text).len() >= 3,
        "the chapter shows the profile's code"
    );
    let sources: Vec<_> = SOURCES.iter().map(|s| root.join(s)).collect();
    catalog_host::testkit::assert_book_blocks_are_copies(&[chapter], &sources);
}
