-- Reads of one board-period. Keys and arguments: `ReadCall` in scripts/read.rs. After the
-- common arguments come the mode's:
--   member: member name, its hash H and H32
--   page:   offset, limit
--   around: member name, H, H32, before, after
-- Answers {'ok', total, first position, first rank, then per row: ranking member, score,
-- metadata or false}; for `member` the one row is the member's.
local K_CFG, K_PERIODS = unpack(KEYS)
local CONFIG, PERIOD_ID, IS_CURRENT, P, DESC, STYLE, MODE = unpack(ARGV)

local bad = check_config(K_CFG, CONFIG)
if bad then return {bad} end
local rec = redis.call('HGET', K_PERIODS, PERIOD_ID)
if not rec and IS_CURRENT ~= TRUE then return {S_PERIOD_NOT_FOUND} end
local desc = DESC == TRUE
local K_R = P .. 'r'
local total = redis.call('ZCARD', K_R)

-- The name inside a ranking member with ZSET score text `score`.
local function name_of(member, score)
  if is_big(tonumber(score)) then return string.sub(member, KEY_LEN + TIEBREAK_LEN + 1) end
  return string.sub(member, TIEBREAK_LEN + 1)
end

local out = {S_OK, total}
local function rows(start, count)
  if count <= 0 or start >= total then
    out[3], out[4] = start, 0
    return out
  end
  local stop = start + count - 1
  local got
  if desc then got = redis.call('ZREVRANGE', K_R, start, stop, 'WITHSCORES')
  else got = redis.call('ZRANGE', K_R, start, stop, 'WITHSCORES') end
  out[3] = start
  local name = name_of(got[1], got[2])
  local hi, lo = entry_score(string.sub(got[1], 1, #got[1] - #name), got[2])
  out[4] = rank_of(P, start, hi, lo, STYLE, desc)
  for i = 1, #got, 2 do
    out[#out + 1] = got[i]
    out[#out + 1] = got[i + 1]
    out[#out + 1] = redis.call('HGET', P .. 'meta', name_of(got[i], got[i + 1]))
  end
  return out
end

if MODE == 'page' then
  return rows(tonumber(ARGV[8]), tonumber(ARGV[9]))
end
local MEMBER, H, H32 = ARGV[8], ARGV[9], ARGV[10]
if not rec then return {S_MEMBER_NOT_FOUND} end
local bkey = P .. 'b:' .. bucket_of(tonumber(H32), record_buckets(rec))
local _, prefix, score = bucket_find(P, bkey, H, MEMBER)
if not prefix then return {S_MEMBER_NOT_FOUND} end
local pos = position(P, prefix .. MEMBER, desc)
if MODE == 'member' then
  local hi, lo = entry_score(prefix, score)
  out[3] = pos
  out[4] = rank_of(P, pos, hi, lo, STYLE, desc)
  out[5] = prefix .. MEMBER
  out[6] = score
  out[7] = redis.call('HGET', P .. 'meta', MEMBER)
  return out
end
-- around: the window keeps its size at the top and bottom where the ranking has entries.
local before, after = tonumber(ARGV[11]), tonumber(ARGV[12])
local size = before + after + 1
local start = math.max(pos - before, 0)
start = math.min(start, math.max(total - size, 0))
return rows(start, size)
