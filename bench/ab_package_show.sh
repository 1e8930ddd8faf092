#!/usr/bin/env bash
# A/B package_show throughput of two binaries, interleaved (A B A B …) so that both see the same
# machine load. Each binary serves its own fresh data directory seeded alike (bench/run.sh's
# dataset: an organization, a group, 3 resources, 5 tags); each round runs wrk on the cached
# `package_show` (what a portal's dataset page calls) and prints one line per (round, binary).
#
#   bench/ab_package_show.sh BIN_A BIN_B [ROUNDS]
#
# Settings: AB_PORT (5081), AB_DURATION (8s), AB_CONNECTIONS (64), AB_THREADS (2).
set -euo pipefail
cd "$(dirname "$0")/.."
A="$1"; B="$2"; ROUNDS="${3:-3}"
PORT="${AB_PORT:-5081}"
DURATION="${AB_DURATION:-8s}"
CONNECTIONS="${AB_CONNECTIONS:-64}"
THREADS="${AB_THREADS:-2}"
API="http://127.0.0.1:$PORT/api/3/action"
WORK="$(mktemp -d)"
PID=""
stop() { [[ -z "$PID" ]] || { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=""; }; }
trap 'stop; rm -rf "$WORK"' EXIT

start() { # bin dir
    "$1" --data-dir "$2" serve --bind "127.0.0.1:$PORT" >"$2/serve.log" 2>&1 &
    PID=$!
    for _ in $(seq 1 200); do curl -sf -o /dev/null "$API/status_show" && return; sleep 0.2; done
    echo "the server did not start: $(tail -5 "$2/serve.log")" >&2; exit 1
}

post() { # token action json
    curl -sf -H "Authorization: $1" -H 'Content-Type: application/json' -d "$3" "$API/$2" >/dev/null
}

for label in A B; do
    bin="$A"; [[ "$label" == B ]] && bin="$B"
    dir="$WORK/$label"; mkdir -p "$dir"
    "$bin" --data-dir "$dir" sysadmin add admin --email admin@example.org --password bench-password >/dev/null
    token="$("$bin" --data-dir "$dir" user token add admin bench | tail -n1)"
    start "$bin" "$dir"
    post "$token" organization_create '{"name": "bench-org"}'
    post "$token" group_create '{"name": "bench-group"}'
    post "$token" package_create '{"name": "bench-dataset", "title": "Bench dataset", "notes": "A dataset for the benchmark.", "owner_org": "bench-org", "groups": [{"name": "bench-group"}], "tags": [{"name": "one"}, {"name": "two"}, {"name": "three"}, {"name": "four"}, {"name": "five"}], "resources": [{"url": "http://example.org/a.csv", "format": "CSV"}, {"url": "http://example.org/b.json", "format": "JSON"}, {"url": "http://example.org/c.xlsx", "format": "XLSX"}]}'
    stop
done

for round in $(seq 1 "$ROUNDS"); do
    for label in A B; do
        bin="$A"; [[ "$label" == B ]] && bin="$B"
        start "$bin" "$WORK/$label"
        for _ in 1 2 3; do curl -sf -o /dev/null "$API/package_show?id=bench-dataset"; done
        out="$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "$API/package_show?id=bench-dataset")"
        rps="$(awk '/^Requests\/sec/ {print $2}' <<<"$out")"
        p50="$(awk '$1 == "50%" {print $2}' <<<"$out")"
        p99="$(awk '$1 == "99%" {print $2}' <<<"$out")"
        bytes="$(curl -s "$API/package_show?id=bench-dataset" | wc -c)"
        echo "round=$round bin=$label package_show req/s=$rps p50=$p50 p99=$p99 body=${bytes}B"
        stop
    done
done
