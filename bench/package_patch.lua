-- wrk script: POST package_patch on one of BENCH_DATASETS datasets named <BENCH_PREFIX><i>
-- (round robin per thread), each request changing the notes, so every request is a real change
-- (one activity each with the activity plugin).
-- Environment: BENCH_TOKEN (API token), BENCH_PREFIX, BENCH_DATASETS.

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
  prefix = os.getenv("BENCH_PREFIX") or "upd-"
  datasets = tonumber(os.getenv("BENCH_DATASETS") or "64")
  updated = 0
  failed = 0
end

function request()
  counter = counter + 1
  local name = string.format("%s%d", prefix, (counter * 7 + tid) % datasets)
  local body = string.format('{"id": "%s", "notes": "update %d of thread %d"}', name, counter, tid)
  return wrk.format("POST", nil, {
    ["Authorization"] = token,
    ["Content-Type"] = "application/json",
  }, body)
end

function response(status, headers, body)
  if status == 200 then
    updated = updated + 1
  else
    failed = failed + 1
    if failed <= 3 then
      io.stderr:write(string.format("package_patch answered %d: %s\n", status, body:sub(1, 300)))
    end
  end
end

function done(summary, latency, requests)
  local ok, bad = 0, 0
  for _, t in ipairs(threads) do
    ok = ok + (t:get("updated") or 0)
    bad = bad + (t:get("failed") or 0)
  end
  io.write(string.format("BENCH_PATCH updated=%d failed=%d duration_us=%d\n",
    ok, bad, summary.duration))
end
