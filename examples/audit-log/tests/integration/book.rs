//! The plugin guide's chapters on actions, the lifecycle, chained actions and domain events walk through
//! this crate (and custom-action's chained `status_show`, core's `ctx.emit` calls): every Rust block in them must be a
//! copy of that code, so that the book cannot drift from the API.

use std::path::Path;

#[test]
fn the_chapters_rust_blocks_are_copies_of_the_examples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let chapters = ["action.md", "lifecycle.md", "chained.md", "events.md"]
        .map(|c| root.join("../../book/src/plugin-guide").join(c));
    let sources = [
        "src/lib.rs",
        "tests/integration/main.rs",
        "../custom-action/src/lib.rs",
        "../../plugins/core/src/resource/delete.rs",
    ]
    .map(|s| root.join(s));
    catalog_host::testkit::assert_book_blocks_are_copies(&chapters, &sources);
}
