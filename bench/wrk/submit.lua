-- POST an increment for a uniformly random member of N (env PF_N, default 1,000,000).
-- The request line and headers are built once; each request formats only its body, so the
-- load generator spends about what redis-benchmark does per request (docs/BENCHMARKS.md §2).
local n = tonumber(os.getenv("PF_N") or "1000000")
local board = os.getenv("PF_BOARD") or "bench"
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
local head
init = function()
  head = "POST /v1/boards/" .. board .. "/scores HTTP/1.1\r\nHost: " .. wrk.host .. ":" .. wrk.port ..
    "\r\nContent-Type: application/json\r\nContent-Length: "
end
request = function()
  local body = string.format('{"member":"player%010d","score":%d}', math.random(0, n - 1), math.random(1, 100))
  return head .. #body .. "\r\n\r\n" .. body
end
