#!/usr/bin/env bash
# A big upload and download through the file store (issue 28): the server's memory while a
# SIZE_MIB file (default 1024) goes in with a multipart `resource_create` and comes back out,
# against the local store and against an S3-compatible store (s3s-fs on loopback, as the tests
# use it), on SQLite.
#
#   bench/file_store.sh [SIZE_MIB]
#
# Figures per store: the server's RSS before the upload, its peak (VmHWM) during the upload and
# during the download, the times, and whether the downloaded bytes match (sha256).
# Settings: FILE_BENCH_BIN (default $CARGO_TARGET_DIR/debug/catalog: memory, not speed, is the
# point), S3S_FS_BIN (default ~/.cache/s3s-fs/bin/s3s-fs, as ./test.sh installs it),
# FILE_BENCH_PORT (5097), FILE_BENCH_S3_PORT (5098).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/catalog-target}"
SIZE_MIB="${1:-1024}"
BIN="${FILE_BENCH_BIN:-$CARGO_TARGET_DIR/debug/catalog}"
S3S="${S3S_FS_BIN:-$HOME/.cache/s3s-fs/bin/s3s-fs}"
PORT="${FILE_BENCH_PORT:-5097}"; S3_PORT="${FILE_BENCH_S3_PORT:-5098}"
URL="http://127.0.0.1:$PORT"
WORK="$(mktemp -d)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

echo "file: $SIZE_MIB MiB of random bytes"
head -c "$((SIZE_MIB * 1024 * 1024))" /dev/urandom > "$WORK/file.bin"
SUM="$(sha256sum "$WORK/file.bin" | cut -d' ' -f1)"

mkdir -p "$WORK/s3/catalog"
"$S3S" --host 127.0.0.1 --port "$S3_PORT" --access-key bench --secret-key bench-secret "$WORK/s3" \
    >/dev/null 2>&1 &
PIDS+=($!)

kib() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }

run() {
    local store="$1"; shift
    local dir="$WORK/data-$store"
    mkdir -p "$dir"
    env "$@" CATALOG__MAX_REQUEST_BYTES=$((SIZE_MIB * 1024 * 1024 + 10 * 1024 * 1024)) \
        CATALOG__AUTH__CREATE_UNOWNED_DATASET=true CATALOG__DATASTORE__LOADER__ENABLED=false \
        "$BIN" --data-dir "$dir" sysadmin add admin --email a@example.org --password password-of-admin >/dev/null
    local token
    token="$("$BIN" --data-dir "$dir" user token add admin bench | tail -n 1)"
    env "$@" CATALOG__MAX_REQUEST_BYTES=$((SIZE_MIB * 1024 * 1024 + 10 * 1024 * 1024)) \
        CATALOG__AUTH__CREATE_UNOWNED_DATASET=true CATALOG__DATASTORE__LOADER__ENABLED=false \
        RUST_LOG=warn "$BIN" --data-dir "$dir" serve --bind "127.0.0.1:$PORT" 2>"$dir/log" &
    local pid=$!
    PIDS+=("$pid")
    for _ in $(seq 100); do curl -sf "$URL/api/3/action/status_show" >/dev/null && break; sleep 0.1; done
    curl -sf -H "Authorization: $token" -H 'Content-Type: application/json' \
        -d '{"name": "big"}' "$URL/api/3/action/package_create" >/dev/null
    local before t0 t1 up_peak res path t2 down_peak got
    before="$(kib "$pid" VmRSS)"
    t0="$(date +%s.%N)"
    res="$(curl -sf -H "Authorization: $token" -F package_id=big -F name=big \
        -F "upload=@$WORK/file.bin" "$URL/api/3/action/resource_create")"
    t1="$(date +%s.%N)"
    up_peak="$(kib "$pid" VmHWM)"
    path="$(python3 -c 'import json,sys; u=json.load(sys.stdin)["result"]["url"]; print(u[u.index("/dataset/"):])' <<<"$res")"
    curl -sf "$URL$path" -o "$WORK/back.bin"
    t2="$(date +%s.%N)"
    down_peak="$(kib "$pid" VmHWM)"
    got="$(sha256sum "$WORK/back.bin" | cut -d' ' -f1)"
    printf '%-6s RSS before %6d KiB | upload %6.1f s, peak %6d KiB (+%d MiB) | download %6.1f s, peak %6d KiB (+%d MiB) | bytes %s\n' \
        "$store" "$before" "$(echo "$t1 - $t0" | bc)" "$up_peak" $(((up_peak - before) / 1024)) \
        "$(echo "$t2 - $t1" | bc)" "$down_peak" $(((down_peak - before) / 1024)) \
        "$([ "$got" = "$SUM" ] && echo identical || echo DIFFERENT)"
    kill "$pid"; wait "$pid" 2>/dev/null || true
    rm -f "$WORK/back.bin"
}

run local CATALOG__STORAGE__BACKEND=local
run s3 CATALOG__STORAGE__BACKEND=s3 CATALOG__STORAGE__BUCKET=catalog \
    CATALOG__STORAGE__ENDPOINT="http://127.0.0.1:$S3_PORT" CATALOG__STORAGE__ALLOW_HTTP=true \
    CATALOG__STORAGE__ACCESS_KEY_ID=bench CATALOG__STORAGE__SECRET_ACCESS_KEY=bench-secret
