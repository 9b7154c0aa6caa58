-- One write, atomically. KEYS: cfg seq periods clock z m meta d.
-- ARGV: config, period id, period record ("start end floor"), member, op, value,
-- stamped (1/0), reached_at (18 digits), clamp limit (18 digits), desc (1/0),
-- metadata ('' = keep), period key prefix, max |score|, reached_at complemented,
-- expiry of the period's keys (ms since the epoch; 0 = never).
local bad = check_config(KEYS[1], ARGV[1])
if bad then return {bad} end
local pid, member, op = ARGV[2], ARGV[4], ARGV[5]
local desc = ARGV[10] == '1'
local max = tonumber(ARGV[13])

-- Retention: a period this board has not opened must lie inside the window counted back
-- from the newest period it has.
local opening = redis.call('HEXISTS', KEYS[3], pid) == 0
local newest = nil
if opening then
  for _, id in ipairs(redis.call('HKEYS', KEYS[3])) do
    if newest == nil or id > newest then newest = id end
  end
  if newest and pid < newest then
    local floor = string.match(redis.call('HGET', KEYS[3], newest), '(%S+)$')
    if pid < floor then return {'period_not_retained'} end
  end
end

local rec = redis.call('HGET', KEYS[6], member)
local old_s, old_tb, old
if rec then
  old_s, old_tb = string.match(rec, '^(%S+) (%d+)$')
  old = tonumber(old_s)
end
local v = tonumber(ARGV[6])
local new
if op == 'incr' then
  new = (old or 0) + v
  if new > max or new < -max then return {'score_overflow', old_s or '0'} end
elseif op == 'set' or old == nil then
  new = v
elseif (desc and v > old) or (not desc and v < old) then
  new = v
else
  new = old
end
local changed = old == nil or new ~= old
local new_s = old_s
local tb = old_tb
if changed then
  new_s = string.format('%.0f', new)
  local seq = redis.call('INCR', KEYS[2])
  if seq > 999999999999999 then
    redis.call('DECR', KEYS[2]) -- nothing else has changed yet
    return {'ranking_full'}
  end
  local reached, reached_c = ARGV[8], ARGV[14]
  if ARGV[7] == '1' then
    -- Stamped writes never go back in time on one board, whichever server stamped them.
    local last = redis.call('GET', KEYS[4])
    if last and last > reached and last <= ARGV[9] then
      reached, reached_c = last, complement(last)
    end
    if not last or reached > last then redis.call('SET', KEYS[4], reached) end
  end
  tb = tiebreak(reached, reached_c, seq, desc)
  if rec then
    redis.call('ZREM', KEYS[5], old_tb .. ':' .. member)
    dense_remove(KEYS[5], KEYS[8], old_s)
  end
  redis.call('ZADD', KEYS[5], new_s, tb .. ':' .. member)
  dense_add(KEYS[8], new_s)
  redis.call('HSET', KEYS[6], member, new_s .. ' ' .. tb)
end
if ARGV[11] ~= '' then redis.call('HSET', KEYS[7], member, ARGV[11]) end
-- Retention by expiry: the period's keys go when the period leaves the last `retention`.
if ARGV[15] ~= '0' then
  if changed then
    redis.call('PEXPIREAT', KEYS[5], ARGV[15])
    redis.call('PEXPIREAT', KEYS[6], ARGV[15])
    redis.call('PEXPIREAT', KEYS[8], ARGV[15])
  end
  if ARGV[11] ~= '' then redis.call('PEXPIREAT', KEYS[7], ARGV[15]) end
end

if opening then
  redis.call('HSET', KEYS[3], pid, ARGV[3])
  if newest == nil or pid > newest then
    -- The newest period moved: drop the periods that left the retention window.
    local floor = string.match(ARGV[3], '(%S+)$')
    for _, id in ipairs(redis.call('HKEYS', KEYS[3])) do
      if id < floor then
        for _, s in ipairs(PERIOD_KEYS) do redis.call('UNLINK', ARGV[12] .. id .. ':' .. s) end
        redis.call('HDEL', KEYS[3], id)
      end
    end
  end
end
local pos = position(KEYS[5], tb .. ':' .. member, desc)
return {'ok', new_s, pos + 1, tb, changed and 1 or 0}
