#!/usr/bin/env bash
# Search benchmark (issue 3): package_search latency, reindex throughput and memory on a
# synthetic catalog of N datasets, on one machine over loopback only.
#
#   bench/search.sh embedded 30000     # SQLite store + tantivy index (the default backend)
#   bench/search.sh postgres 30000     # PostgreSQL store + PostgreSQL search backend
#   bench/search.sh pgstore 30000      # PostgreSQL store + tantivy index (several nodes' layout)
#
# It uses the release binary ($CARGO_TARGET_DIR/release/catalog; build it first with
# `cargo build --release --bin catalog`, or set SEARCH_BENCH_BUILD=1), starts `catalog serve` on a
# fresh data directory (and, for postgres, a fresh database created with psql and dropped at the
# end), creates a sysadmin and a token with the CLI, loads N datasets with bench/gen_catalog.py
# (16 concurrent clients), waits until the index holds them all, then runs wrk on
# /api/3/action/package_search:
#   a. q=<common words>, rows=20, 5 facet fields   (8 connections, and 1 connection)
#   b. the same q, rows=1000
#   c. deep paging: rows=20, start=<deep start>
#   d. fielded fq: tags:economy AND res_format:CSV, rows=20
# then reads the server's VmRSS and VmHWM, stops it and times `catalog search-index rebuild`.
# The summary goes to stdout and to bench/results/search-<stamp>-<backend>-<N>.txt.
#
# Settings (environment): SEARCH_BENCH_PORT (5078), SEARCH_BENCH_THREADS (2),
# SEARCH_BENCH_CONNECTIONS (8), SEARCH_BENCH_DURATION (10s), SEARCH_BENCH_LOAD_CONCURRENCY (16),
# SEARCH_BENCH_SEED (42), SEARCH_BENCH_Q ("open data"), SEARCH_BENCH_FQ, SEARCH_BENCH_DEEP_START
# (min(2N/3, 100000)), SEARCH_BENCH_PG (postgres://postgres@127.0.0.1:5432), SEARCH_BENCH_BIN
# (the binary), SEARCH_BENCH_BUILD=1 (build it first), SEARCH_BENCH_KEEP=1 (keep the data dir,
# and the PostgreSQL database of postgres and pgstore runs).
#
# Large catalogs on the embedded and pgstore backends (1,000,000 datasets through the API would
# take most of an hour even at 500/s):
#   SEARCH_BENCH_API_DATASETS=K   load only K datasets through the API, stop the server, write the
#                                 rest of the same catalog straight into the store
#                                 (gen_catalog.py --sqlite, or --postgres with COPY for pgstore),
#                                 index everything with
#                                 `search-index rebuild` (that is measurement e.), then restart the
#                                 server and run the queries;
#   SEARCH_BENCH_REUSE=DIR        continue from the data directory of a run that was stopped during
#                                 its API load (kept with SEARCH_BENCH_KEEP=1), the same way.
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/catalog-target}"

BACKEND="${1:-embedded}"
N="${2:-30000}"
case "$BACKEND" in embedded|postgres|pgstore) ;; *) echo "usage: $0 embedded|postgres|pgstore N" >&2; exit 2 ;; esac

PORT="${SEARCH_BENCH_PORT:-5078}"
THREADS="${SEARCH_BENCH_THREADS:-2}"
CONNECTIONS="${SEARCH_BENCH_CONNECTIONS:-8}"
DURATION="${SEARCH_BENCH_DURATION:-10s}"
LOAD_CONCURRENCY="${SEARCH_BENCH_LOAD_CONCURRENCY:-16}"
SEED="${SEARCH_BENCH_SEED:-42}"
Q="${SEARCH_BENCH_Q:-open data}"
FQ="${SEARCH_BENCH_FQ:-tags:economy AND res_format:CSV}"
# Deep paging: start=100000 at 300k datasets; at smaller N, two thirds of the catalog.
DEEP_START="${SEARCH_BENCH_DEEP_START:-$(( N * 2 / 3 < 100000 ? N * 2 / 3 : 100000 ))}"
PG_ADMIN_URL="${SEARCH_BENCH_PG:-postgres://postgres@127.0.0.1:5432}"
VENV="${CATALOG_VENV:-$HOME/.cache/catalog-venv}"
BASE="http://127.0.0.1:${PORT}"
API="${BASE}/api/3/action"
BIN="${SEARCH_BENCH_BIN:-${CARGO_TARGET_DIR}/release/catalog}"

