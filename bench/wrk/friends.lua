-- wrk: POST members:query with 100 random members of the loaded board (PF_N of them).
local n = tonumber(os.getenv("PF_N") or "1000000")
local ranking = os.getenv("PF_RANKING") or "ordinal"
request = function()
  local names = {}
  for i = 1, 100 do
    names[i] = string.format('"player%010d"', math.random(0, n - 1))
  end
  local body = '{"members":[' .. table.concat(names, ",") .. '],"ranking":"' .. ranking .. '"}'
  return wrk.format("POST", "/v1/boards/bench/members:query",
    {["Content-Type"] = "application/json"}, body)
end
