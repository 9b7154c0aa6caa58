-- Removes a member from one board-period: `apply_remove(KEYS, ARGV)` with the keys and
-- arguments of `PeriodTarget`, then MEMBER H H32 (scripts/read.rs). Used alone (remove.lua)
-- and under an idempotency key (keyed.lua).
local function apply_remove(KEYS, ARGV)
  local K_CFG, K_PERIODS, K_EV = unpack(KEYS)
  local CONFIG, PERIOD_ID, IS_CURRENT, P, MEMBER, H, H32 = unpack(ARGV)

  local bad = check_config(K_CFG, CONFIG)
  if bad then return {bad} end
  local rec = redis.call('HGET', K_PERIODS, PERIOD_ID)
  if not rec then
    if IS_CURRENT == TRUE then return {S_MEMBER_NOT_FOUND} end
    return {S_PERIOD_NOT_FOUND}
  end
  local bkey = P .. 'b:' .. bucket_of(tonumber(H32), record_buckets(rec))
  local field, prefix, score = bucket_find(P, bkey, H, MEMBER)
  if not prefix then return {S_MEMBER_NOT_FOUND} end
  local hi, lo = entry_score(prefix, score)
  entry_remove(P, hi, lo, tonumber(score), prefix .. MEMBER)
  bucket_delete(bkey, H, field)
  redis.call('HDEL', P .. 'meta', MEMBER)
  if IS_CURRENT == TRUE and watched(K_EV) then
    emit(K_EV, 'k', 'remove', 'm', MEMBER, 'p', PERIOD_ID)
  end
  return {S_OK}
end
