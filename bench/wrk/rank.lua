-- GET the rank of a uniformly random member of N (env PF_N), style from PF_RANKING.
-- The whole request is one string.format (no wrk.format per request), as in submit.lua.
local n = tonumber(os.getenv("PF_N") or "1000000")
local board = os.getenv("PF_BOARD") or "bench"
local ranking = os.getenv("PF_RANKING") or "ordinal"
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
local fmt
init = function()
  fmt = "GET /v1/boards/" .. board .. "/members/player%010d?ranking=" .. ranking ..
    " HTTP/1.1\r\nHost: " .. wrk.host .. ":" .. wrk.port .. "\r\n\r\n"
end
request = function()
  return string.format(fmt, math.random(0, n - 1))
end
