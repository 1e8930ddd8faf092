#!/usr/bin/env bash
# Activity benchmark (issue 11), on one machine over loopback only.
#
#   bench/activity.sh                         SQLite store (temporary data directories)
#   ACTIVITY_BENCH_STORE=postgres bench/activity.sh   PostgreSQL (fresh databases, dropped after)
#
# 1. What recording costs writes: package_create and package_patch throughput (wrk, 16
#    connections) with the activity plugin on and off, side by side in one run: on, off, on,
#    off, each on a fresh catalog (off = CATALOG__PLUGINS without `activity`).
# 2. package_activity_list (default page of 31) p50 at 1 connection on a dataset with 1,000
#    activities.
# 3. dashboard_activity_list p50 at 1 connection for a user following 500 datasets of a catalog
#    of ACTIVITY_BENCH_DATASETS (30,000) datasets from bench/gen_catalog.py; on PostgreSQL also
#    the query plan of the dashboard's statement (EXPLAIN ANALYZE), which must not read the
#    whole activity table.
#
# Settings: ACTIVITY_BENCH_BIN (default $CARGO_TARGET_DIR/release/catalog; build it first with
# `cargo build --release --bin catalog`), ACTIVITY_BENCH_PORT (5079), ACTIVITY_BENCH_DURATION
# (10s), ACTIVITY_BENCH_DATASETS (30000), ACTIVITY_BENCH_PG (postgres://postgres@127.0.0.1:5432).
# The summary goes to stdout and to bench/results/activity-<stamp>-<store>.txt.
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/catalog-target}"
BIN="${ACTIVITY_BENCH_BIN:-$CARGO_TARGET_DIR/release/catalog}"
PORT="${ACTIVITY_BENCH_PORT:-5079}"
DURATION="${ACTIVITY_BENCH_DURATION:-10s}"
DATASETS="${ACTIVITY_BENCH_DATASETS:-30000}"
STORE="${ACTIVITY_BENCH_STORE:-sqlite}"
PG="${ACTIVITY_BENCH_PG:-postgres://postgres@127.0.0.1:5432}"
API="http://127.0.0.1:${PORT}/api/3/action"
OFF_PLUGINS="core default_auth default_dataset_schema dcat search_tantivy"

log() { printf 'activity-bench: %s\n' "$*" >&2; }
if ! command -v wrk >/dev/null 2>&1; then
    log "installing wrk"
    apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
fi
for tool in curl jq wrk python3; do
    command -v "$tool" >/dev/null 2>&1 || { log "missing tool: $tool"; exit 1; }
done
[[ "$STORE" == sqlite || "$STORE" == postgres ]] || { log "ACTIVITY_BENCH_STORE is sqlite or postgres"; exit 1; }
[[ "$STORE" == sqlite ]] || command -v psql >/dev/null 2>&1 || { log "missing tool: psql"; exit 1; }
[[ -x "$BIN" ]] || { log "no binary at $BIN (cargo build --release --bin catalog)"; exit 1; }

DATA_DIR="" SERVER_PID="" DB_NAME="" TOKEN=""
stop() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=""
    [[ -n "$DATA_DIR" ]] && rm -rf "$DATA_DIR"
    DATA_DIR=""
    if [[ -n "$DB_NAME" ]]; then
        psql "$PG/postgres" -qAtc "DROP DATABASE IF EXISTS $DB_NAME WITH (FORCE)" >/dev/null || true
    fi
    DB_NAME=""
}
trap stop EXIT

# start PLUGINS: a fresh catalog (data directory, and database on PostgreSQL) served on PORT,
# with a sysadmin whose token is in TOKEN. PLUGINS empty: every plugin (activity on).
start() {
    if curl -s -o /dev/null "${API}/status_show" 2>/dev/null; then
        log "something already listens on 127.0.0.1:${PORT}; set ACTIVITY_BENCH_PORT"; exit 1
    fi
    DATA_DIR="$(mktemp -d -t catalog-activity-bench.XXXXXX)"
    local db_args=()
    if [[ "$STORE" == postgres ]]; then
        DB_NAME="activity_bench_$$_$RANDOM"
        psql "$PG/postgres" -qAtc "CREATE DATABASE $DB_NAME" >/dev/null
        db_args=(--database-url "$PG/$DB_NAME")
    fi
    catalog() { "$BIN" --data-dir "$DATA_DIR" "${db_args[@]}" "$@"; }
    if [[ -n "$1" ]]; then export CATALOG__PLUGINS="$1"; else unset CATALOG__PLUGINS; fi
    catalog db init >/dev/null
    catalog sysadmin add bench-admin --email bench@example.org --password 'bench-password-123' >/dev/null
    TOKEN="$(catalog user token add bench-admin bench | tail -n1)"
    catalog user add fan --email fan@example.org --password 'fan-password-123' >/dev/null
    FAN_TOKEN="$(catalog user token add fan bench | tail -n1)"
    # The binary itself in the background (not the function: its subshell would outlive a kill).
    "$BIN" --data-dir "$DATA_DIR" "${db_args[@]}" serve --bind "127.0.0.1:${PORT}" \
        >"$DATA_DIR/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 120); do
        curl -sf -o /dev/null "${API}/status_show" && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || { log "server exited:"; cat "$DATA_DIR/server.log" >&2; exit 1; }
        sleep 0.5
    done
    log "server not ready"; exit 1
}