log() { printf 'search-bench: %s\n' "$*" >&2; }

# --- tools -------------------------------------------------------------------------------
if ! command -v wrk >/dev/null 2>&1; then
    log "installing wrk"
    apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
fi
for tool in curl jq wrk python3; do
    command -v "$tool" >/dev/null 2>&1 || { log "missing tool: $tool"; exit 1; }
done
[[ "$BACKEND" == embedded ]] || command -v psql >/dev/null 2>&1 || { log "missing tool: psql"; exit 1; }
# The generator needs only the standard library; run it with the project's venv (as
# acceptance/run.sh makes it), creating the venv if it is missing.
if [[ ! -x "$VENV/bin/python" ]]; then
    log "creating venv $VENV"
    python3 -m venv "$VENV"
fi
PY="$VENV/bin/python"

if [[ "${SEARCH_BENCH_BUILD:-0}" == 1 ]]; then
    log "cargo build --release --bin catalog"
    cargo build --release --quiet --bin catalog
fi
[[ -x "$BIN" ]] || { log "no binary at $BIN (cargo build --release --bin catalog)"; exit 1; }
if curl -s -o /dev/null "${BASE}/api/3" 2>/dev/null; then
    log "something already listens on 127.0.0.1:${PORT}; set SEARCH_BENCH_PORT"; exit 1
fi

LOADAVG="$(cut -d' ' -f1-3 /proc/loadavg)"

# --- store -------------------------------------------------------------------------------
API_N="${SEARCH_BENCH_API_DATASETS:-$N}"
REUSE="${SEARCH_BENCH_REUSE:-}"
if [[ "$API_N" -lt "$N" && "$BACKEND" == postgres ]] || [[ -n "$REUSE" && "$BACKEND" != embedded ]]; then
    log "SEARCH_BENCH_API_DATASETS < N is for embedded and pgstore, SEARCH_BENCH_REUSE for embedded"; exit 2
fi
if [[ -n "$REUSE" ]]; then
    DATA_DIR="$REUSE"
    [[ -f "$DATA_DIR/data/catalog.db" ]] || { log "no $DATA_DIR/data/catalog.db to reuse"; exit 1; }
    SEARCH_BENCH_KEEP=1
else
    DATA_DIR="$(mktemp -d -t catalog-search-bench.XXXXXX)"
fi
RESULTS="$DATA_DIR/results-$(date -u +%H%M%S)"
mkdir -p "$RESULTS"
SERVER_PID=""
DB_NAME=""
DB_ARGS=()
if [[ "$BACKEND" != embedded ]]; then
    DB_NAME="catalog_search_bench_$$"
    psql "$PG_ADMIN_URL/postgres" -q -c "CREATE DATABASE $DB_NAME" >/dev/null
    DB_URL="$PG_ADMIN_URL/$DB_NAME"
    DB_ARGS=(--database-url "$DB_URL")
    [[ "$BACKEND" != postgres ]] || export CATALOG__SEARCH__BACKEND=postgres
fi
stop_server() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=""
}
cleanup() {
    stop_server
    if [[ "${SEARCH_BENCH_KEEP:-0}" == 1 ]]; then
        log "kept data directory $DATA_DIR${DB_NAME:+ and database $DB_URL (serve it with CATALOG_DATABASE_URL=$DB_URL; drop it with psql when done)}"
    else
        if [[ -n "$DB_NAME" ]]; then
            psql "$PG_ADMIN_URL/postgres" -q -c "DROP DATABASE IF EXISTS $DB_NAME WITH (FORCE)" >/dev/null || true
        fi
        rm -rf "$DATA_DIR"
    fi
}
trap cleanup EXIT

catalog() { "$BIN" --data-dir "$DATA_DIR/data" "${DB_ARGS[@]}" "$@"; }

log "backend $BACKEND, $N datasets, data directory $DATA_DIR${DB_NAME:+, database $DB_NAME}"
if [[ -z "$REUSE" ]]; then
    catalog db init >/dev/null 2>"$RESULTS/cli.log"
    catalog sysadmin add admin --email admin@example.org --password 'bench-password-123' >/dev/null 2>>"$RESULTS/cli.log"
