-- wrk script: like search_latency.lua, but every request takes the next path from the
-- newline-separated list in $SEARCH_BENCH_PATHS (round robin, per thread), so that no cache of
-- counts or facets for one query can answer them all.
local paths = {}
for p in string.gmatch(os.getenv("SEARCH_BENCH_PATHS") or "", "[^\n]+") do
  table.insert(paths, p)
end
local i = 0

function init(args)
  i = math.random(#paths)
end

function request()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end

dofile("bench/search_latency.lua")
