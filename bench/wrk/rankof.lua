-- wrk: GET rank?score= of a random score in the loaded range (PF_SCORE_MAX).
local max = tonumber(os.getenv("PF_SCORE_MAX") or "1000000")
local ranking = os.getenv("PF_RANKING") or "ordinal"
request = function()
  return wrk.format("GET", "/v1/boards/bench/rank?score=" .. math.random(0, max - 1)
    .. "&ranking=" .. ranking)
end