fi
TOKEN="$(catalog user token add admin "bench-$(date +%s)" 2>>"$RESULTS/cli.log" | tail -n1)"
[[ "$TOKEN" == ctk_* ]] || { log "unexpected token output: $TOKEN"; exit 1; }

start_server() {
    # The binary itself, not the catalog() function: $! must be the server's pid (memory, kill).
    "$BIN" --data-dir "$DATA_DIR/data" "${DB_ARGS[@]}" serve --bind "127.0.0.1:${PORT}" \
        >>"$RESULTS/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 240); do
        curl -sf -o /dev/null "${API}/status_show" && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || { log "server exited:"; tail -20 "$RESULTS/server.log" >&2; exit 1; }
        sleep 0.5
    done
    log "server not ready"; tail -20 "$RESULTS/server.log" >&2; exit 1
}
mem() { # mem PID → "VmRSS VmHWM RssAnon RssFile" in MiB (RssFile: mapped files, the index)
    awk '/^VmRSS:/ {r=$2} /^VmHWM:/ {h=$2} /^RssAnon:/ {a=$2} /^RssFile:/ {f=$2}
         END {printf "%.0f %.0f %.0f %.0f", r/1024, h/1024, a/1024, f/1024}' "/proc/$1/status"
}
start_server
log "server pid $SERVER_PID, RSS/HWM/anon/file at start: $(mem "$SERVER_PID") MiB"
MEM_START="$(mem "$SERVER_PID")"

