//! The plugin guide's chapter on file-store backends walks through this crate: every Rust
//! block in it must be a copy of this crate's code, so that the book cannot drift from the
//! API.

use std::path::Path;

#[test]
fn the_chapters_rust_blocks_are_copies_of_this_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let chapter = root.join("../../book/src/plugin-guide/file-store-backend.md");
    let text = std::fs::read_to_string(&chapter).expect("the chapter exists");
    assert!(
        catalog_host::testkit::rust_pieces(&text).len() >= 3,
        "the chapter shows the backend's code"
    );
    catalog_host::testkit::assert_book_blocks_are_copies(&[chapter], &[root.join("src/lib.rs")]);
}
