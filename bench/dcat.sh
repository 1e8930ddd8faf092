#!/usr/bin/env bash
# DCAT benchmark (issue 4): the RDF endpoints on a synthetic catalog of N datasets (default
# 30000), embedded deployment (SQLite + tantivy), loopback only.
#
#   bench/dcat.sh [N]
#
# Uses the release binary ($CARGO_TARGET_DIR/release/catalog; `cargo build --release --bin
# catalog` first, or DCAT_BENCH_BUILD=1). Steps: a fresh data directory, a sysadmin and token
# (CLI), DCAT_BENCH_API_DATASETS (500) datasets through the API with bench/gen_catalog.py (this
# creates the organizations and groups), the rest of the same catalog straight into SQLite
# (gen_catalog.py --sqlite, server stopped), `catalog search-index rebuild`, then the server
# again with catalogext.dcat.datasets_per_page = 100 and:
#   a. wrk on GET /dataset/<name>.ttl and .jsonld (1 and 8 connections);
#   b. one catalog page of 100 datasets (/catalog.ttl and .jsonld): time over 20 requests
#      (median, p95) and the server's RSS / peak RSS;
#   c. paging through the whole catalog (/catalog.ttl?page=1..last, one client, following
#      hydra:nextPage until it is absent): total time, pages, datasets seen, peak RSS.
# The summary goes to stdout and to $DATA_DIR/results/summary.txt.
# Settings: DCAT_BENCH_PORT (5079), DCAT_BENCH_DURATION (10s), DCAT_BENCH_SEED (42),
# DCAT_BENCH_BIN, DCAT_BENCH_KEEP=1 (keep the data directory).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/catalog-target}"

N="${1:-30000}"
PORT="${DCAT_BENCH_PORT:-5079}"
DURATION="${DCAT_BENCH_DURATION:-10s}"
SEED="${DCAT_BENCH_SEED:-42}"
API_N="${DCAT_BENCH_API_DATASETS:-500}"
BIN="${DCAT_BENCH_BIN:-${CARGO_TARGET_DIR}/release/catalog}"
VENV="${CATALOG_VENV:-$HOME/.cache/catalog-venv}"
BASE="http://127.0.0.1:${PORT}"

log() { printf 'dcat-bench: %s\n' "$*" >&2; }

command -v wrk >/dev/null 2>&1 || apt-get install -y wrk >/dev/null 2>&1 ||
    { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
for tool in curl wrk python3; do
    command -v "$tool" >/dev/null 2>&1 || { log "missing tool: $tool"; exit 1; }
done
[[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
PY="$VENV/bin/python"
if [[ "${DCAT_BENCH_BUILD:-0}" == 1 ]]; then
    cargo build --release --quiet --bin catalog
fi
[[ -x "$BIN" ]] || { log "no binary at $BIN (cargo build --release --bin catalog)"; exit 1; }
[[ "$API_N" -le "$N" ]] || API_N="$N"

DATA_DIR="$(mktemp -d -t catalog-dcat-bench.XXXXXX)"
RESULTS="$DATA_DIR/results"
mkdir -p "$RESULTS"
SERVER_PID=""
stop_server() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=""
}
cleanup() {
    stop_server
    if [[ "${DCAT_BENCH_KEEP:-0}" == 1 ]]; then log "kept $DATA_DIR"; else rm -rf "$DATA_DIR"; fi
}
trap cleanup EXIT

catalog() { "$BIN" --data-dir "$DATA_DIR/data" "$@"; }
mem() { # RSS and peak RSS of a pid, in MiB
    awk '/^VmRSS/{r=$2} /^VmHWM/{h=$2} END{printf "%d/%d", r/1024, h/1024}' "/proc/$1/status"
}
start_server() {
    CATALOG__SITE_URL="$BASE" CATALOGEXT__DCAT__DATASETS_PER_PAGE=100 \
        "$BIN" --data-dir "$DATA_DIR/data" serve --bind "127.0.0.1:${PORT}" >>"$RESULTS/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 300); do
        curl -sf -o /dev/null "$BASE/api/3/action/status_show" && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || { tail -20 "$RESULTS/server.log" >&2; exit 1; }
        sleep 0.1
    done
    log "server not ready"; exit 1
}

catalog sysadmin add admin --email admin@example.org --password 'bench-password-123' >/dev/null
TOKEN="$(catalog user token add admin bench | tail -n1)"
start_server
log "loading $API_N datasets through the API"
"$PY" bench/gen_catalog.py --url "$BASE" --token "$TOKEN" --datasets "$API_N" --seed "$SEED" \
    --progress 0 >"$RESULTS/load.txt" 2>&1
stop_server
if [[ "$N" -gt "$API_N" ]]; then
    log "writing datasets up to $N straight into SQLite"
    "$PY" bench/gen_catalog.py --sqlite "$DATA_DIR/data/catalog.db" --datasets "$N" --seed "$SEED" \
        --progress 0 >"$RESULTS/fill.txt" 2>&1
fi
log "search-index rebuild"
catalog search-index rebuild >"$RESULTS/rebuild.txt" 2>&1
start_server
NAME="$(curl -sf "$BASE/api/3/action/package_search?rows=1&sort=name+asc" |
    "$PY" -c 'import json,sys; print(json.load(sys.stdin)["result"]["results"][0]["name"])')"
PUBLIC="$(curl -sf "$BASE/api/3/action/package_search?rows=0" |
    "$PY" -c 'import json,sys; print(json.load(sys.stdin)["result"]["count"])')"
