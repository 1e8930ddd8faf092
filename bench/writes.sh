#!/usr/bin/env bash
# Write throughput of the catalog service, side by side: package_create, package_update and
# resource_create at 16 connections on SQLite and on PostgreSQL, each run checked afterwards
# (every acknowledged write is found by package_show; created datasets by package_search too).
#
#   bench/writes.sh                                  the release binary, both stores, 2 rounds
#   WRITES_BINS="/tmp/a/catalog /tmp/b/catalog" bench/writes.sh   A B A B … in each round
#
# Settings: WRITES_STORES ("sqlite postgres"), WRITES_ROUNDS (2), WRITES_DURATION (10s),
# WRITES_CONNECTIONS (16), WRITES_DATASETS (64: the datasets update and resource_create write
# to), WRITES_PORT (5078). PostgreSQL: a fresh database on 127.0.0.1:5432 (user postgres) per
# run, dropped afterwards. Every run starts from an empty catalog in a new data directory.
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/catalog-target}"
BINS=(${WRITES_BINS:-$CARGO_TARGET_DIR/release/catalog})
STORES=(${WRITES_STORES:-sqlite postgres})
ROUNDS="${WRITES_ROUNDS:-2}"
DURATION="${WRITES_DURATION:-10s}"
CONNECTIONS="${WRITES_CONNECTIONS:-16}"
DATASETS="${WRITES_DATASETS:-64}"
PORT="${WRITES_PORT:-5078}"
API="http://127.0.0.1:${PORT}/api/3/action"
log() { printf 'writes: %s\n' "$*" >&2; }

command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }; }
for b in "${BINS[@]}"; do [[ -x "$b" ]] || { log "no binary at $b"; exit 1; }; done

DIR="" PID="" DB=""
stop() {
    if [[ -n "$PID" ]]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=""; fi
    [[ -n "$DIR" ]] && rm -rf "$DIR"; DIR=""
    if [[ -n "$DB" ]]; then dropdb -h 127.0.0.1 -U postgres --if-exists "$DB" 2>/dev/null || true; DB=""; fi
}
trap stop EXIT

post() { # post ACTION JSON
    local out
    out="$(curl -s -X POST "${API}/$1" -H "Authorization: ${TOKEN}" -H 'Content-Type: application/json' --data-binary "$2")"
    [[ "$(jq -r .success <<<"$out")" == true ]] || { log "$1 failed: $out"; exit 1; }
}

# run BIN STORE → prints "create update resource" in writes/s, exits 1 when a check fails
run() {
    local bin="$1" store="$2" args=()
    DIR="$(mktemp -d -t catalog-writes.XXXXXX)"
    if [[ "$store" == postgres ]]; then
        DB="catalog_writes_$$_$RANDOM"
        createdb -h 127.0.0.1 -U postgres "$DB"
        args=(--database-url "postgres://postgres@127.0.0.1:5432/$DB")
    fi
    "$bin" --data-dir "$DIR" "${args[@]}" db init >/dev/null
    "$bin" --data-dir "$DIR" "${args[@]}" sysadmin add bench-admin --email b@example.org --password 'bench-password-123' >/dev/null
    TOKEN="$("$bin" --data-dir "$DIR" "${args[@]}" user token add bench-admin bench | tail -n1)"
    "$bin" --data-dir "$DIR" "${args[@]}" serve --bind "127.0.0.1:${PORT}" >"$DIR/server.log" 2>&1 &
    PID=$!
    for _ in $(seq 1 120); do curl -sf -o /dev/null "${API}/status_show" && break; sleep 0.5; done
    post organization_create '{"name": "bench-org"}'
    for i in $(seq 0 $((DATASETS - 1))); do
        post package_create "{\"name\": \"upd-$i\", \"owner_org\": \"bench-org\", \"resources\": [{\"url\": \"https://example.org/$i.csv\"}]}"
    done
    local line="" mode
    for mode in create update resource; do
        local runid; runid="$(date +%s%N | cut -c1-13)"
        BENCH_TOKEN="$TOKEN" BENCH_ORG=bench-org BENCH_RUN="$runid" BENCH_MODE="$mode" \
            BENCH_PREFIX=upd- BENCH_DATASETS="$DATASETS" BENCH_OUT="$DIR" \
            wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency -s bench/writes.lua "http://127.0.0.1:${PORT}" >"$DIR/$mode.txt" 2>&1
        local ok failed us rate
        read -r ok failed us < <(sed -n 's/^BENCH_WRITES mode=[a-z]* ok=\([0-9]*\) failed=\([0-9]*\) duration_us=\([0-9]*\).*/\1 \2 \3/p' "$DIR/$mode.txt")
        if [[ -z "$ok" || "$ok" == 0 ]]; then
            # Nothing acknowledged: the server stalled or died. Keep what it left.
            local kept; kept="$(mktemp -d -t catalog-writes-failed.XXXXXX)"; cp -r "$DIR/." "$kept/"
            log "NO WRITES ($mode, $store, $bin): wrk said:"; grep -E "Socket errors|Non-2xx|requests in" "$DIR/$mode.txt" >&2 || true
            log "server log and data kept in $kept"; stop; exit 1
        fi
        rate="$(awk -v n="$ok" -v us="$us" 'BEGIN { printf "%.0f", n / (us / 1e6) }')"
        if ! python3 bench/writes_check.py "http://127.0.0.1:${PORT}" "$DIR" "$mode" "$runid" upd- "$DATASETS" >"$DIR/$mode.check"; then
            log "CHECK FAILED ($mode, $store, $bin):"; cat "$DIR/$mode.check" >&2; stop; exit 1
        fi
        [[ "$failed" == 0 ]] || log "$mode: $failed non-200 answers ($store, $bin)"
        line+="$rate/s ($(sed -n 's/.*acked=\([0-9]*\).*missing=\([0-9]*\).*/\1 acked, \2 missing/p' "$DIR/$mode.check")$([[ $failed == 0 ]] || echo ", $failed failed")) | "
    done
    stop
    echo "$line"
}

echo "| round | binary | store | package_create | package_update | resource_create |"
echo "|---|---|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
    for store in "${STORES[@]}"; do
        for b in "${BINS[@]}"; do
            log "round $round: $store, $b"
            result="$(run "$b" "$store")" || exit 1
            echo "| $round | $b | $store | $result"
        done
    done
done
