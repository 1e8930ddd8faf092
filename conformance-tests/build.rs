//! Embeds the shipped cases (`cases/*.json`, `cases/known-failures.txt`,
//! `cases/profiles/*.json`) in the binary, so `cargo install` gives a suite that runs without a
//! checkout.

use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("cases");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    for dir in [root.clone(), root.join("profiles")] {
        println!("cargo:rerun-if-changed={}", dir.display());
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let keep = p.is_file() && p.extension().is_some_and(|x| x == "json" || x == "txt");
            if keep {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut out = String::from("/// The shipped cases: (path under `cases/`, text).\npub(crate) static EMBEDDED: &[(&str, &str)] = &[\n");
    for p in &files {
        let rel = p
            .strip_prefix(&root)
            .expect("under cases/")
            .to_string_lossy()
            .replace('\\', "/");
        out.push_str(&format!(
            "    ({rel:?}, include_str!({:?})),\n",
            p.display().to_string()
        ));
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("embedded_cases.rs");
    std::fs::write(dest, out).expect("writing embedded_cases.rs");
}