# --- load --------------------------------------------------------------------------------
count_all() { # datasets in the index, private ones included (sysadmin token)
    curl -s -H "Authorization: $TOKEN" "${API}/package_search?rows=0&include_private=true" | jq -r '.result.count // -1'
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $LOAD_LINE"; }
if [[ -z "$REUSE" ]]; then
    log "loading $API_N datasets through the API (bench/gen_catalog.py, $LOAD_CONCURRENCY clients)"
    "$PY" bench/gen_catalog.py --url "$BASE" --token "$TOKEN" --datasets "$API_N" --seed "$SEED" \
        --concurrency "$LOAD_CONCURRENCY" 2>&1 | tee "$RESULTS/load.txt" >&2 || true
    LOAD_LINE="$(grep '^gen_catalog: created=' "$RESULTS/load.txt" || true)"
    [[ -n "$LOAD_LINE" ]] || { log "the generator printed no summary"; exit 1; }
    CREATED="$(field created)"; FAILED="$(field failed)"
    LOAD_RATE="$(field datasets_per_s)"; LOAD_SECS="$(field seconds)"; RETRIED="$(field retried)"
    LOAD_SUMMARY="created=$CREATED failed=$FAILED retried=$RETRIED through the API in ${LOAD_SECS} s = ${LOAD_RATE} datasets/s ($LOAD_CONCURRENCY clients)"
else
    # A kept data directory (SEARCH_BENCH_KEEP=1) of an earlier run, e.g. one stopped during
    # its API load; its load.txt says how that load went.
    CREATED="$(count_all)"
    prev="$(ls -d "$DATA_DIR"/results* 2>/dev/null | grep -v "$RESULTS" | head -n1 || true)"
    progress="$(grep '^gen_catalog: [0-9]*/\|^gen_catalog: created=' "${prev:-/dev/null}/load.txt" 2>/dev/null | tail -n1 | sed 's/^gen_catalog: //' || true)"
    LOAD_SUMMARY="$CREATED datasets already in the reused data directory (the first run's last load line: ${progress:-none})"
fi
REBUILT=""
if [[ "$CREATED" -lt "$N" ]]; then
    # Write the rest of the same synthetic catalog straight into the store, then index
    # everything with a rebuild.
    MEM_LOADED_API="$(mem "$SERVER_PID")"
    stop_server
    if [[ "$BACKEND" == embedded ]]; then
        FILL_ARGS=(--sqlite "$DATA_DIR/data/catalog.db") FILL_STORE=sqlite
    else
        FILL_ARGS=(--postgres "$DB_URL") FILL_STORE=postgres
    fi
    log "writing datasets up to $N straight into the store (bench/gen_catalog.py --$FILL_STORE)"
    "$PY" bench/gen_catalog.py "${FILL_ARGS[@]}" --datasets "$N" --seed "$SEED" \
        2>&1 | tee "$RESULTS/fill.txt" >&2
    FILL_LINE="$(grep "^gen_catalog: $FILL_STORE: written=" "$RESULTS/fill.txt" | sed 's/ (run .*//')"
    LOAD_SUMMARY="$LOAD_SUMMARY; then ${FILL_LINE#gen_catalog: $FILL_STORE: } straight into the store (server stopped), indexed by the rebuild below"
    [[ -n "$REUSE" ]] || LOAD_SUMMARY="$LOAD_SUMMARY; server RSS/HWM/anon/file after the API part: $MEM_LOADED_API MiB"
    REBUILT=1
fi

rebuild() {
    log "search-index rebuild (server stopped)"
    /usr/bin/time -f 'BENCH_TIME wall_s=%e max_rss_kb=%M' -o "$RESULTS/rebuild.time" \
        "$BIN" --data-dir "$DATA_DIR/data" "${DB_ARGS[@]}" search-index rebuild \
        >"$RESULTS/rebuild.txt" 2>"$RESULTS/rebuild.err" || { log "rebuild failed:"; grep -v "^ *[0-9]*: \|^ *at " "$RESULTS/rebuild.err" | head -20 >&2; exit 1; }
    REBUILD_LINE="$(grep '^indexed ' "$RESULTS/rebuild.txt" | tail -n1)"
    REBUILD_RSS="$(sed -n 's/.*max_rss_kb=\([0-9]*\).*/\1/p' "$RESULTS/rebuild.time")"
    log "$REBUILD_LINE; peak RSS $((REBUILD_RSS / 1024)) MiB"
}
if [[ -n "$REBUILT" ]]; then
    rebuild
    CHECK_LINE="$("$BIN" --data-dir "$DATA_DIR/data" "${DB_ARGS[@]}" search-index check 2>/dev/null | head -n1 || true)"
    log "search-index check: $CHECK_LINE"
    LOAD_SUMMARY="$LOAD_SUMMARY; search-index check after the rebuild: $CHECK_LINE"
    start_server
    MEM_START="$(mem "$SERVER_PID")"
    log "server restarted, pid $SERVER_PID, RSS/HWM/anon/file at start: $MEM_START MiB"
    if [[ "$BACKEND" == embedded ]]; then
        CREATED="$("$PY" -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM package").fetchone()[0])' "$DATA_DIR/data/catalog.db")"
    else
        CREATED="$(psql "$DB_URL" -tA -c "SELECT COUNT(*) FROM package")"
    fi
fi

# The index is fed from an outbox drained in the background: wait until it holds every dataset.
t0=$(date +%s.%N)
indexed=-1
for _ in $(seq 1 3600); do
    indexed="$(count_all)"
    [[ "$indexed" == "$CREATED" ]] && break
    sleep 0.5
done
INDEX_LAG="$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')"
[[ "$indexed" == "$CREATED" ]] || log "WARNING: index holds $indexed datasets, $CREATED created"
MEM_LOADED="$(mem "$SERVER_PID")"
log "index caught up ${INDEX_LAG} s after the load; RSS/HWM/anon/file after load: $MEM_LOADED MiB"

# --- queries -----------------------------------------------------------------------------
urlenc() { jq -rn --arg v "$1" '$v|@uri'; }
FACETS="$(urlenc '["organization","groups","tags","res_format","license_id"]')"
declare -A QUERY LABEL
QUERY[a]="q=$(urlenc "$Q")&rows=20&facet.field=${FACETS}"
LABEL[a]="q=\"$Q\", rows=20, 5 facets"
QUERY[b]="q=$(urlenc "$Q")&rows=1000"
LABEL[b]="q=\"$Q\", rows=1000"
QUERY[c]="rows=20&start=${DEEP_START}"
LABEL[c]="deep paging: rows=20, start=${DEEP_START}"
QUERY[d]="fq=$(urlenc "$FQ")&rows=20"
LABEL[d]="fq=\"$FQ\", rows=20"
# r: like a., but q rotates over 24 common queries (defeats caches of counts and facets).
ROTATE_QS=("open data" "statistics" "transport" "population" "economy" "water quality"
    "air quality" "health" "données" "Daten" "datos" "public spending" "education" "budget"
    "employment" "map" "annual report" "Paris" "Berlin" "Madrid" "survey" "energy consumption"
    "time series" "register")
