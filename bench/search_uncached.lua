-- wrk script: the request is wrk's URL plus a filter that matches every dataset but differs per
-- request (`fq=-name:nocache-<n>`), so no request is answered from the search result cache;
-- prints the same BENCH_SEARCH line as search_latency.lua (run wrk from the repository root).
dofile("bench/search_latency.lua")
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", wrk.path .. "&fq=-name:nocache-" .. counter)
end
