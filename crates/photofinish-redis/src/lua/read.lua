-- Reads of one board-period. KEYS: cfg periods z m meta d.
-- ARGV: config, period id, current (1/0), desc (1/0), style, mode, then by mode:
--   member: member name
--   page:   offset, limit
--   around: member name, before, after
-- Answers {'ok', total, first position, first rank, then per row: encoded member, score,
-- metadata or false}; for `member` the one row is the member's.
local bad = check_config(KEYS[1], ARGV[1])
if bad then return {bad} end
if ARGV[3] ~= '1' and redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then
  return {'period_not_found'}
end
local z, m, meta, d = KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local desc, style, mode = ARGV[4] == '1', ARGV[5], ARGV[6]
local total = redis.call('ZCARD', z)

local function member_position(name)
  local rec = redis.call('HGET', m, name)
  if not rec then return nil end
  local score, tb = string.match(rec, '^(%S+) (%d+)$')
  return position(z, tb .. ':' .. name, desc), score, tb
end

local out = {'ok', total}
local function rows(start, count)
  if count <= 0 or start >= total then
    out[3], out[4] = start, 0
    return out
  end
  local stop = start + count - 1
  local got
  if desc then got = redis.call('ZREVRANGE', z, start, stop, 'WITHSCORES')
  else got = redis.call('ZRANGE', z, start, stop, 'WITHSCORES') end
  out[3] = start
  out[4] = rank_of(z, d, start, got[2], style, desc)
  for i = 1, #got, 2 do
    out[#out + 1] = got[i]
    out[#out + 1] = got[i + 1]
    out[#out + 1] = redis.call('HGET', meta, string.sub(got[i], 35))
  end
  return out
end

if mode == 'page' then
  return rows(tonumber(ARGV[7]), tonumber(ARGV[8]))
end
local pos, score, tb = member_position(ARGV[7])
if pos == nil then return {'member_not_found'} end
if mode == 'member' then
  out[3] = pos
  out[4] = rank_of(z, d, pos, score, style, desc)
  out[5] = tb .. ':' .. ARGV[7]
  out[6] = score
  out[7] = redis.call('HGET', meta, ARGV[7])
  return out
end
-- around: the window keeps its size at the top and bottom where the ranking has entries.
local before, after = tonumber(ARGV[8]), tonumber(ARGV[9])
local size = before + after + 1
local start = math.max(pos - before, 0)
start = math.min(start, math.max(total - size, 0))
return rows(start, size)
