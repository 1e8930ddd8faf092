#!/usr/bin/env bash
# Harvest throughput (issue 26): instance B harvests instance A's catalog of N datasets
# (bench/gen_catalog.py's synthetic portal: ~95 % public, 1–5 resources, 2–8 tags, extras),
# on this machine over loopback, with the release binary.
#
#   bench/harvest.sh [N]            N defaults to 30000
#
# A is an embedded catalog (SQLite) filled by gen_catalog.py (500 datasets through the API, the
# rest straight into SQLite, then a search-index rebuild). For each case in HARVEST_CASES a
# fresh B (HARVEST_STORE: sqlite or postgres) makes a source and runs one job, timed from
# harvest_job_create to `Finished`; then a second job on the unchanged source (what a daily
# run of an unchanged source costs). B's peak RSS is read from /proc. B runs with the DataStore
# loader off (CATALOG__DATASTORE__LOADER__ENABLED=false) so the figure is the harvest's own: with
# it on, every harvested CSV/XLSX resource also queues a load of its file on B's default queue.
#
# Cases: `ckan100` (the ckan harvester, 100 datasets a page: ckanext-harvest's page size),
# `ckan1000` (rows 1000), `rdf` (dcat_rdf on A's /catalog.ttl, HARVEST_RDF_PER_PAGE datasets a
# page, 100 by default).
# Settings: HARVEST_BIN (default $CARGO_TARGET_DIR/release/catalog), HARVEST_CASES
# ("ckan100 ckan1000 rdf"), HARVEST_STORE (sqlite), HARVEST_PORT_A (5095), HARVEST_PORT_B (5096).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/catalog-target}"
N="${1:-30000}"
BIN="${HARVEST_BIN:-$CARGO_TARGET_DIR/release/catalog}"
CASES="${HARVEST_CASES:-ckan100 ckan1000 rdf}"
STORE="${HARVEST_STORE:-sqlite}"
PORT_A="${HARVEST_PORT_A:-5095}"; PORT_B="${HARVEST_PORT_B:-5096}"
PER_PAGE="${HARVEST_RDF_PER_PAGE:-100}"
A_URL="http://127.0.0.1:$PORT_A"; B_URL="http://127.0.0.1:$PORT_B"
WORK="$(mktemp -d)"; A_PID=""; B_PID=""; DB=""
log() { printf 'harvest-bench: %s\n' "$*" >&2; }
stop() { [[ -z "${!1}" ]] || { kill "${!1}" 2>/dev/null || true; wait "${!1}" 2>/dev/null || true; eval "$1=''"; }; }
cleanup() {
    stop A_PID; stop B_PID
    [[ -z "$DB" ]] || psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT
wait_up() { for _ in $(seq 1 600); do curl -sf -o /dev/null "$1/api/3/action/status_show" && return 0; sleep 0.1; done; log "$1 not up"; exit 1; }
post() { curl -sf -H "Authorization: $2" -H 'Content-Type: application/json' -d "$4" "$1/api/3/action/$3"; }
field() { python3 -c 'import json,sys; v=json.load(sys.stdin)["result"]
for k in sys.argv[1].split("."): v=v[k]
print(v if not isinstance(v,(dict,list)) else json.dumps(v))' "$1"; }

# --- A: the catalog to harvest ----------------------------------------------------------------
a() { "$BIN" --data-dir "$WORK/a" "$@"; }
a sysadmin add admin --email admin@example.org --password 'bench-password-123' >/dev/null
A_TOKEN="$(a user token add admin bench | tail -n1)"
start_a() {
    CATALOG__SITE_URL="$A_URL" CATALOGEXT__DCAT__DATASETS_PER_PAGE="$PER_PAGE" \
        CATALOG__DATASTORE__LOADER__ENABLED=false \
        "$BIN" --data-dir "$WORK/a" serve --bind "127.0.0.1:$PORT_A" >>"$WORK/a.log" 2>&1 &
    A_PID=$!; wait_up "$A_URL"
}
start_a
log "A: 500 datasets through the API"
python3 bench/gen_catalog.py --url "$A_URL" --token "$A_TOKEN" --datasets 500 --progress 0 >/dev/null
stop A_PID
if [[ "$N" -gt 500 ]]; then
    log "A: datasets up to $N straight into SQLite"
    python3 bench/gen_catalog.py --sqlite "$WORK/a/catalog.db" --datasets "$N" --progress 0 >/dev/null
    a search-index rebuild >/dev/null
fi
start_a
PUBLIC="$(curl -sf "$A_URL/api/3/action/package_search?rows=0" | field count)"
log "A: $PUBLIC public datasets"
echo "Harvest benchmark: A has $N datasets ($PUBLIC public); B on $STORE; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "binary: $BIN"

# --- B: one fresh harvester per case ----------------------------------------------------------
for case in $CASES; do
    stop B_PID
    rm -rf "$WORK/b"
    B_DBURL=""
    if [[ "$STORE" == postgres ]]; then
        [[ -z "$DB" ]] || psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null
        DB="bench_harvest_$$"
        psql -q -h 127.0.0.1 -U postgres -c "CREATE DATABASE $DB" >/dev/null
        B_DBURL="postgres://postgres@127.0.0.1:5432/$DB"
    fi
    b() { if [[ -n "$B_DBURL" ]]; then "$BIN" --data-dir "$WORK/b" --database-url "$B_DBURL" "$@"; else "$BIN" --data-dir "$WORK/b" "$@"; fi; }
    b sysadmin add admin --email admin@example.org --password 'bench-password-123' >/dev/null
    B_TOKEN="$(b user token add admin bench | tail -n1)"
    EXTRA=()
    [[ "$STORE" == postgres ]] && EXTRA=(env CATALOG__SEARCH__BACKEND=postgres)
    "${EXTRA[@]}" env CATALOG__SITE_URL="$B_URL" CATALOG__HARVEST__ALLOW_HOSTS="[127.0.0.1:$PORT_A]" \
        CATALOG__DATASTORE__LOADER__ENABLED=false \
        "$BIN" --data-dir "$WORK/b" ${B_DBURL:+--database-url "$B_DBURL"} serve --bind "127.0.0.1:$PORT_B" >"$WORK/b.log" 2>&1 &
    B_PID=$!; wait_up "$B_URL"
    post "$B_URL" "$B_TOKEN" organization_create '{"name": "mirror"}' >/dev/null
    case "$case" in
        ckan100) SRC="{\"name\": \"source-a\", \"url\": \"$A_URL\", \"source_type\": \"ckan\", \"owner_org\": \"mirror\", \"config\": \"{\\\"rows\\\": 100}\"}" ;;
        ckan1000) SRC="{\"name\": \"source-a\", \"url\": \"$A_URL\", \"source_type\": \"ckan\", \"owner_org\": \"mirror\", \"config\": \"{\\\"rows\\\": 1000}\"}" ;;
        rdf) SRC="{\"name\": \"source-a\", \"url\": \"$A_URL/catalog.ttl\", \"source_type\": \"dcat_rdf\", \"owner_org\": \"mirror\"}" ;;
        *) log "unknown case $case"; exit 2 ;;
    esac
    SOURCE_ID="$(post "$B_URL" "$B_TOKEN" harvest_source_create "$SRC" | field id)"
    BASE_RSS="$(awk '/^VmRSS/{print $2}' /proc/$B_PID/status)"
    for run in first again; do
        t0=$(date +%s.%N)
        JOB="$(post "$B_URL" "$B_TOKEN" harvest_job_create "{\"source_id\": \"$SOURCE_ID\"}" | field id)"
        while :; do
            J="$(post "$B_URL" "$B_TOKEN" harvest_job_show "{\"id\": \"$JOB\"}")"
            [[ "$(field status <<<"$J")" == Finished ]] && break
            sleep 0.5
        done
        t1=$(date +%s.%N)
        secs=$(python3 -c "print(f'{$t1 - $t0:.1f}')")
        stats="$(field stats <<<"$J")"
        added="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["added"])' "$stats")"
        rate=$(python3 -c "print(f'{max($added,1) / ($t1 - $t0):.0f}')")
        peak="$(awk '/^VmHWM/{print $2}' /proc/$B_PID/status)"
        errs="$(field gather_error_summary <<<"$J")"
        echo "$case $run: ${secs} s  stats=$stats  ($rate added/s)  B rss base=$((BASE_RSS/1024)) MiB peak=$((peak/1024)) MiB  gather_errors=$errs"
    done
    COUNT="$(curl -sf -H "Authorization: $B_TOKEN" "$B_URL/api/3/action/package_search?rows=0&fq=harvest_source_id:$SOURCE_ID" | field count)"
    echo "$case: B holds $COUNT harvested datasets"
done
