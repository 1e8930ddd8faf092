#!/usr/bin/env bash
# Load benchmark of the catalog service, reproducible on one machine over loopback only.
#
#   bench/run.sh                  build, seed, measure, print a summary
#   BENCH_SKIP_BUILD=1 bench/run.sh   use the already built release binary
#
# It builds the release binary, starts `catalog serve` on 127.0.0.1:$BENCH_PORT with a fresh
# temporary data directory (SQLite), creates a sysadmin and a token with the CLI, seeds an
# organization, a group and a dataset (3 resources, 5 tags) through the API, then runs wrk on
# package_show, status_show and package_create. The server is stopped and the data directory
# removed at the end (BENCH_KEEP=1 keeps it). A copy of the summary goes to bench/results/.
# BENCH_DATABASE_URL=postgres://… runs on that (empty) PostgreSQL database instead of SQLite.
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/catalog-target}"

PORT="${BENCH_PORT:-5077}"
THREADS="${BENCH_THREADS:-2}"
CONNECTIONS="${BENCH_CONNECTIONS:-64}"
DURATION="${BENCH_DURATION:-15s}"
CREATE_CONNECTIONS="${BENCH_CREATE_CONNECTIONS:-16}"
CREATE_DURATION="${BENCH_CREATE_DURATION:-10s}"
BASE="http://127.0.0.1:${PORT}"
API="${BASE}/api/3/action"
BIN="${CARGO_TARGET_DIR}/release/catalog"

log() { printf 'bench: %s\n' "$*" >&2; }

# --- tools -------------------------------------------------------------------------------
if ! command -v wrk >/dev/null 2>&1; then
    log "installing wrk"
    apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
fi
for tool in curl jq wrk; do
    command -v "$tool" >/dev/null 2>&1 || { log "missing tool: $tool"; exit 1; }
done

# --- build -------------------------------------------------------------------------------
if [[ "${BENCH_SKIP_BUILD:-0}" != 1 ]]; then
    log "cargo build --release"
    cargo build --release --quiet
fi
[[ -x "$BIN" ]] || { log "no binary at $BIN (build it, or unset BENCH_SKIP_BUILD)"; exit 1; }

if curl -s -o /dev/null "${BASE}/api/3" 2>/dev/null; then
    log "something already listens on 127.0.0.1:${PORT}; set BENCH_PORT"
    exit 1
fi

# --- server ------------------------------------------------------------------------------
DATA_DIR="$(mktemp -d -t catalog-bench.XXXXXX)"
SERVER_PID=""
cleanup() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [[ "${BENCH_KEEP:-0}" == 1 ]]; then
        log "kept data directory $DATA_DIR"
    else
        rm -rf "$DATA_DIR"
    fi
}
trap cleanup EXIT

DB_ARGS=()
if [[ -n "${BENCH_DATABASE_URL:-}" ]]; then
    # Must be an empty database: the seed names are fixed.
    DB_ARGS=(--database-url "$BENCH_DATABASE_URL")
fi
catalog() { "$BIN" --data-dir "$DATA_DIR" "${DB_ARGS[@]}" "$@"; }

log "data directory $DATA_DIR"
catalog db init >/dev/null
catalog sysadmin add bench-admin --email bench@example.org --password 'bench-password-123' >/dev/null
TOKEN="$(catalog user token add bench-admin bench | tail -n1)"
[[ "$TOKEN" == ctk_* ]] || { log "unexpected token output: $TOKEN"; exit 1; }

# The binary itself in the background: the function's subshell would survive the kill below.
"$BIN" --data-dir "$DATA_DIR" "${DB_ARGS[@]}" serve --bind "127.0.0.1:${PORT}" >"$DATA_DIR/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 120); do
    curl -sf -o /dev/null "${API}/status_show" && break
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        log "server exited:"; cat "$DATA_DIR/server.log" >&2; exit 1
    fi
    sleep 0.5
done
curl -sf -o /dev/null "${API}/status_show" || { log "server not ready"; cat "$DATA_DIR/server.log" >&2; exit 1; }

# --- seed --------------------------------------------------------------------------------
post() { # post ACTION JSON → result, or fail loudly
    local out
    out="$(curl -s -X POST "${API}/$1" -H "Authorization: ${TOKEN}" \
        -H 'Content-Type: application/json' --data-binary "$2")"
    if [[ "$(jq -r .success <<<"$out" 2>/dev/null)" != true ]]; then
        log "$1 failed: $out"; exit 1
    fi
}

