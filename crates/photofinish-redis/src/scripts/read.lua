-- Reads of one board-period. Keys and arguments: `ReadCall` in scripts/read.rs. After the
-- common arguments come the mode's:
--   member: member name
--   page:   offset, limit
--   around: member name, before, after
-- Answers {'ok', total, first position, first rank, then per row: encoded member, score,
-- metadata or false}; for `member` the one row is the member's.
local K_CFG, K_PERIODS, K_Z, K_M, K_META, K_D = unpack(KEYS)
local CONFIG, PERIOD_ID, IS_CURRENT, DESC, STYLE, MODE = unpack(ARGV)

local bad = check_config(K_CFG, CONFIG)
if bad then return {bad} end
if not period_exists(K_PERIODS, PERIOD_ID, IS_CURRENT) then return {S_PERIOD_NOT_FOUND} end
local desc = DESC == TRUE
local total = redis.call('ZCARD', K_Z)

local function member_position(name)
  local rec = redis.call('HGET', K_M, name)
  if not rec then return nil end
  local score, tb = parse_record(rec)
  return position(K_Z, tb .. ':' .. name, desc), score, tb
end

local out = {S_OK, total}
local function rows(start, count)
  if count <= 0 or start >= total then
    out[3], out[4] = start, 0
    return out
  end
  local stop = start + count - 1
  local got
  if desc then got = redis.call('ZREVRANGE', K_Z, start, stop, 'WITHSCORES')
  else got = redis.call('ZRANGE', K_Z, start, stop, 'WITHSCORES') end
  out[3] = start
  out[4] = rank_of(K_Z, K_D, start, got[2], STYLE, desc)
  for i = 1, #got, 2 do
    out[#out + 1] = got[i]
    out[#out + 1] = got[i + 1]
    out[#out + 1] = redis.call('HGET', K_META, string.sub(got[i], NAME_START))
  end
  return out
end

if MODE == 'page' then
  return rows(tonumber(ARGV[7]), tonumber(ARGV[8]))
end
local member = ARGV[7]
local pos, score, tb = member_position(member)
if pos == nil then return {S_MEMBER_NOT_FOUND} end
if MODE == 'member' then
  out[3] = pos
  out[4] = rank_of(K_Z, K_D, pos, score, STYLE, desc)
  out[5] = tb .. ':' .. member
  out[6] = score
  out[7] = redis.call('HGET', K_META, member)
  return out
end
-- around: the window keeps its size at the top and bottom where the ranking has entries.
local before, after = tonumber(ARGV[8]), tonumber(ARGV[9])
local size = before + after + 1
local start = math.max(pos - before, 0)
start = math.min(start, math.max(total - size, 0))
return rows(start, size)
