-- wrk script: the request is wrk's URL plus a filter that matches every dataset but differs per
-- request (`fq=-name:nocache-<n>`), so no request is answered from the search result cache;
-- prints the same BENCH_SEARCH line as search_latency.lua.
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", wrk.path .. "&fq=-name:nocache-" .. counter)
end
function done(summary, latency, requests)
  local s = summary.duration / 1e6
  io.write(string.format(
    "BENCH_SEARCH requests=%d duration_s=%.2f rps=%.1f p50_ms=%.2f p90_ms=%.2f p95_ms=%.2f p99_ms=%.2f max_ms=%.2f non2xx=%d errors=%d\n",
    summary.requests, s, summary.requests / s,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(95) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
