#!/usr/bin/env bash
# A/B search latency on one kept data directory, the two binaries interleaved (A B A B …), so
# both see the same machine load. Queries (bench/search.sh's a., c., d.):
#   a.  q=open data, rows=20, facets organization/groups/tags/res_format/license_id
#   c.  deep paging: rows=20&start=$AB_DEEP_START (100000)
#   d.  fq=tags:economy AND res_format:CSV, rows=20
# each with wrk at 1 connection, every request made unique (bench/search_uncached.lua adds a
# filter that matches everything) so that no answer comes from a result cache; query a. also
# repeated as is (what a portal's front page does), and at 8 connections (uncached); then the
# server's RSS. Results on stdout, one line per (round, binary, query).
#
#   bench/ab_search.sh BIN_A BIN_B DATA_DIR [ROUNDS]
#
# DATA_DIR is a catalog data directory (`--data-dir`) with its index built, e.g. one kept by
# bench/search.sh (SEARCH_BENCH_KEEP=1). Settings: AB_PORT (5079), AB_DURATION (10s),
# AB_DEEP_START (100000), AB_Q ("open data"), AB_DATA_B (B's data directory, DATA_DIR by
# default: one binary on two index layouts when BIN_A and BIN_B are the same).
set -euo pipefail
cd "$(dirname "$0")/.."
A="$1"; B="$2"; DATA="$3"; ROUNDS="${4:-2}"
DATA_B="${AB_DATA_B:-$DATA}"
PORT="${AB_PORT:-5079}"
DURATION="${AB_DURATION:-10s}"
DEEP="${AB_DEEP_START:-100000}"
Q="${AB_Q:-open data}"
BASE="http://127.0.0.1:$PORT/api/3/action/package_search"
urlenc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
FACETS="$(urlenc '["organization","groups","tags","res_format","license_id"]')"
declare -A QUERY
QUERY[a]="q=$(urlenc "$Q")&rows=20&facet.field=${FACETS}"
QUERY[c]="rows=20&start=${DEEP}"
QUERY[d]="fq=$(urlenc 'tags:economy AND res_format:CSV')&rows=20"

PID=""
stop() { [[ -z "$PID" ]] || { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=""; }; }
trap stop EXIT
rss() { awk '/^VmRSS:/ {r=$2} /^VmHWM:/ {h=$2} END {printf "rss=%.0fMiB hwm=%.0fMiB", r/1024, h/1024}' "/proc/$1/status"; }

for round in $(seq 1 "$ROUNDS"); do
    for label in A B; do
        bin="$A"; dir="$DATA"; [[ "$label" == B ]] && { bin="$B"; dir="$DATA_B"; }
        "$bin" --data-dir "$dir" serve --bind "127.0.0.1:$PORT" >/dev/null 2>&1 &
        PID=$!
        for _ in $(seq 1 600); do curl -sf -o /dev/null "$BASE?rows=0" && break; sleep 0.5; done
        # warm-up: each query a few times
        for k in a c d; do for _ in 1 2 3; do curl -sf -o /dev/null "$BASE?${QUERY[$k]}"; done; done
        for k in a c d; do
            line="$(wrk -t1 -c1 -d"$DURATION" -s bench/search_uncached.lua "$BASE?${QUERY[$k]}" | grep BENCH_SEARCH)"
            echo "round=$round bin=$label query=$k c=1 uncached ${line#BENCH_SEARCH }"
        done
        line="$(wrk -t1 -c1 -d"$DURATION" -s bench/search_latency.lua "$BASE?${QUERY[a]}" | grep BENCH_SEARCH)"
        echo "round=$round bin=$label query=a c=1 repeated ${line#BENCH_SEARCH }"
        line="$(wrk -t2 -c8 -d"$DURATION" -s bench/search_uncached.lua "$BASE?${QUERY[a]}" | grep BENCH_SEARCH)"
        echo "round=$round bin=$label query=a c=8 uncached ${line#BENCH_SEARCH } $(rss "$PID")"
        stop
    done
done
