#!/usr/bin/env bash
# The web pages against the API they read, side by side on one binary (issue 24's speed
# target): the dataset page against package_show, the search page against the same
# package_search, alternating (page, API, API, page, …). Also prints the pages' weight: the
# search page with 20 results, a dataset page with 20 resources, and the stylesheet.
#
#   bench/web_pages.sh BIN [ROUNDS]
#
# Settings: WEB_PORT (5082), WEB_DURATION (8s), WEB_CONNECTIONS (64), WEB_SEED (40).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$1"; ROUNDS="${2:-3}"
PORT="${WEB_PORT:-5082}"; DURATION="${WEB_DURATION:-8s}"; CONNECTIONS="${WEB_CONNECTIONS:-64}"
SEED="${WEB_SEED:-40}"
SITE="http://127.0.0.1:$PORT"; API="$SITE/api/3/action"
WORK="$(mktemp -d)"; PID=""
cleanup() { [[ -z "$PID" ]] || kill "$PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
"$BIN" --data-dir "$WORK" sysadmin add admin --email admin@example.org --password bench-password >/dev/null
TOKEN="$("$BIN" --data-dir "$WORK" user token add admin bench | tail -n1)"
CATALOG__SITE_URL="$SITE" "$BIN" --data-dir "$WORK" serve --bind "127.0.0.1:$PORT" >"$WORK/log" 2>&1 &
PID=$!
for _ in $(seq 1 300); do curl -sf -o /dev/null "$API/status_show" && break; sleep 0.2; done
post() { curl -sf -H "Authorization: $TOKEN" -H 'Content-Type: application/json' -d "$2" "$API/$1" >/dev/null; }
post organization_create '{"name": "bench-org", "title": "Bench organization"}'
resources="$(for i in $(seq 1 20); do printf '{"name": "Resource %d", "url": "http://example.org/r%d.csv", "format": "CSV", "size": %d}' "$i" "$i" "$((i * 1000))"; if (( i < 20 )); then printf ','; fi; done)"
post package_create "{\"name\": \"bench-dataset\", \"title\": \"Bench dataset\", \"notes\": \"A dataset for the **benchmark**.\", \"owner_org\": \"bench-org\", \"tags\": [{\"name\": \"one\"}, {\"name\": \"two\"}], \"license_id\": \"cc-by\", \"resources\": [$resources]}"
for i in $(seq 1 "$SEED"); do
    post package_create "{\"name\": \"seed-$i\", \"title\": \"Open data set $i\", \"notes\": \"Seeded dataset $i about open data, with a description long enough to be cut in the list of results.\", \"owner_org\": \"bench-org\", \"tags\": [{\"name\": \"tag$((i % 7))\"}], \"resources\": [{\"url\": \"http://example.org/$i.csv\", \"format\": \"CSV\"}, {\"url\": \"http://example.org/$i.json\", \"format\": \"JSON\"}]}"
done
SEARCH_PAGE="$SITE/dataset/?q=open+data"
FACETS='%5B%22organization%22%2C%22groups%22%2C%22tags%22%2C%22res_format%22%2C%22license_id%22%5D'
SEARCH_API="$API/package_search?q=open+data&rows=20&start=0&sort=score+desc%2C+metadata_modified+desc&include_private=true&facet.limit=10&facet.field=$FACETS"
size() { curl -s -o /dev/null -w '%{size_download}' "$1"; }
echo "weight: search page (20 results) $(size "$SEARCH_PAGE") B, dataset page (20 resources) $(size "$SITE/dataset/bench-dataset") B, stylesheet $(size "$SITE/static/web/catalog.css") B"
run() { # label url
    for _ in 1 2 3; do curl -sf -o /dev/null "$2"; done
    out="$(wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency "$2")"
    echo "round=$round $1 req/s=$(awk '/^Requests\/sec/ {print $2}' <<<"$out") p50=$(awk '$1 == "50%" {print $2}' <<<"$out") non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")"
}
for round in $(seq 1 "$ROUNDS"); do
    if (( round % 2 )); then
        run dataset_page "$SITE/dataset/bench-dataset"; run package_show "$API/package_show?id=bench-dataset"
        run search_page "$SEARCH_PAGE"; run package_search "$SEARCH_API"
    else
        run package_show "$API/package_show?id=bench-dataset"; run dataset_page "$SITE/dataset/bench-dataset"
        run package_search "$SEARCH_API"; run search_page "$SEARCH_PAGE"
    fi
done
