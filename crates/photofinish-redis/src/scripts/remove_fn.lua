-- Removes a member from one board-period: `apply_remove(KEYS, ARGV)` with the keys and
-- arguments of `PeriodTarget` and the member (scripts/read.rs). Used alone (remove.lua) and
-- under an idempotency key (keyed.lua).
local function apply_remove(KEYS, ARGV)
  local K_CFG, K_PERIODS, K_Z, K_M, K_META, K_D, K_EV = unpack(KEYS)
  local CONFIG, PERIOD_ID, IS_CURRENT, MEMBER = unpack(ARGV)

  local bad = check_config(K_CFG, CONFIG)
  if bad then return {bad} end
  if not period_exists(K_PERIODS, PERIOD_ID, IS_CURRENT) then return {S_PERIOD_NOT_FOUND} end
  local rec = redis.call('HGET', K_M, MEMBER)
  if not rec then return {S_MEMBER_NOT_FOUND} end
  local score, tb = parse_record(rec)
  redis.call('ZREM', K_Z, tb .. ':' .. MEMBER)
  redis.call('HDEL', K_M, MEMBER)
  redis.call('HDEL', K_META, MEMBER)
  dense_remove(K_Z, K_D, score)
  if IS_CURRENT == TRUE then emit(K_EV, 'k', 'remove', 'm', MEMBER, 'p', PERIOD_ID) end
  return {S_OK}
end
