#!/usr/bin/env bash
# The DataStore loader and search on a big table (issue 25's figures), on one store:
#  - generates a CSV of ROWS rows × 12 columns (1,000,000 rows ≈ 100 MB), serves it on
#    loopback (allow-listed with catalog.fetch.allowed_hosts) and links it from a resource;
#  - times the load from the job's start to its end (xloader_status's task_info: the rows are
#    queryable then), on PostgreSQL also until its full-text index is built, and samples the
#    server's RSS every 0.2 s (growth = peak during the load − RSS before it);
#  - indexes one column (datastore_create … indexes) and times, one request at a time,
#    a filter on it, a full-text q, and offset paging near the end (p50 / p90 of REQS
#    requests each, curl's time_total).
#
#   bench/datastore_load.sh BIN sqlite|postgres [ROWS]
#
# Settings: DS_PORT (5093), DS_REQS (60), DS_WAIT_INDEX (1; 0 for a binary that builds the
# full-text index inside the load).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$1"; STORE="$2"; ROWS="${3:-1000000}"
PORT="${DS_PORT:-5093}"; REQS="${DS_REQS:-60}"
SITE="http://127.0.0.1:$PORT"; API="$SITE/api/3/action"
WORK="$(mktemp -d)"; PID=""; FILES_PID=""; DB=""
cleanup() {
    [[ -z "$PID" ]] || kill "$PID" 2>/dev/null || true
    [[ -z "$FILES_PID" ]] || kill "$FILES_PID" 2>/dev/null || true
    if [[ -n "$DB" ]]; then sleep 1; psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

python3 - "$WORK/big.csv" "$ROWS" <<'PY'
import random, sys
random.seed(25)
words = [f"w{i:03d}" for i in range(1000)]
cats = ["energy", "water", "transport", "health", "education", "housing", "climate", "budget"]
with open(sys.argv[1], "w") as f:
    f.write("id,name,city,category,value,amount,day,flag,lat,lon,code,description\n")
    for i in range(1, int(sys.argv[2]) + 1):
        d = " ".join(random.choice(words) for _ in range(6))
        f.write(f"{i},name {i},city{i % 5000},{cats[i % 8]},{random.random() * 1000:.3f},{random.randint(1, 10**6)},"
                f"2024-{(i % 12) + 1:02d}-{(i % 28) + 1:02d},{'yes' if i % 3 else 'no'},{random.uniform(-90, 90):.5f},"
                f"{random.uniform(-180, 180):.5f},C{i % 997:04d},{d}\n")
PY
echo "file: $(stat -c %s "$WORK/big.csv") bytes, $ROWS rows"
(cd "$WORK" && exec python3 -m http.server 5094 --bind 127.0.0.1 >/dev/null 2>&1) &
FILES_PID=$!

DBURL=""
if [[ "$STORE" == postgres ]]; then
    DB="bench_ds_$$"
    psql -q -h 127.0.0.1 -U postgres -c "CREATE DATABASE $DB" >/dev/null
    DBURL="postgres://postgres@127.0.0.1:5432/$DB"
fi
export CATALOG_DATABASE_URL="$DBURL"
[[ -n "$DBURL" ]] || unset CATALOG_DATABASE_URL
"$BIN" --data-dir "$WORK/data" sysadmin add admin --email admin@example.org --password bench-password >/dev/null
TOKEN="$("$BIN" --data-dir "$WORK/data" user token add admin bench | tail -n1)"
CATALOG__SITE_URL="$SITE" CATALOG__FETCH__ALLOWED_HOSTS='[127.0.0.1]' \
    "$BIN" --data-dir "$WORK/data" serve --bind "127.0.0.1:$PORT" >"$WORK/log" 2>&1 &
PID=$!
for _ in $(seq 1 300); do curl -sf -o /dev/null "$API/status_show" && break; sleep 0.2; done
post() { curl -sf -H "Authorization: $TOKEN" -H 'Content-Type: application/json' -d "$2" "$API/$1"; }
rss() { awk '/^VmRSS/ {print $2}' "/proc/$PID/status"; }
post organization_create '{"name": "bench-org"}' >/dev/null
BASE_RSS="$(rss)"
RID="$(post package_create "{\"name\": \"big\", \"owner_org\": \"bench-org\", \"resources\": [{\"url\": \"http://127.0.0.1:5094/big.csv\", \"format\": \"CSV\"}]}" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["resources"][0]["id"])')"
PEAK="$BASE_RSS"
while :; do
    r="$(rss)"; (( r > PEAK )) && PEAK="$r"
    st="$(curl -sf -H "Authorization: $TOKEN" "$API/xloader_status?resource_id=$RID" || true)"
    status="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1] or "{}").get("result",{}).get("status",""))' "$st")"
    [[ "$status" == complete || "$status" == error ]] && break
    sleep 0.2
done
python3 - "$st" <<'PY'
import json, sys, datetime
r = json.loads(sys.argv[1])["result"]
t = r["task_info"]
start = min(datetime.datetime.fromisoformat(l["timestamp"]) for l in t["logs"])
end = datetime.datetime.fromisoformat(t["finished_timestamp"])
print(f"load: status={r['status']} rows={t['rows_loaded']} seconds={(end - start).total_seconds():.1f}"
      + (f" error={r['error']}" if r['status'] == 'error' else ""))
for l in t["logs"]:
    at = (datetime.datetime.fromisoformat(l["timestamp"]) - start).total_seconds()
    print(f"  +{at:6.1f} s  {l['message'][:90]}")
PY
# PostgreSQL builds the full-text index after the rows are in: wait for it (RSS still sampled),
# so the queries below run on the finished table.
if [[ "$STORE" == postgres && "${DS_WAIT_INDEX:-1}" == 1 ]]; then
    for _ in $(seq 1 1500); do
        r="$(rss)"; (( r > PEAK )) && PEAK="$r"
        st="$(curl -sf -H "Authorization: $TOKEN" "$API/xloader_status?resource_id=$RID" || true)"
        grep -q "Full-text index built" <<<"$st" && break
        sleep 0.2
    done
    python3 - "$st" <<'PY'
import json, sys, datetime
t = json.loads(sys.argv[1])["result"]["task_info"]
start = min(datetime.datetime.fromisoformat(l["timestamp"]) for l in t["logs"])
built = [l for l in t["logs"] if l["message"].startswith("Full-text index built")]
if built:
    at = (datetime.datetime.fromisoformat(built[-1]["timestamp"]) - start).total_seconds()
    print(f"full-text index ready: +{at:.1f} s after the load's start ({built[-1]['message']})")
else:
    print("full-text index: not reported within 300 s")
PY
fi
echo "rss: before=$((BASE_RSS / 1024)) MiB peak=$((PEAK / 1024)) MiB growth=$(((PEAK - BASE_RSS) / 1024)) MiB"

post datastore_create "{\"resource_id\": \"$RID\", \"force\": true, \"indexes\": \"id\"}" >/dev/null
lat() { # label url
    for _ in 1 2 3; do curl -sf -o /dev/null "$2"; done
    for _ in $(seq 1 "$REQS"); do curl -sf -o /dev/null -w '%{time_total}\n' "$2"; done | sort -n \
        | awk -v l="$1" '{a[NR]=$1} END {printf "%s: p50=%.1f ms p90=%.1f ms (n=%d)\n", l, a[int(NR*0.5)]*1000, a[int(NR*0.9)]*1000, NR}'
}
lat "filter on indexed id" "$API/datastore_search?resource_id=$RID&filters=%7B%22id%22%3A654321%7D"
lat "full-text q (one word, ~0.6% of rows)" "$API/datastore_search?resource_id=$RID&q=w421"
lat "offset 900000 limit 100" "$API/datastore_search?resource_id=$RID&offset=900000&limit=100"