log "server up: $PUBLIC public datasets; dataset endpoint on $NAME"

{
    echo "DCAT benchmark: N=$N datasets ($PUBLIC public), datasets_per_page=100, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "binary: $BIN"
    echo
    echo "a. dataset endpoint (wrk, $DURATION)"
    for ext in ttl jsonld; do
        for c in 1 8; do
            out="$(wrk -t"$(( c < 2 ? 1 : 2 ))" -c"$c" -d"$DURATION" --latency "$BASE/dataset/$NAME.$ext")"
            rps="$(awk '/^Requests\/sec/{print $2}' <<<"$out")"
            p50="$(awk '$1=="50%"{print $2}' <<<"$out")"
            errs="$(awk '/Non-2xx/{print $NF}' <<<"$out")"
            echo "   /dataset/<name>.$ext  connections=$c  req/s=$rps  p50=$p50  non-2xx=${errs:-0}"
        done
    done
    echo "   server RSS/peak after a.: $(mem "$SERVER_PID") MiB"
    echo
    echo "b. one catalog page of 100 datasets (20 requests, 1 client)"
    for ext in ttl jsonld; do
        times="$(for _ in $(seq 1 20); do
            curl -s -o "$RESULTS/page.$ext" -w '%{time_total}\n' "$BASE/catalog.$ext?page=2"; done | sort -n)"
        med="$(sed -n 10p <<<"$times")"; p95="$(sed -n 19p <<<"$times")"
        size="$(stat -c %s "$RESULTS/page.$ext")"
        echo "   /catalog.$ext?page=2  median=${med}s  p95=${p95}s  body=${size} bytes"
    done
    echo "   server RSS/peak after b.: $(mem "$SERVER_PID") MiB"
    echo
    echo "c. paging through the catalog (/catalog.ttl, following hydra:nextPage)"
    "$PY" - "$BASE" <<'PYEOF'
import re, sys, time, urllib.request
base = sys.argv[1]
url, pages, datasets, t0 = base + "/catalog.ttl?page=1", 0, 0, time.monotonic()
total = None
while url:
    body = urllib.request.urlopen(url, timeout=120).read().decode()
    pages += 1
    datasets += body.count("a dcat:Dataset")
    m = re.search(r"hydra:totalItems (\d+)", body)
    total = total or (m and int(m.group(1)))
    m = re.search(r'hydra:nextPage "([^"]+)"', body)
    url = m and m.group(1)
dt = time.monotonic() - t0
print(f"   pages={pages}  datasets seen={datasets}  hydra:totalItems={total}  total={dt:.1f}s  per page={1000*dt/pages:.1f} ms")
PYEOF
    echo "   server RSS/peak after c.: $(mem "$SERVER_PID") MiB"
} | tee "$RESULTS/summary.txt"
