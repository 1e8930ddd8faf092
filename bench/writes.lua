-- wrk script for bench/writes.sh: one write action per request, each a real change, and the
-- name or id of every acknowledged write appended to a file for the check afterwards.
-- Environment: BENCH_TOKEN, BENCH_ORG, BENCH_RUN (unique per run), BENCH_MODE
-- (create | update | resource), BENCH_PREFIX and BENCH_DATASETS (the datasets update and
-- resource write to, named <prefix><i>), BENCH_OUT (directory for the acknowledged-write files).

local threads = {}
local next_id = 0

function setup(thread)
  next_id = next_id + 1
  thread:set("tid", next_id)
  table.insert(threads, thread)
end

function init(args)
  counter = 0
  token = os.getenv("BENCH_TOKEN") or ""
  org = os.getenv("BENCH_ORG") or "bench-org"
  run = os.getenv("BENCH_RUN") or "run"
  mode = os.getenv("BENCH_MODE") or "create"
  prefix = os.getenv("BENCH_PREFIX") or "upd-"
  datasets = tonumber(os.getenv("BENCH_DATASETS") or "64")
  out = io.open(string.format("%s/%s-%d.acked", os.getenv("BENCH_OUT") or "/tmp", mode, tid), "w")
  ok = 0
  failed = 0
end

local function target()
  return string.format("%s%d", prefix, (counter * 7 + tid) % datasets)
end

function request()
  counter = counter + 1
  local body
  if mode == "create" then
    local name = string.format("w-%s-%d-%d", run, tid, counter)
    body = string.format(
      '{"name": "%s", "title": "Write benchmark %s", "owner_org": "%s", ' ..
      '"notes": "Created by bench/writes.sh", "tags": [{"name": "bench"}, {"name": "w-%s"}], ' ..
      '"resources": [{"name": "data", "url": "https://example.org/%s.csv", "format": "CSV"}]}',
      name, name, org, run, name)
  elseif mode == "update" then
    local name = target()
    body = string.format(
      '{"name": "%s", "title": "Updated %s", "owner_org": "%s", ' ..
      '"notes": "mark %s-%d-%d", "tags": [{"name": "bench"}, {"name": "updated"}], ' ..
      '"resources": [{"name": "data", "url": "https://example.org/%s.csv", "format": "CSV"}]}',
      name, name, org, run, tid, counter, name)
  else
    local name = target()
    body = string.format(
      '{"package_id": "%s", "name": "r-%s-%d-%d", "url": "https://example.org/r-%s-%d-%d.csv", "format": "CSV"}',
      name, run, tid, counter, run, tid, counter)
  end
  local action = ({create = "package_create", update = "package_update", resource = "resource_create"})[mode]
  return wrk.format("POST", "/api/3/action/" .. action, {
    ["Authorization"] = token,
    ["Content-Type"] = "application/json",
  }, body)
end

function response(status, headers, body)
  if status == 200 then
    ok = ok + 1
    -- What the check looks for: the dataset's name (create), the mark in its notes (update),
    -- the resource's name (resource).
    local key
    if mode == "create" then
      key = body:match('"name": ?"(w%-%d+%-%d+%-%d+)"')
    elseif mode == "update" then
      -- run-thread-counter: the check derives the dataset from thread and counter.
      key = body:match('"notes": ?"mark ([^"]+)"')
    else
      key = body:match('"name": ?"(r%-[^"]+)"')
    end
    out:write((key or "?"), "\n")
    out:flush()
  else
    failed = failed + 1
    if failed <= 3 then
      io.stderr:write(string.format("%s answered %d: %s\n", mode, status, body:sub(1, 300)))
    end
  end
end

function done(summary, latency, requests)
  local n, bad = 0, 0
  for _, t in ipairs(threads) do
    n = n + (t:get("ok") or 0)
    bad = bad + (t:get("failed") or 0)
  end
  io.write(string.format("BENCH_WRITES mode=%s ok=%d failed=%d duration_us=%d p50_us=%d p99_us=%d\n",
    mode, n, bad, summary.duration, latency:percentile(50), latency:percentile(99)))
end
