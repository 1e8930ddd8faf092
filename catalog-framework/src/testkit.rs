//! Helpers for tests of plugins: a scratch PostgreSQL database per test, and the check that a
//! book chapter's code is a copy of an example's.

use std::time::Duration;

use sqlx::{Connection, Executor, PgConnection};

/// The PostgreSQL server every machine of the project runs (trust auth, user `postgres`).
pub const POSTGRES_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// A database created for one test and dropped (with force) when this is dropped.
pub struct ScratchDb {
    name: String,
    /// Where the test's store connects.
    pub url: String,
}

impl ScratchDb {
    /// Creates `<prefix>_<random>`; `None` when PostgreSQL is not reachable in 5 s.
    pub async fn create(prefix: &str) -> Option<ScratchDb> {
        let connect = PgConnection::connect(POSTGRES_ADMIN_URL);
        let mut conn = match tokio::time::timeout(Duration::from_secs(5), connect).await {
            Ok(Ok(c)) => c,
            _ => return None,
        };
        let name = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
        conn.execute(format!("CREATE DATABASE {name}").as_str())
            .await
            .ok()?;
        let _ = conn.close().await;
        let url = format!("postgres://postgres@127.0.0.1:5432/{name}");
        Some(ScratchDb { name, url })
    }
}

impl Drop for ScratchDb {
    fn drop(&mut self) {
        let name = self.name.clone();
        // Drop may run inside a runtime: a thread of its own with a runtime of its own.
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                if let Ok(mut c) = PgConnection::connect(POSTGRES_ADMIN_URL).await {
                    let _ = c
                        .execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str())
                        .await;
                }
            });
        })
        .join();
    }
}

/// Checks that every Rust block of some book chapters is a copy of some example code, so
/// that the book cannot drift from the API. Lines are compared trimmed with blank lines
/// skipped, so a block may be dedented; a line `// …` in a block separates pieces that are
/// checked one by one. Panics naming the first block that is no copy.
pub fn assert_book_blocks_are_copies(
    chapters: &[std::path::PathBuf],
    sources: &[std::path::PathBuf],
) {
    fn lines(text: &str) -> Vec<&str> {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect()
    }
    let sources: Vec<String> = sources
        .iter()
        .map(|s| std::fs::read_to_string(s).unwrap_or_else(|e| panic!("{}: {e}", s.display())))
        .collect();
    let source_lines: Vec<Vec<&str>> = sources.iter().map(|s| lines(s)).collect();
    for chapter in chapters {
        let text = std::fs::read_to_string(chapter)
            .unwrap_or_else(|e| panic!("{}: {e}", chapter.display()));
        let pieces = rust_pieces(&text);
        assert!(
            !pieces.is_empty(),
            "{} shows no Rust code",
            chapter.display()
        );
        for piece in &pieces {
            let want = lines(piece);
            let found = source_lines
                .iter()
                .any(|src| src.windows(want.len()).any(|w| w == want.as_slice()));
            assert!(
                found,
                "{}: not a copy of the examples' code:\n{piece}",
                chapter.display()
            );
        }
    }
}

/// The Rust blocks of a markdown text, each split at `// …` lines.
pub fn rust_pieces(markdown: &str) -> Vec<String> {
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
