-- POST an increment for a uniformly random member of N (env PF_N, default 1,000,000).
-- The request line and headers are built once; each request formats only its body, so the
-- load generator spends about what redis-benchmark does per request (docs/bench-history.md §2).
-- PF_TOKEN: send `Authorization: Bearer PF_TOKEN` (an API key). PF_TOKENS: a file whose
-- line i+1 is member i's player token; each request then carries its member's own token.
-- PF_PAD: add an `X-Pad` header of that many bytes (to compare requests of equal size).
-- PF_IDEM=1: each request carries its own `Idempotency-Key` (a random prefix per thread and
-- a counter: 24 bytes, never repeated).
-- PF_MEMBER_FMT: the member ids' format (default `player%010d`; bench/partition-resp.sh
-- names them as redis-benchmark does, `m:%012d`).
local n = tonumber(os.getenv("PF_N") or "1000000")
local board = os.getenv("PF_BOARD") or "bench"
local member_fmt = os.getenv("PF_MEMBER_FMT") or "player%010d"
local token = os.getenv("PF_TOKEN")
local tokens_file = os.getenv("PF_TOKENS")
local idem = os.getenv("PF_IDEM") == "1"
local idem_prefix, idem_count = nil, 0
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
local head, tail, tokens
init = function()
  head = "POST /v1/boards/" .. board .. "/scores HTTP/1.1\r\nHost: " .. wrk.host .. ":" .. wrk.port ..
    "\r\nContent-Type: application/json\r\n"
  if token then head = head .. "Authorization: Bearer " .. token .. "\r\n" end
  local pad = tonumber(os.getenv("PF_PAD") or "0")
  if pad > 0 then head = head .. "X-Pad: " .. string.rep("x", pad) .. "\r\n" end
  if tokens_file then
    tokens = {}
    for line in io.lines(tokens_file) do tokens[#tokens + 1] = line end
    n = math.min(n, #tokens)
  end
  tail = "Content-Length: "
  idem_prefix = string.format("%08x", math.random(0, 0x7fffffff))
end
request = function()
  local i = math.random(0, n - 1)
  local body = string.format('{"member":"' .. member_fmt .. '","score":%d}', i, math.random(1, 100))
  local auth = ""
  if tokens then auth = "Authorization: Bearer " .. tokens[i + 1] .. "\r\n" end
  if idem then
    idem_count = idem_count + 1
    auth = auth .. "Idempotency-Key: " .. idem_prefix .. string.format("%016d", idem_count) .. "\r\n"
  end
  return head .. auth .. tail .. #body .. "\r\n\r\n" .. body
end