SEARCH_BENCH_PATHS=""
for rq in "${ROTATE_QS[@]}"; do
    SEARCH_BENCH_PATHS+="/api/3/action/package_search?q=$(urlenc "$rq")&rows=20&facet.field=${FACETS}"$'\n'
done
export SEARCH_BENCH_PATHS
QUERY[r]="${QUERY[a]}"
LABEL[r]="rotating q (24 common words), rows=20, 5 facets"

# One request each first: must succeed; record the hit count, size and a cold-ish curl timing.
declare -A COUNT CURL_MS BYTES
for k in a b c d; do
    url="${API}/package_search?${QUERY[$k]}"
    read -r code t size < <(curl -s -o "$RESULTS/$k.json" -w '%{http_code} %{time_total} %{size_download}\n' "$url")
    [[ "$code" == 200 && "$(jq -r .success "$RESULTS/$k.json")" == true ]] ||
        { log "query $k failed ($code): $(head -c 400 "$RESULTS/$k.json")"; exit 1; }
    COUNT[$k]="$(jq -r .result.count "$RESULTS/$k.json")"
    CURL_MS[$k]="$(awk -v t="$t" 'BEGIN {printf "%.1f", t * 1000}')"
    BYTES[$k]="$size"
    log "query $k: ${LABEL[$k]}: count ${COUNT[$k]}, $(jq '.result.results | length' "$RESULTS/$k.json") rows, ${size} bytes, first curl ${CURL_MS[$k]} ms"
done

COUNT[r]="varies"
# The rotating queries once each, before any repeat: the uncached cost.
rot_ms=()
while IFS= read -r path; do
    [[ -n "$path" ]] || continue
    rot_ms+=("$(curl -s -o /dev/null -w '%{time_total}' "${BASE}${path}")")
done <<<"$SEARCH_BENCH_PATHS"
ROT_FIRST="$(printf '%s\n' "${rot_ms[@]}" | awk '{t=$1*1000; s+=t; if (t>m) m=t} END {printf "mean %.1f ms, max %.1f ms over %d queries", s/NR, m, NR}')"
log "rotating queries, first call each: $ROT_FIRST"

declare -A WRK WRK1
for k in a r b c d; do
    script=bench/search_latency.lua
    [[ "$k" != r ]] || script=bench/search_rotate.lua
    log "wrk $k (-t${THREADS} -c${CONNECTIONS} -d${DURATION}): ${LABEL[$k]}"
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --timeout 30s --latency -s "$script" \
        "${API}/package_search?${QUERY[$k]}" >"$RESULTS/wrk-$k.txt"
    WRK[$k]="$(grep '^BENCH_SEARCH' "$RESULTS/wrk-$k.txt")"
    log "  ${WRK[$k]#BENCH_SEARCH }"
    log "wrk $k (-t1 -c1 -d${DURATION})"
    wrk -t1 -c1 -d"$DURATION" --timeout 30s --latency -s "$script" \
        "${API}/package_search?${QUERY[$k]}" >"$RESULTS/wrk1-$k.txt"
    WRK1[$k]="$(grep '^BENCH_SEARCH' "$RESULTS/wrk1-$k.txt")"
    log "  ${WRK1[$k]#BENCH_SEARCH }"
done
MEM_SEARCH="$(mem "$SERVER_PID")"
log "RSS/HWM/anon/file after the search runs: $MEM_SEARCH MiB"

# --- reindex -----------------------------------------------------------------------------
stop_server
[[ -n "$REBUILT" ]] || rebuild

if [[ "$BACKEND" == postgres ]]; then
    STORE_SIZE="$(psql "$DB_URL" -tA -c "SELECT pg_size_pretty(pg_database_size(current_database()))")"
