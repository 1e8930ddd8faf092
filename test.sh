#!/usr/bin/env bash
# Runs the whole test suite: every crate of the workspace, SQLite always, PostgreSQL when
# postgres://postgres@127.0.0.1:5432 answers (the PostgreSQL tests check that themselves and
# report "skipped" when it does not). Extra arguments go to `cargo test`.
# Then the CKAN acceptance script (acceptance/run.sh): the real `ckanapi` Python client against
# a freshly built `catalog serve`. It needs python3 with venv, and the package index the first
# time (to install acceptance/requirements.txt); without them it fails, it does not skip.
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/catalog-target}"

if command -v pg_isready >/dev/null 2>&1 && pg_isready -q -h 127.0.0.1 -p 5432; then
    echo "test.sh: PostgreSQL reachable at 127.0.0.1:5432: PostgreSQL tests will run"
else
    echo "test.sh: PostgreSQL not reachable at 127.0.0.1:5432: PostgreSQL tests will report skipped"
fi

# The S3-compatible server the file-store tests start on loopback (tests/integration/hardening/file_store.rs):
# s3s-fs from crates.io, installed once into ~/.cache (a few minutes the first time).
export S3S_FS_BIN="${S3S_FS_BIN:-$HOME/.cache/s3s-fs/bin/s3s-fs}"
if [ ! -x "$S3S_FS_BIN" ]; then
    echo "test.sh: installing s3s-fs 0.14.1 (the S3 server of the file-store tests)"
    CARGO_TARGET_DIR="$HOME/.cache/s3s-fs/target" cargo install s3s-fs@0.14.1 --locked \
        --features binary --root "$HOME/.cache/s3s-fs"
    rm -rf "$HOME/.cache/s3s-fs/target"
    export S3S_FS_BIN="$HOME/.cache/s3s-fs/bin/s3s-fs"
fi

# insta notes every snapshot file an assertion reads; after a whole run (no arguments), a
# snapshot file that no assertion read is a leftover of a renamed or removed test and fails.
refs=$(mktemp)
trap 'rm -f "$refs"' EXIT
INSTA_SNAPSHOT_REFERENCES_FILE="$refs" cargo test --workspace "$@"
if [ $# -eq 0 ]; then
    unreferenced=$(comm -23 \
        <(git ls-files --cached --others --exclude-standard -- '*.snap' |
            while read -r f; do [ -f "$f" ] && echo "$PWD/$f"; done | sort -u) \
        <(sort -u "$refs"))
    if [ -n "$unreferenced" ]; then
        echo "test.sh: snapshot files no test reads (remove them, or the test that lost them):"
        echo "$unreferenced"
        exit 1
    fi
fi

echo "test.sh: CKAN acceptance (ckanapi against catalog serve)"
# The server and the conformance suite's binary, as the tests built them (cargo builds a
# package's binaries for its integration tests): `cargo test --no-run` finds them up to date.
# (`cargo build --bins` would rebuild every crate: a build without the dev-dependencies'
# features is another build.)
cargo test --workspace --no-run
CATALOG_BIN="$CARGO_TARGET_DIR/debug/catalog" acceptance/run.sh
