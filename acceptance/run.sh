#!/usr/bin/env bash
# CKAN acceptance: runs acceptance/ckanapi_foundation.py, ckanapi_search.py, ckanapi_activity.py, ckanapi_api_surface.py and ckanapi_datastore.py (the real `ckanapi`
# client), legacy_api_script.py (the legacy API v1/v2 with plain urllib, as an old script), dcat_rdf.py (the DCAT RDF endpoints, parsed with rdflib and checked with the vendored
# SHACL validator in conformance-tests/dcat-ap), web_browser.py (the web pages in headless Chromium
# with Selenium and axe-core, installed by acceptance/setup-browser.sh) and schemathesis (every action, from the OpenAPI
# description at /api/3/openapi.json) against a fresh `catalog serve` in a temporary data
# directory.
#
#   acceptance/run.sh            # uses $CATALOG_BIN, else $CARGO_TARGET_DIR/debug/catalog
#
# It creates a sysadmin and three users with the CLI, mints one API token each, starts the
# server on a free port, installs the pinned Python requirements into a venv
# ($CATALOG_VENV, default $HOME/.cache/catalog-venv) and runs the script. The exit status is the
# script's. Nothing is skipped: if the venv or pip fails, this fails.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
case "$CARGO_TARGET_DIR" in
    /*) ;;
    *) CARGO_TARGET_DIR="$ROOT/$CARGO_TARGET_DIR" ;;
esac
CATALOG_BIN="${CATALOG_BIN:-$CARGO_TARGET_DIR/debug/catalog}"
VENV="${CATALOG_VENV:-$HOME/.cache/catalog-venv}"
PYTHON="${PYTHON:-python3}"

if [ ! -x "$CATALOG_BIN" ]; then
    echo "acceptance: catalog binary not found at $CATALOG_BIN (build it with 'cargo build --bin catalog' or set CATALOG_BIN)" >&2
    exit 2
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/catalog-acceptance.XXXXXX")
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT

# Python environments first, so a registry problem shows before anything else runs.
# ensure_venv DIR REQUIREMENTS: creates the venv and installs the pinned requirements once
# (again only when the requirements file changes).
ensure_venv() {
    local venv=$1 req=$2
    if [ ! -x "$venv/bin/python" ]; then
        echo "acceptance: creating venv $venv"
        "$PYTHON" -m venv "$venv" || {
            echo "acceptance: FAILED: could not create a venv with $PYTHON (install python3 and its venv module)" >&2
            exit 1
        }
    fi
    local stamp="$venv/.catalog-acceptance-requirements"
    if ! cmp -s "$req" "$stamp"; then
        echo "acceptance: installing $req into $venv"
        "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$req" || {
            echo "acceptance: FAILED: pip could not install $req (is the package index reachable?)" >&2
            exit 1
        }
        cp "$req" "$stamp"
    fi
}
ensure_venv "$VENV" "$ROOT/acceptance/requirements.txt"
# The browser test's Chromium, ChromeDriver and axe-core (installed once; the script prints the
# path of axe.min.js last).
AXE_JS=$("$ROOT/acceptance/setup-browser.sh" | tail -n1)
ARTIFACTS="${CATALOG_ARTIFACTS:-$CARGO_TARGET_DIR/browser-artifacts}"
rm -rf "$ARTIFACTS"
mkdir -p "$ARTIFACTS"
# schemathesis (the last step) in a venv of its own: its dependencies are not pinned with ours.
ST_VENV="${CATALOG_ST_VENV:-$HOME/.cache/catalog-venv-schemathesis}"
ensure_venv "$ST_VENV" "$ROOT/acceptance/requirements-schemathesis.txt"

catalog() { "$CATALOG_BIN" --data-dir "$TMP/data" "$@"; }

# Accounts and tokens (a token is printed alone on the last line of stdout).
catalog sysadmin add acceptance_admin --email admin@acceptance.example.org --password 'admin-password-1' >/dev/null
for u in editor member outsider; do
    catalog user add "acceptance_$u" --email "$u@acceptance.example.org" --password "$u-password-1" >/dev/null
done
token() { catalog user token add "$1" acceptance | tail -n1; }
CKAN_SYSADMIN_TOKEN=$(token acceptance_admin)
CKAN_EDITOR_TOKEN=$(token acceptance_editor)
CKAN_MEMBER_TOKEN=$(token acceptance_member)
CKAN_OUTSIDER_TOKEN=$(token acceptance_outsider)

# A free port, then the server, with site_url matching it (upload URLs and the DCAT catalog URI
# are built from it). dcat_rdf.py expects 5 datasets per catalog page and content negotiation on.
PORT=$("$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
CKAN_URL="http://127.0.0.1:$PORT"
CATALOG__SITE_URL="$CKAN_URL" \
    CATALOG__AUTH__CREATE_USER_VIA_WEB=true \
    CATALOGEXT__DCAT__DATASETS_PER_PAGE=5 \
    CATALOGEXT__DCAT__ENABLE_CONTENT_NEGOTIATION=true \
    CATALOG__DATASTORE__SQLSEARCH__ENABLED=true \
    CATALOG__HARVEST__ALLOW_HOSTS="[127.0.0.1:$PORT]" \
    "$CATALOG_BIN" --data-dir "$TMP/data" serve --bind "127.0.0.1:$PORT" \
    >"$TMP/server.log" 2>&1 &
SERVER_PID=$!

ready=""
for _ in $(seq 1 150); do
    if "$VENV/bin/python" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)" \
        "$CKAN_URL/api/3/action/status_show" 2>/dev/null; then
        ready=1
        break
    fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        break
    fi
    sleep 0.2
done
if [ -z "$ready" ]; then
    echo "acceptance: server did not answer $CKAN_URL/api/3/action/status_show; its log:" >&2
    cat "$TMP/server.log" >&2
    exit 1
fi

status=0
CKAN_URL="$CKAN_URL" \
    CKAN_SYSADMIN_TOKEN="$CKAN_SYSADMIN_TOKEN" \
    CKAN_EDITOR_TOKEN="$CKAN_EDITOR_TOKEN" \
    CKAN_MEMBER_TOKEN="$CKAN_MEMBER_TOKEN" \
    CKAN_OUTSIDER_TOKEN="$CKAN_OUTSIDER_TOKEN" \
    "$VENV/bin/python" "$ROOT/acceptance/ckanapi_foundation.py" || status=$?
echo "acceptance: package_search"
CKAN_URL="$CKAN_URL" \
    CKAN_SYSADMIN_TOKEN="$CKAN_SYSADMIN_TOKEN" \
    CKAN_EDITOR_TOKEN="$CKAN_EDITOR_TOKEN" \
    CKAN_MEMBER_TOKEN="$CKAN_MEMBER_TOKEN" \
    CKAN_OUTSIDER_TOKEN="$CKAN_OUTSIDER_TOKEN" \
    "$VENV/bin/python" "$ROOT/acceptance/ckanapi_search.py" || status=$?
echo "acceptance: activity streams"
CKAN_URL="$CKAN_URL" \
    CKAN_SYSADMIN_TOKEN="$CKAN_SYSADMIN_TOKEN" \
    CKAN_EDITOR_TOKEN="$CKAN_EDITOR_TOKEN" \
    CKAN_MEMBER_TOKEN="$CKAN_MEMBER_TOKEN" \
    CKAN_OUTSIDER_TOKEN="$CKAN_OUTSIDER_TOKEN" \
    "$VENV/bin/python" "$ROOT/acceptance/ckanapi_activity.py" || status=$?
echo "acceptance: the rest of the Action API"
CKAN_URL="$CKAN_URL" \
    CKAN_SYSADMIN_TOKEN="$CKAN_SYSADMIN_TOKEN" \
    CKAN_EDITOR_TOKEN="$CKAN_EDITOR_TOKEN" \
    CKAN_MEMBER_TOKEN="$CKAN_MEMBER_TOKEN" \
    CKAN_OUTSIDER_TOKEN="$CKAN_OUTSIDER_TOKEN" \
    "$VENV/bin/python" "$ROOT/acceptance/ckanapi_api_surface.py" || status=$?
echo "acceptance: the DataStore (ckanapi, and the dump as plain HTTP)"
CKAN_URL="$CKAN_URL" \
    CKAN_SYSADMIN_TOKEN="$CKAN_SYSADMIN_TOKEN" \
    CKAN_OUTSIDER_TOKEN="$CKAN_OUTSIDER_TOKEN" \
    "$VENV/bin/python" "$ROOT/acceptance/ckanapi_datastore.py" || status=$?
echo "acceptance: harvesting (ckanapi; the server harvests its own RDF and Action API)"
CKAN_URL="$CKAN_URL" \
    CKAN_SYSADMIN_TOKEN="$CKAN_SYSADMIN_TOKEN" \
    CKAN_OUTSIDER_TOKEN="$CKAN_OUTSIDER_TOKEN" \
    "$VENV/bin/python" "$ROOT/acceptance/ckanapi_harvest.py" || status=$?
echo "acceptance: the legacy API v1/v2, as an old plain-HTTP script"
CKAN_URL="$CKAN_URL" \
    CKAN_SYSADMIN_TOKEN="$CKAN_SYSADMIN_TOKEN" \
    CKAN_OUTSIDER_TOKEN="$CKAN_OUTSIDER_TOKEN" \
    "$VENV/bin/python" "$ROOT/acceptance/legacy_api_script.py" || status=$?
echo "acceptance: DCAT RDF endpoints"
CKAN_URL="$CKAN_URL" \
    CKAN_SYSADMIN_TOKEN="$CKAN_SYSADMIN_TOKEN" \
    CKAN_EDITOR_TOKEN="$CKAN_EDITOR_TOKEN" \
    CKAN_MEMBER_TOKEN="$CKAN_MEMBER_TOKEN" \
    CKAN_OUTSIDER_TOKEN="$CKAN_OUTSIDER_TOKEN" \
    CKAN_DCAT_PER_PAGE=5 \
    "$VENV/bin/python" "$ROOT/acceptance/dcat_rdf.py" || status=$?
echo "acceptance: the web pages in headless Chromium (screenshots in $ARTIFACTS)"
CKAN_URL="$CKAN_URL" \
    CKAN_SYSADMIN_TOKEN="$CKAN_SYSADMIN_TOKEN" \
    CKAN_EDITOR_TOKEN="$CKAN_EDITOR_TOKEN" \
    AXE_JS="$AXE_JS" \
    CATALOG_ARTIFACTS="$ARTIFACTS" \
    "$VENV/bin/python" "$ROOT/acceptance/web_browser.py" || status=$?

echo "acceptance: the conformance suite read-only with its reports (JUnit checked against junit-10.xsd), and the DCAT-AP check of a deployment"
CKAN_URL="$CKAN_URL" \
    CKAN_SYSADMIN_TOKEN="$CKAN_SYSADMIN_TOKEN" \
    CONFORMANCE_BIN="${CONFORMANCE_BIN:-$CARGO_TARGET_DIR/debug/catalog-conformance}" \
    "$VENV/bin/python" "$ROOT/acceptance/conformance_reports.py" || status=$?

# Last, as it writes whatever it likes as the sysadmin: every action, generated from the
# OpenAPI description, must answer without a server error and within the description's
# responses. Seeded, so a failure reproduces.
echo "acceptance: schemathesis against /api/3/openapi.json"
"$ST_VENV/bin/st" run "$CKAN_URL/api/3/openapi.json" --url "$CKAN_URL" \
    -H "Authorization: $CKAN_SYSADMIN_TOKEN" \
    --checks not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance,response_headers_conformance \
    --max-examples 25 --workers 2 --seed 1 --no-color || status=$?

if [ "$status" -ne 0 ]; then
    echo "acceptance: FAILED (exit $status); last lines of the server log:" >&2
    tail -n 40 "$TMP/server.log" >&2
fi
exit "$status"
