-- POST an increment for a uniformly random member of N (env PF_N, default 1,000,000).
local n = tonumber(os.getenv("PF_N") or "1000000")
local board = os.getenv("PF_BOARD") or "bench"
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
request = function()
  local body = string.format('{"member":"player%010d","score":%d}', math.random(0, n - 1), math.random(1, 100))
  return wrk.format("POST", "/v1/boards/" .. board .. "/scores", {["Content-Type"] = "application/json"}, body)
end
