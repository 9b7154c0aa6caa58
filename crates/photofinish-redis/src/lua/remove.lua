-- Removes a member from one board-period. KEYS: cfg periods z m meta d.
-- ARGV: config, period id, current (1/0), member.
local bad = check_config(KEYS[1], ARGV[1])
if bad then return {bad} end
if ARGV[3] ~= '1' and redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then
  return {'period_not_found'}
end
local member = ARGV[4]
local rec = redis.call('HGET', KEYS[4], member)
if not rec then return {'member_not_found'} end
local score, tb = string.match(rec, '^(%S+) (%d+)$')
redis.call('ZREM', KEYS[3], tb .. ':' .. member)
redis.call('HDEL', KEYS[4], member)
redis.call('HDEL', KEYS[5], member)
dense_remove(KEYS[3], KEYS[6], score)
return {'ok'}
