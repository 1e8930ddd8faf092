#!/usr/bin/env bash
# Runs the conformance suite against a real CKAN 2.12 on this machine, in write mode and in
# read-only mode, and prints both summaries. Not part of ./test.sh: the first run installs CKAN
# from PyPI (about five minutes) and needs the package index.
#
#   conformance-tests/ckan/run-against-ckan.sh [ANCHOR_SOURCE]
#
# ANCHOR_SOURCE (default ../shared/ckan-anchor beside the project) holds the scripts that install
# and start CKAN 2.12 with PostgreSQL, Redis and a Solr emulator (see its README). They are copied
# to $CKAN_DIR (default ~/ckan-anchor) and run from there; CKAN listens on 127.0.0.1:5000 and is
# reset (fresh database, 200 seeded datasets) before the run.
#
# Settings: CKAN_DIR, PROFILE (default ckan-2.12 when the cases have that profile, else catalog),
# REPORTS (default ./ckan-reports: JSON, JUnit and HTML of both runs).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
SRC="${1:-$ROOT/../shared/ckan-anchor}"
CKAN_DIR="${CKAN_DIR:-$HOME/ckan-anchor}"
REPORTS="${REPORTS:-$PWD/ckan-reports}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/catalog-target}"
if [ -z "${PROFILE:-}" ]; then
    if [ -f "$ROOT/conformance-tests/cases/profiles/ckan-2.12.json" ]; then PROFILE=ckan-2.12; else PROFILE=catalog; fi
fi

if [ ! -x "$CKAN_DIR/venv/bin/ckan" ]; then
    [ -d "$SRC" ] || { echo "no CKAN anchor scripts at $SRC" >&2; exit 2; }
    mkdir -p "$CKAN_DIR"
    cp "$SRC"/* "$CKAN_DIR"/
    [ -f "$CKAN_DIR/ckan.ini" ] || cp "$CKAN_DIR/ckan.ini.example" "$CKAN_DIR/ckan.ini"
    (cd "$CKAN_DIR" &&
        python3 -m venv venv &&
        venv/bin/pip install -q -U pip setuptools wheel &&
        venv/bin/pip install -q "ckan[requirements]==2.12.0" gunicorn)
    if ! dpkg -s libpq-dev >/dev/null 2>&1; then apt-get update -q && apt-get install -y -q libpq-dev; fi
fi
(cd "$CKAN_DIR" && ./reset.sh)
TOKEN="$(cat "$CKAN_DIR/api_token.txt")"

cargo build -q -p catalog-conformance --bin catalog-conformance
BIN="$CARGO_TARGET_DIR/debug/catalog-conformance"
mkdir -p "$REPORTS"
# The anchor's ckan.ini: organizations by users on; unowned datasets and collaborators off.
ASSUME=(--assume ckan.auth.user_create_organizations=true)
status=0
echo "== write mode, profile $PROFILE"
"$BIN" --base-url http://127.0.0.1:5000 --token "$TOKEN" --profile "$PROFILE" "${ASSUME[@]}" \
    --json "$REPORTS/write.json" --junit "$REPORTS/write.xml" --html "$REPORTS/write.html" \
    | tail -n 1 || status=$?
echo "== read-only mode, profile $PROFILE"
"$BIN" --base-url http://127.0.0.1:5000 --read-only --rate 20 --profile "$PROFILE" "${ASSUME[@]}" \
    --json "$REPORTS/read-only.json" --junit "$REPORTS/read-only.xml" --html "$REPORTS/read-only.html" \
    | tail -n 1 || status=$?
echo "reports in $REPORTS"
exit "$status"