DATASET=bench-dataset
post organization_create '{"name": "bench-org", "title": "Benchmark organization"}'
post group_create '{"name": "bench-group", "title": "Benchmark group"}'
post package_create "$(cat <<EOF
{"name": "${DATASET}", "title": "Benchmark dataset", "owner_org": "bench-org",
 "notes": "A dataset of typical size for the package_show benchmark.",
 "license_id": "cc-by", "author": "Bench", "url": "https://example.org/bench",
 "groups": [{"name": "bench-group"}],
 "tags": [{"name": "alpha"}, {"name": "beta"}, {"name": "gamma"}, {"name": "delta"}, {"name": "epsilon"}],
 "resources": [
   {"name": "Data (CSV)", "url": "https://example.org/data.csv", "format": "CSV", "description": "All rows"},
   {"name": "Data (JSON)", "url": "https://example.org/data.json", "format": "JSON", "description": "All rows as JSON"},
   {"name": "Documentation", "url": "https://example.org/readme.pdf", "format": "PDF", "description": "How the data was collected"}
 ]}
EOF
)"
shown="$(curl -s "${API}/package_show?id=${DATASET}")"
[[ "$(jq '.result.resources | length' <<<"$shown")" == 3 && "$(jq '.result.tags | length' <<<"$shown")" == 5 ]] ||
    { log "seeded dataset is not as expected: $shown"; exit 1; }

# --- measure -----------------------------------------------------------------------------
RESULTS="$(mktemp -d -t catalog-bench-results.XXXXXX)"
summary_line() { # summary_line LABEL WRK_OUTPUT_FILE
    local rps p50 p99 non2xx
    rps="$(awk '/^Requests\/sec:/ {print $2}' "$2")"
    p50="$(awk '$1 == "50%" {print $2}' "$2")"
    p99="$(awk '$1 == "99%" {print $2}' "$2")"
    non2xx="$(awk '/Non-2xx or 3xx responses:/ {print $NF}' "$2")"
    printf '| %-40s | %12s | %10s | %10s | %8s |\n' "$1" "$rps" "$p50" "$p99" "${non2xx:-0}"
}

log "wrk package_show (-t${THREADS} -c${CONNECTIONS} -d${DURATION})"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency \
    "${API}/package_show?id=${DATASET}" >"$RESULTS/package_show.txt"

log "wrk status_show (-t${THREADS} -c${CONNECTIONS} -d${DURATION})"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency \
    "${API}/status_show" >"$RESULTS/status_show.txt"

log "wrk package_create (-t${THREADS} -c${CREATE_CONNECTIONS} -d${CREATE_DURATION})"
BENCH_TOKEN="$TOKEN" BENCH_ORG=bench-org BENCH_RUN="$(date +%s)" \
    wrk -t"$THREADS" -c"$CREATE_CONNECTIONS" -d"$CREATE_DURATION" --latency \
    -s bench/package_create.lua "${API}/package_create" >"$RESULTS/package_create.txt"

created="" failed="" duration_us=""
read -r created failed duration_us < <(
    sed -n 's/^BENCH_CREATE created=\([0-9]*\) failed=\([0-9]*\) duration_us=\([0-9]*\)$/\1 \2 \3/p' \
        "$RESULTS/package_create.txt") || true
if [[ -z "$duration_us" ]]; then
    log "package_create run printed no summary:"; cat "$RESULTS/package_create.txt" >&2; exit 1
fi
datasets_per_s="$(awk -v n="$created" -v us="$duration_us" 'BEGIN { printf "%.1f", n / (us / 1e6) }')"
listed="$(curl -s "${API}/package_list" | jq '.result | length')"

# --- report ------------------------------------------------------------------------------
report() {
    echo "catalog service benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (dirty)')"
    echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
    if [[ -n "${BENCH_DATABASE_URL:-}" ]]; then
        echo "store: PostgreSQL (BENCH_DATABASE_URL); server and wrk on the same machine, 127.0.0.1:${PORT}"
    else
        echo "store: SQLite (temporary data directory); server and wrk on the same machine, 127.0.0.1:${PORT}"
    fi
    echo "reads: wrk -t${THREADS} -c${CONNECTIONS} -d${DURATION}; writes: wrk -t${THREADS} -c${CREATE_CONNECTIONS} -d${CREATE_DURATION}"
    echo
    printf '| %-40s | %12s | %10s | %10s | %8s |\n' "request" "req/s" "p50" "p99" "non-2xx"
    printf '|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..42})" "$(printf -- '-%.0s' {1..14})" \
        "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..10})"
    summary_line "GET package_show (3 resources, 5 tags)" "$RESULTS/package_show.txt"
    summary_line "GET status_show" "$RESULTS/status_show.txt"
    summary_line "POST package_create" "$RESULTS/package_create.txt"
    echo
    echo "package_create: ${created} datasets created, ${failed} failed, ${datasets_per_s} datasets/s"
    echo "package_list after the run: ${listed} datasets (1 seeded + ${created} created expected)"
}
mkdir -p bench/results
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
report | tee "bench/results/${stamp}.txt"
for f in package_show status_show package_create; do
    cp "$RESULTS/$f.txt" "bench/results/${stamp}-${f}.wrk.txt"
done
rm -rf "$RESULTS"
log "raw wrk output in bench/results/${stamp}-*.wrk.txt"
