#!/usr/bin/env bash
# A/B throughput of two binaries, interleaved (A B A B …) so that both see the same machine
# load: package_show (cached, what a portal's dataset page calls), package_search (a front
# page's query with facets), package_create (16 connections, bench/package_create.lua),
# datastore_search (a filter, a sort and 20 rows of a 2,000-row table) and the dataset page
# (`/dataset/bench-dataset`, HTML).
# Each binary serves its own fresh store seeded alike (bench/run.sh's dataset: an organization,
# a group, 3 resources, 5 tags, plus AB_SEED datasets to search): SQLite in a temporary data
# directory, or, with AB_STORE=postgres, a scratch PostgreSQL database per binary (created and
# dropped here; the `postgres` search backend). Prints one line per (round, binary, request).
# The order alternates by round (A B, then B A).
#
#   bench/ab_api.sh BIN_A BIN_B [ROUNDS]
#
# Settings: AB_STORE (sqlite | postgres), AB_PORT (5081), AB_DURATION (8s), AB_CONNECTIONS (64),
# AB_THREADS (2), AB_SEED (200), AB_ONLY (a space-separated subset of: show search create
# datastore page), AB_EXTRA_A / AB_EXTRA_B (more members of the benchmark dataset and of each
# created one for that binary, `"theme": ["x"], "contact": [...]`: a schema file's fields when
# a binary is a wrapper that configures one).
set -euo pipefail
cd "$(dirname "$0")/.."
A="$1"; B="$2"; ROUNDS="${3:-3}"
STORE="${AB_STORE:-sqlite}"
PORT="${AB_PORT:-5081}"
DURATION="${AB_DURATION:-8s}"
CONNECTIONS="${AB_CONNECTIONS:-64}"
THREADS="${AB_THREADS:-2}"
SEED="${AB_SEED:-200}"
ONLY="${AB_ONLY:-show search create datastore page}"
SITE="http://127.0.0.1:$PORT"
API="$SITE/api/3/action"
WORK="$(mktemp -d)"
PG_ADMIN="postgres://postgres@127.0.0.1:5432/postgres"
PID=""
stop() { [[ -z "$PID" ]] || { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=""; }; }
cleanup() {
    stop
    if [[ "$STORE" == postgres ]]; then
        for label in A B; do
            psql -q "$PG_ADMIN" -c "DROP DATABASE IF EXISTS ab_bench_${label,,} WITH (FORCE)" >/dev/null 2>&1 || true
        done
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

args() { # label: the store arguments of a binary
    if [[ "$STORE" == postgres ]]; then
        echo "--data-dir $WORK/$1 --database-url postgres://postgres@127.0.0.1:5432/ab_bench_${1,,}"
    else
        echo "--data-dir $WORK/$1"
    fi
}

start() { # bin label
    # shellcheck disable=SC2046
    CATALOG__SEARCH__BACKEND="$([[ "$STORE" == postgres ]] && echo postgres || echo tantivy)" \
        "$1" $(args "$2") serve --bind "127.0.0.1:$PORT" >"$WORK/$2.log" 2>&1 &
    PID=$!
    for _ in $(seq 1 300); do curl -sf -o /dev/null "$API/status_show" && return; sleep 0.2; done
    echo "the server did not start: $(tail -5 "$WORK/$2.log")" >&2; exit 1
}

post() { # token action json
    curl -sf -H "Authorization: $1" -H 'Content-Type: application/json' -d "$3" "$API/$2" >/dev/null
}

# The DataStore table: 2,000 rows of four columns.
python3 - "$WORK/datastore.json" <<'PY'
import json, sys
records = [{"n": i, "name": f"row {i}", "value": i * 1.5, "kind": f"k{i % 10}"} for i in range(2000)]
fields = [{"id": "n", "type": "int"}, {"id": "name", "type": "text"}, {"id": "value", "type": "float"}, {"id": "kind", "type": "text"}]
json.dump({"resource": {"package_id": "bench-dataset", "name": "table"}, "fields": fields, "records": records}, open(sys.argv[1], "w"))
PY

declare -A TOKEN RID
for label in A B; do
    bin="$A"; [[ "$label" == B ]] && bin="$B"
    mkdir -p "$WORK/$label"
    if [[ "$STORE" == postgres ]]; then
        psql -q "$PG_ADMIN" -c "DROP DATABASE IF EXISTS ab_bench_${label,,} WITH (FORCE)" >/dev/null
        psql -q "$PG_ADMIN" -c "CREATE DATABASE ab_bench_${label,,}" >/dev/null
    fi
    # shellcheck disable=SC2046
    "$bin" $(args "$label") sysadmin add admin --email admin@example.org --password bench-password >/dev/null
    # shellcheck disable=SC2046
    TOKEN[$label]="$("$bin" $(args "$label") user token add admin bench | tail -n1)"
    start "$bin" "$label"
    t="${TOKEN[$label]}"
    post "$t" organization_create '{"name": "bench-org"}'
    post "$t" group_create '{"name": "bench-group"}'
    extra="AB_EXTRA_$label"; extra="${!extra:-}"; [[ -z "$extra" ]] || extra=", $extra"
    post "$t" package_create '{"name": "bench-dataset", "title": "Bench dataset", "notes": "A dataset for the benchmark.", "owner_org": "bench-org", "groups": [{"name": "bench-group"}], "tags": [{"name": "one"}, {"name": "two"}, {"name": "three"}, {"name": "four"}, {"name": "five"}], "resources": [{"url": "http://example.org/a.csv", "format": "CSV"}, {"url": "http://example.org/b.json", "format": "JSON"}, {"url": "http://example.org/c.xlsx", "format": "XLSX"}]'"$extra"'}'
    for i in $(seq 1 "$SEED"); do
        post "$t" package_create "{\"name\": \"seed-$i\", \"title\": \"Open data set $i\", \"notes\": \"Seeded dataset $i about open data\", \"owner_org\": \"bench-org\", \"tags\": [{\"name\": \"tag$((i % 7))\"}], \"resources\": [{\"url\": \"http://example.org/$i.csv\", \"format\": \"$([[ $((i % 2)) == 0 ]] && echo CSV || echo JSON)\"}]}"
    done
    RID[$label]="$(curl -sf -H "Authorization: $t" -H 'Content-Type: application/json' \
        --data-binary "@$WORK/datastore.json" "$API/datastore_create" | jq -r .result.resource_id)"
    stop
done

SEARCH="$API/package_search?q=open%20data&rows=20&facet.field=%5B%22organization%22%2C%22tags%22%2C%22res_format%22%2C%22license_id%22%5D"
for round in $(seq 1 "$ROUNDS"); do
    # A B in odd rounds, B A in even ones: a machine that slows down (or warms up) during the
    # run does not favour one binary.
    order="A B"; (( round % 2 == 0 )) && order="B A"
    for label in $order; do
        bin="$A"; [[ "$label" == B ]] && bin="$B"
        start "$bin" "$label"
        for what in $ONLY; do
            case "$what" in
                show)
                    for _ in 1 2 3; do curl -sf -o /dev/null "$API/package_show?id=bench-dataset"; done
                    out="$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "$API/package_show?id=bench-dataset")" ;;
                search)
                    for _ in 1 2 3; do curl -sf -o /dev/null "$SEARCH"; done
                    out="$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "$SEARCH")" ;;
                create)
                    extra="AB_EXTRA_$label"
                    out="$(BENCH_TOKEN="${TOKEN[$label]}" BENCH_ORG=bench-org BENCH_RUN="r$round${label,,}" BENCH_EXTRA="${!extra:-}" \
                        wrk -t"$THREADS" -c16 -d"$DURATION" --latency -s bench/package_create.lua "$API/package_create")" ;;
                datastore)
                    ds="$API/datastore_search?resource_id=${RID[$label]}&filters=%7B%22kind%22%3A%22k3%22%7D&sort=value%20desc&limit=20"
                    for _ in 1 2 3; do curl -sf -o /dev/null "$ds"; done
                    out="$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "$ds")" ;;
                page)
                    for _ in 1 2 3; do curl -sf -o /dev/null "$SITE/dataset/bench-dataset"; done
                    out="$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "$SITE/dataset/bench-dataset")" ;;
            esac
            rps="$(awk '/^Requests\/sec/ {print $2}' <<<"$out")"
            p50="$(awk '$1 == "50%" {print $2}' <<<"$out")"
            p99="$(awk '$1 == "99%" {print $2}' <<<"$out")"
            errors="$(awk '/Non-2xx/ {print $NF}' <<<"$out")"
            echo "store=$STORE round=$round bin=$label $what req/s=$rps p50=$p50 p99=$p99 non2xx=${errors:-0}"
        done
        stop
    done
done
