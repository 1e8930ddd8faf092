-- wrk script: POST package_create with a unique dataset name per request.
-- Each wrk thread has its own Lua state, so a name is <run id>-<thread>-<counter>.
-- Environment: BENCH_TOKEN (API token), BENCH_ORG (owner organization), BENCH_RUN (run id).

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
  -- More members of the dataset dict (`"contact": [...], ...`), e.g. a schema file's fields.
  extra = os.getenv("BENCH_EXTRA") or ""
  if extra ~= "" then extra = ", " .. extra end
  created = 0
  failed = 0
end

function request()
  counter = counter + 1
  local name = string.format("bench-%s-%d-%d", run, tid, counter)
  local body = string.format(
    '{"name": "%s", "title": "Benchmark dataset %s", "owner_org": "%s", ' ..
    '"notes": "Created by bench/run.sh", "tags": [{"name": "bench"}, {"name": "load"}], ' ..
    '"resources": [{"name": "data", "url": "https://example.org/%s.csv", "format": "CSV"}]%s}',
    name, name, org, name, extra)
  return wrk.format("POST", nil, {
    ["Authorization"] = token,
    ["Content-Type"] = "application/json",
  }, body)
end

function response(status, headers, body)
  if status == 200 then
    created = created + 1
  else
    failed = failed + 1
    if failed <= 3 then
      io.stderr:write(string.format("package_create answered %d: %s\n", status, body:sub(1, 300)))
    end
  end
end

function done(summary, latency, requests)
  local ok, bad = 0, 0
  for _, t in ipairs(threads) do
    ok = ok + (t:get("created") or 0)
    bad = bad + (t:get("failed") or 0)
  end
  -- duration is in microseconds
  io.write(string.format("BENCH_CREATE created=%d failed=%d duration_us=%d\n",
    ok, bad, summary.duration))
end
