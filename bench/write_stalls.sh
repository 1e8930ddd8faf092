#!/usr/bin/env bash
# Looks for write stalls: bursts of writes whose client (wrk) closes its connections
# mid-request at the end of each burst, while a probe patches one dataset every 0.5 s with a
# 3 s timeout. A probe that times out is logged, and the first one of each cycle dumps every
# thread's stack of the server (gdb) into the data directory, which is then kept.
#
#   bench/write_stalls.sh BIN                 6 cycles of create, update, resource_create bursts
#   STALLS_CYCLES=3 bench/write_stalls.sh BIN
#
# Prints, per burst, the writes acknowledged; then the probe's log (empty: no stall, no probe
# over 1 s). Also prints the mean time each write held the store's write lock (`locked_ms` of
# the server's `write committed` debug lines) per action. SQLite, a fresh catalog in a new data
# directory, 64 datasets that the update and resource bursts write to (bench/writes.lua).
set -uo pipefail

cd "$(dirname "$0")/.."
BIN="${1:?usage: bench/write_stalls.sh BIN}"
CYCLES="${STALLS_CYCLES:-6}"
PORT="${STALLS_PORT:-5099}"
API="http://127.0.0.1:${PORT}/api/3/action"
command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }; }
command -v gdb >/dev/null || apt-get install -y gdb >/dev/null 2>&1 || true

DIR="$(mktemp -d -t catalog-stalls.XXXXXX)"
PID="" PROBE="" KEEP=""
stop() {
    rm -f "$DIR/probing"
    [[ -n "$PROBE" ]] && { wait "$PROBE" 2>/dev/null || true; }
    [[ -n "$PID" ]] && { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null || true; }
    if [[ -n "$KEEP" ]]; then echo "server log and stacks kept in $DIR"; else rm -rf "$DIR"; fi
}
trap stop EXIT

"$BIN" --data-dir "$DIR" db init >/dev/null
"$BIN" --data-dir "$DIR" sysadmin add bench-admin --email b@example.org --password 'bench-password-123' >/dev/null
TOKEN="$("$BIN" --data-dir "$DIR" user token add bench-admin bench | tail -n1)"
RUST_LOG="info,catalog_framework::context=debug" "$BIN" --data-dir "$DIR" serve --bind "127.0.0.1:${PORT}" >"$DIR/server.log" 2>&1 &
PID=$!
for _ in $(seq 1 120); do curl -sf -o /dev/null "$API/status_show" && break; sleep 0.5; done
post() { curl -s -m 30 -o /dev/null -X POST "$API/$1" -H "Authorization: $TOKEN" -H 'Content-Type: application/json' --data-binary "$2"; }
post organization_create '{"name": "bench-org"}'
for i in $(seq 0 63); do
    post package_create "{\"name\": \"upd-$i\", \"owner_org\": \"bench-org\", \"resources\": [{\"url\": \"https://example.org/$i.csv\"}]}"
done

probe() {
    local n=0 dumped="" cycle
    while [[ -e "$DIR/probing" ]]; do
        n=$((n + 1)); cycle="$(cat "$DIR/cycle")"
        local t0; t0="$(date +%s.%N)"
        if ! curl -s -m 3 -o /dev/null -X POST "$API/package_patch" -H "Authorization: $TOKEN" \
            -H 'Content-Type: application/json' --data-binary "{\"id\": \"upd-1\", \"notes\": \"probe $n\"}"; then
            echo "$(date +%T.%N) probe $n timed out (cycle $cycle)" >>"$DIR/probe.log"
            if [[ "$dumped" != "$cycle" ]] && command -v gdb >/dev/null; then
                dumped="$cycle"
                gdb -p "$PID" -batch -ex "thread apply all bt 30" >"$DIR/stacks-$cycle.txt" 2>&1
            fi
        else
            awk -v a="$t0" -v b="$(date +%s.%N)" -v n="$n" \
                'BEGIN { if (b - a > 1.0) printf "probe %d took %.2f s\n", n, b - a }' >>"$DIR/probe.log"
        fi
        sleep 0.5
    done
}
touch "$DIR/probing" "$DIR/probe.log"; echo 0 >"$DIR/cycle"
probe &
PROBE=$!
for c in $(seq 1 "$CYCLES"); do
    echo "$c" >"$DIR/cycle"
    for mode in create update resource; do
        BENCH_TOKEN="$TOKEN" BENCH_ORG=bench-org BENCH_RUN="$(date +%s%N | cut -c1-13)" BENCH_MODE="$mode" \
            BENCH_PREFIX=upd- BENCH_DATASETS=64 BENCH_OUT="$DIR" \
            wrk -t2 -c16 -d8s -s bench/writes.lua "http://127.0.0.1:${PORT}" >"$DIR/$mode-$c.txt" 2>&1
        echo "$(date +%T) cycle $c $mode: $(grep -o 'ok=[0-9]* failed=[0-9]*' "$DIR/$mode-$c.txt")"
    done
done
rm -f "$DIR/probing"; wait "$PROBE"; PROBE=""
for action in package_create package_update resource_create; do
    grep "write committed action=\"$action\"" "$DIR/server.log" | sed 's/.*locked_ms=\([0-9.]*\).*/\1/' |
        awk -v a="$action" '{ s += $1; n++ } END { if (n) printf "%s: write lock held %.2f ms on average (%d writes)\n", a, s / n, n }'
done
echo "probe log:"; cat "$DIR/probe.log"
[[ -s "$DIR/probe.log" ]] && KEEP=1
true
