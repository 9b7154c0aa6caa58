-- GET the rank of a uniformly random member of N (env PF_N), style from PF_RANKING.
local n = tonumber(os.getenv("PF_N") or "1000000")
local board = os.getenv("PF_BOARD") or "bench"
local ranking = os.getenv("PF_RANKING") or "ordinal"
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
request = function()
  return wrk.format("GET", string.format("/v1/boards/%s/members/player%010d?ranking=%s", board, math.random(0, n - 1), ranking))
end
