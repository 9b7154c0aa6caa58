-- Reads of one board-period. Keys and arguments: `ReadCall` in scripts/read.rs. After the
-- common arguments come the mode's:
--   member: member name, its hash H and H32
--   page:   offset, limit
--   around: member name, H, H32, before, after
--   query:  count m, then m times member name, H, H32
--   rankof: a score as (hi, lo)
--   tiers:  count k of ranks, the k ranks, count j of percentages (10^-4 %), the j units
-- Answers {'ok', total, first position, first rank, then per row: ranking member, score,
-- metadata or false}; for `member` the one row is the member's. `query` answers
-- {'ok', total, then per member found: its index among those asked (from 1), position,
-- rank, ranking member, score, metadata or false}; `rankof` {'ok', total, rank}; `tiers`
-- {'ok', total, then per threshold (ranks, then percentages): ordinal rank, ranking member
-- and score, or false and false past the end}.
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
if MODE == 'rankof' then
  local hi, lo = tonumber(ARGV[8]), tonumber(ARGV[9])
  local d = i64_double(hi, lo)
  local b = better(P, hi, lo, d, desc)
  local rank = 1 + b
  if STYLE == 'ordinal' then rank = rank + group_size(P, hi, lo, d)
  elseif STYLE == 'dense' then rank = rank - ties_better(P, hi, lo, desc) end
  out[3] = rank
  return out
end
if MODE == 'tiers' then
  local asked = {}
  local k = tonumber(ARGV[8])
  for i = 1, k do asked[#asked + 1] = tonumber(ARGV[8 + i]) end
  local j = tonumber(ARGV[9 + k])
  -- max(1, ceil(total * u / FULL)) in steps exact in doubles (`Percent::rank` in Rust).
  local q, r = math.floor(total / FULL_PERCENT_UNITS), total % FULL_PERCENT_UNITS
  for i = 1, j do
    local u = tonumber(ARGV[9 + k + i])
    local rank = q * u + math.floor((r * u + FULL_PERCENT_UNITS - 1) / FULL_PERCENT_UNITS)
    asked[#asked + 1] = math.max(rank, 1)
  end
  for _, rank in ipairs(asked) do
    local got
    if rank <= total then
      if desc then got = redis.call('ZREVRANGE', K_R, rank - 1, rank - 1, 'WITHSCORES')
      else got = redis.call('ZRANGE', K_R, rank - 1, rank - 1, 'WITHSCORES') end
    end
    out[#out + 1] = rank
    if got and got[1] then
      out[#out + 1] = got[1]
      out[#out + 1] = got[2]
    else
      out[#out + 1] = false
      out[#out + 1] = false
    end
  end
  return out
end
if MODE == 'query' then
  if not rec then return out end
  local L, S = record_buckets(rec)
  local m = tonumber(ARGV[8])
  for i = 1, m do
    local at = 8 + (i - 1) * 3
    local name, h, h32 = ARGV[at + 1], ARGV[at + 2], ARGV[at + 3]
    local bkey = P .. 'b:' .. bucket_of(tonumber(h32), L, S)
    local _, prefix, score = bucket_find(P, bkey, h, name)
    if prefix then
      local pos = position(P, prefix .. name, desc)
      local hi, lo = entry_score(prefix, score)
      out[#out + 1] = i
      out[#out + 1] = pos
      out[#out + 1] = rank_of(P, pos, hi, lo, STYLE, desc)
      out[#out + 1] = prefix .. name
      out[#out + 1] = score
      out[#out + 1] = redis.call('HGET', P .. 'meta', name)
    end
  end
  return out
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