post() { # post ACTION JSON [TOKEN]
    local out
    out="$(curl -s -X POST "${API}/$1" -H "Authorization: ${3:-$TOKEN}" \
        -H 'Content-Type: application/json' --data-binary "$2")"
    [[ "$(jq -r .success <<<"$out" 2>/dev/null)" == true ]] || { log "$1 failed: $out"; exit 1; }
}

rate() { # rate FILE MARKER FIELD → per second
    sed -n "s/^$2 $3=\([0-9]*\) failed=[0-9]* duration_us=\([0-9]*\)$/\1 \2/p" "$1" |
        awk '{ printf "%.1f", $1 / ($2 / 1e6) }'
}
p50() { awk '$1 == "50%" {print $2}' "$1"; }

RESULTS="$(mktemp -d -t catalog-activity-results.XXXXXX)"
declare -A CREATE PATCH

# --- 1. write throughput, plugin on and off, interleaved ---------------------------------
for round in 1 2; do
    for mode in on off; do
        plugins=""; [[ "$mode" == off ]] && plugins="$OFF_PLUGINS"
        start "$plugins"
        post organization_create '{"name": "bench-org"}'
        for i in $(seq 0 63); do post package_create "{\"name\": \"upd-$i\", \"owner_org\": \"bench-org\"}"; done
        log "round $round, activity $mode: package_create"
        BENCH_TOKEN="$TOKEN" BENCH_ORG=bench-org BENCH_RUN="r$round" \
            wrk -t2 -c16 -d"$DURATION" -s bench/package_create.lua "${API}/package_create" \
            >"$RESULTS/create-$mode-$round.txt"
        log "round $round, activity $mode: package_patch"
        BENCH_TOKEN="$TOKEN" BENCH_PREFIX=upd- BENCH_DATASETS=64 \
            wrk -t2 -c16 -d"$DURATION" -s bench/package_patch.lua "${API}/package_patch" \
            >"$RESULTS/patch-$mode-$round.txt"
        CREATE[$mode-$round]="$(rate "$RESULTS/create-$mode-$round.txt" BENCH_CREATE created)"
        PATCH[$mode-$round]="$(rate "$RESULTS/patch-$mode-$round.txt" BENCH_PATCH updated)"
        stop
    done
done

# --- 2 and 3. reads -----------------------------------------------------------------------
start ""
post package_create '{"name": "hist", "title": "History"}'
log "1,000 activities on one dataset"
for i in $(seq 1 999); do
    curl -s -o /dev/null -X POST "${API}/package_patch" -H "Authorization: $TOKEN" \
        -H 'Content-Type: application/json' --data-binary "{\"id\": \"hist\", \"notes\": \"change $i\"}"
done
n_hist="$(curl -s "${API}/package_activity_list?id=hist&limit=100&offset=900" | jq '.result | length')"
[[ "$n_hist" == 100 ]] || { log "expected 1,000 activities, the page at 900 holds $n_hist"; exit 1; }
wrk -t1 -c1 -d"$DURATION" --latency "${API}/package_activity_list?id=hist" >"$RESULTS/activity_list.txt"

log "loading ${DATASETS} datasets"
python3 bench/gen_catalog.py --url "http://127.0.0.1:${PORT}" --token "$TOKEN" \
    --datasets "$DATASETS" --progress 0 >"$RESULTS/load.txt"
names="$(curl -s "${API}/package_list" | jq -r '[.result[] | select(. != "hist")][:500][]')"
log "fan follows 500 datasets, 100 of them change"
for n in $names; do post follow_dataset "{\"id\": \"$n\"}" "$FAN_TOKEN"; done
for n in $(head -n 100 <<<"$names"); do post package_patch "{\"id\": \"$n\", \"notes\": \"changed for the dashboard\"}"; done
total="$(curl -s -X POST "${API}/activity_delete_counts" -H "Authorization: $TOKEN" | jq .result.total)"
dash="$(curl -s -H "Authorization: $FAN_TOKEN" "${API}/dashboard_activity_list" | jq '.result | length')"
wrk -t1 -c1 -d"$DURATION" --latency -H "Authorization: $FAN_TOKEN" \
    "${API}/dashboard_activity_list" >"$RESULTS/dashboard.txt"

