#!/usr/bin/env bash
# A bulk migration, side by side: `ckanapi load datasets -p 4` of N generated datasets (the
# bench generator's catalog: 1-5 resources, 2-8 tags, groups, extras) into an empty catalog,
# timed, then checked (package_search with include_private finds all N).
#
#   bench/ckanapi_load.sh                                       the release binary, both stores
#   LOAD_BINS="/tmp/a/catalog /tmp/b/catalog" bench/ckanapi_load.sh   A B A B … in each round
#
# Settings: LOAD_STORES ("sqlite postgres"), LOAD_ROUNDS (1), LOAD_DATASETS (20000),
# LOAD_PROCESSES (4), LOAD_PORT (5077). PostgreSQL: a fresh database on 127.0.0.1:5432 (user
# postgres) per run, dropped afterwards. ckanapi comes from the acceptance venv
# ($CATALOG_VENV, made by acceptance/run.sh; made here if missing).
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/catalog-target}"
BINS=(${LOAD_BINS:-$CARGO_TARGET_DIR/release/catalog})
STORES=(${LOAD_STORES:-sqlite postgres})
ROUNDS="${LOAD_ROUNDS:-1}"
DATASETS="${LOAD_DATASETS:-20000}"
PROCESSES="${LOAD_PROCESSES:-4}"
PORT="${LOAD_PORT:-5077}"
BASE="http://127.0.0.1:${PORT}"
VENV="${CATALOG_VENV:-$HOME/.cache/catalog-venv}"
log() { printf 'ckanapi_load: %s\n' "$*" >&2; }

for b in "${BINS[@]}"; do [[ -x "$b" ]] || { log "no binary at $b"; exit 1; }; done
if [[ ! -x "$VENV/bin/ckanapi" ]]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q -r acceptance/requirements.txt
fi

# ckanapi's -p starts its workers as `ckanapi` from PATH.
export PATH="$VENV/bin:$PATH"

WORK="$(mktemp -d -t catalog-load.XXXXXX)"
DIR="" PID="" DB=""
stop() {
    if [[ -n "$PID" ]]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=""; fi
    [[ -n "$DIR" ]] && rm -rf "$DIR"; DIR=""
    if [[ -n "$DB" ]]; then dropdb -h 127.0.0.1 -U postgres --if-exists "$DB" 2>/dev/null || true; DB=""; fi
}
trap 'stop; rm -rf "$WORK"' EXIT

python3 bench/gen_catalog.py --datasets "$DATASETS" --dump "$WORK/datasets.jsonl"

# run BIN STORE → prints "seconds datasets/s", exits 1 when the check fails
run() {
    local bin="$1" store="$2" args=()
    DIR="$(mktemp -d -t catalog-load-run.XXXXXX)"
    if [[ "$store" == postgres ]]; then
        DB="catalog_load_$$_$RANDOM"
        createdb -h 127.0.0.1 -U postgres "$DB"
        args=(--database-url "postgres://postgres@127.0.0.1:5432/$DB")
    fi
    "$bin" --data-dir "$DIR" "${args[@]}" db init >/dev/null
    "$bin" --data-dir "$DIR" "${args[@]}" sysadmin add bench-admin --email b@example.org --password 'bench-password-123' >/dev/null
    local token; token="$("$bin" --data-dir "$DIR" "${args[@]}" user token add bench-admin bench | tail -n1)"
    "$bin" --data-dir "$DIR" "${args[@]}" serve --bind "127.0.0.1:${PORT}" >"$DIR/server.log" 2>&1 &
    PID=$!
    for _ in $(seq 1 120); do curl -sf -o /dev/null "$BASE/api/3/action/status_show" && break; sleep 0.5; done
    # The organizations and groups the datasets name (what a migration loads first).
    python3 bench/gen_catalog.py --url "$BASE" --token "$token" --datasets 0 >/dev/null
    local t0 t1
    t0="$(date +%s.%N)"
    "$VENV/bin/ckanapi" load datasets -I "$WORK/datasets.jsonl" -p "$PROCESSES" -q \
        -l "$DIR/ckanapi.log" -r "$BASE" -a "$token"
    t1="$(date +%s.%N)"
    local found
    found="$(curl -s "$BASE/api/3/action/package_search?rows=0&include_private=true" -H "Authorization: $token" | jq .result.count)"
    if [[ "$found" != "$DATASETS" ]]; then
        log "CHECK FAILED ($store, $bin): package_search counts $found of $DATASETS"
        grep -v ',null,' "$DIR/ckanapi.log" | head -5 >&2 || true
        stop; exit 1
    fi
    stop
    awk -v a="$t0" -v b="$t1" -v n="$DATASETS" 'BEGIN { printf "%.1f s | %.0f/s", b - a, n / (b - a) }'
}

echo "| round | binary | store | ckanapi load of $DATASETS datasets at -p $PROCESSES |"
echo "|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
    for store in "${STORES[@]}"; do
        for b in "${BINS[@]}"; do
            log "round $round: $store, $b"
            result="$(run "$b" "$store")" || exit 1
            echo "| $round | $b | $store | $result |"
        done
    done
done