elif [[ "$BACKEND" == pgstore ]]; then
    STORE_SIZE="$(psql "$DB_URL" -tA -c "SELECT pg_size_pretty(pg_database_size(current_database()))") in PostgreSQL, $(du -sh "$DATA_DIR/data" | cut -f1) data dir (index)"
else
    STORE_SIZE="$(du -sh "$DATA_DIR/data" | cut -f1) (data dir: $(cd "$DATA_DIR/data" && du -sh -- * 2>/dev/null | tr '\t' ' ' | paste -sd, -))"
fi

# --- report ------------------------------------------------------------------------------
w() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<" $1"; }
report() {
    echo "catalog search benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$( [[ -z "$(git status --porcelain 2>/dev/null)" ]] || echo ' (work tree not clean)')"
    echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr); load average before the runs: $LOADAVG"
    if [[ "$BACKEND" == postgres ]]; then
        echo "backend: PostgreSQL store + PostgreSQL search (CATALOG__SEARCH__BACKEND=postgres), $(psql "$PG_ADMIN_URL/postgres" -tA -c 'SHOW server_version')"
    elif [[ "$BACKEND" == pgstore ]]; then
        echo "backend: PostgreSQL store + tantivy index, $(psql "$PG_ADMIN_URL/postgres" -tA -c 'SHOW server_version')"
    else
        echo "backend: embedded (SQLite store + tantivy index)"
    fi
    echo "data: $N datasets (bench/gen_catalog.py --seed $SEED), store size $STORE_SIZE"
    echo "load: $LOAD_SUMMARY"
    echo "index: held all $CREATED datasets ${INDEX_LAG} s after the load${REBUILT:+ (index built by the rebuild, e.)}"
    echo "wrk: -t${THREADS} -c${CONNECTIONS} -d${DURATION} and -t1 -c1 -d${DURATION}, --timeout 30s, GET, anonymous"
    echo
    printf '| %-52s | %8s | %7s | %9s | %9s | %9s | %9s | %9s | %7s |\n' query hits req/s p50 p95 p99 "p50 c=1" "p95 c=1" non-2xx
    printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..54})" "----------" "---------" \
        "-----------" "-----------" "-----------" "-----------" "-----------" "---------"
    for k in a r b c d; do
        printf '| %-52s | %8s | %7s | %6s ms | %6s ms | %6s ms | %6s ms | %6s ms | %7s |\n' \
            "${k}. ${LABEL[$k]}" "${COUNT[$k]}" "$(w "${WRK[$k]}" rps)" "$(w "${WRK[$k]}" p50_ms)" \
            "$(w "${WRK[$k]}" p95_ms)" "$(w "${WRK[$k]}" p99_ms)" "$(w "${WRK1[$k]}" p50_ms)" \
            "$(w "${WRK1[$k]}" p95_ms)" "$(( $(w "${WRK[$k]}" non2xx) + $(w "${WRK1[$k]}" non2xx) ))"
    done
    echo
    echo "first call of each of the 24 rotating queries (r.): $ROT_FIRST"
    echo "response sizes (bytes): a=${BYTES[a]} b=${BYTES[b]} c=${BYTES[c]} d=${BYTES[d]}; first curl (ms): a=${CURL_MS[a]} b=${CURL_MS[b]} c=${CURL_MS[c]} d=${CURL_MS[d]}"
    echo "e. reindex${REBUILT:+ (before the queries)}: $REBUILD_LINE; peak RSS of the rebuild process $((REBUILD_RSS / 1024)) MiB"
    read -r r0 h0 a0 f0 <<<"$MEM_START"; read -r r1 h1 a1 f1 <<<"$MEM_LOADED"; read -r r2 h2 a2 f2 <<<"$MEM_SEARCH"
    echo "f. server memory (MiB): at start RSS $r0; after load${REBUILT:+ (restart)} RSS $r1 (anon $a1, file $f1; peak $h1); after the search runs RSS $r2 (anon $a2, file-backed $f2; peak VmHWM $h2)"
}
mkdir -p bench/results
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="bench/results/search-${stamp}-${BACKEND}-${N}"
report | tee "${out}.txt"
mkdir -p "${out}.raw"
cp "$RESULTS"/*.txt "$RESULTS"/*.log "$RESULTS/rebuild.time" "${out}.raw/" 2>/dev/null || true
log "raw output in ${out}.raw/"