plan=""
if [[ "$STORE" == postgres ]]; then
    # The statement the server runs for fan's dashboard (store::list, Scope::Dashboard, labels of
    # a user in no organization), with fan's values in place of its parameters.
    fan_id="$(psql "$PG/$DB_NAME" -qAtc "SELECT id FROM catalog_user WHERE name = 'fan'")"
    branch() { echo "SELECT seq FROM (SELECT a.seq FROM activity a WHERE $1 AND (a.activity_type NOT LIKE '%package' OR a.permission_labels LIKE '%\"public\"%' OR a.permission_labels LIKE '%\"creator-$fan_id\"%') ORDER BY a.timestamp DESC, a.seq DESC LIMIT 31) s"; }
    # What fan follows is read first and named in the statement (an empty kind adds no branch).
    followed_ids() { psql "$PG/$DB_NAME" -qAtc "SELECT string_agg(quote_literal(object_id), ', ' ORDER BY object_id) FROM follower WHERE follower_id = '$fan_id' AND object_type IN ($1)"; }
    users="$(followed_ids "'user'")" objects="$(followed_ids "'user', 'dataset', 'group'")" groups="$(followed_ids "'group'")"
    parts=("$(branch "a.user_id = '$fan_id'")" "$(branch "a.object_id = '$fan_id'")")
    [[ -n "$users" ]] && parts+=("$(branch "a.user_id IN ($users)")")
    [[ -n "$objects" ]] && parts+=("$(branch "a.object_id IN ($objects)")")
    if [[ -n "$groups" ]]; then
        parts+=("$(branch "a.object_id IN (SELECT p.id FROM member m JOIN package p ON p.id = m.table_id WHERE m.group_id IN ($groups) AND m.table_name = 'package' AND p.private = false AND ((m.state = 'active' AND p.state = 'active') OR (m.state = 'deleted' AND p.state = 'deleted')))")")
        parts+=("$(branch "a.object_id IN (SELECT id FROM package WHERE owner_org IN ($groups) AND private = false)")")
    fi
    union="${parts[0]}"
    for part in "${parts[@]:1}"; do union="$union UNION $part"; done
    sql="SELECT a.seq, a.id, a.timestamp, a.user_id, a.object_id, a.activity_type, a.permission_labels, a.base_seq, a.data FROM activity a WHERE a.seq IN ($union) ORDER BY a.timestamp DESC, a.seq DESC LIMIT 31"
    psql "$PG/$DB_NAME" -qAtc "ANALYZE" >/dev/null
    plan="$(psql "$PG/$DB_NAME" -qAtc "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) $sql")"
fi

# --- report -------------------------------------------------------------------------------
report() {
    echo "activity benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "machine: $(nproc) cores; store: $STORE; server and wrk on one machine"
    echo
    echo "| write (wrk -t2 -c16 -d$DURATION) | activity on | activity off | on/off |"
    echo "|---|---|---|---|"
    for round in 1 2; do
        for w in create patch; do
            local on off
            if [[ $w == create ]]; then on="${CREATE[on-$round]}"; off="${CREATE[off-$round]}";
            else on="${PATCH[on-$round]}"; off="${PATCH[off-$round]}"; fi
            echo "| package_$w, round $round | $on/s | $off/s | $(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.2f", a / b }') |"
        done
    done
    echo
    echo "package_activity_list, dataset with 1,000 activities, default page, 1 connection: p50 $(p50 "$RESULTS/activity_list.txt") ($(awk '/^Requests\/sec:/ {print $2}' "$RESULTS/activity_list.txt") req/s)"
    echo "dashboard_activity_list, fan follows 500 of ${DATASETS} datasets (${total} activities in all, ${dash} on the page), 1 connection: p50 $(p50 "$RESULTS/dashboard.txt") ($(awk '/^Requests\/sec:/ {print $2}' "$RESULTS/dashboard.txt") req/s)"
    if [[ -n "$plan" ]]; then
        echo
        echo "PostgreSQL plan of the dashboard's statement (EXPLAIN ANALYZE):"
        echo "$plan"
    fi
}
mkdir -p bench/results
out="bench/results/activity-$(date -u +%Y%m%dT%H%M%SZ)-$STORE.txt"
report | tee "$out"
rm -rf "$RESULTS"
