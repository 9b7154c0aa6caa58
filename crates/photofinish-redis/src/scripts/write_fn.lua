-- One write, atomically: `apply_write(KEYS, ARGV)` with the keys and arguments of
-- `WriteCall` in scripts/write.rs. Used alone (write.lua) and under an idempotency key
-- (keyed.lua).
local function apply_write(KEYS, ARGV)
  local K_CFG, K_SEQ, K_PERIODS, K_CLOCK, K_Z, K_M, K_META, K_D, K_EV, K_ANN = unpack(KEYS)
  local CONFIG, PERIOD_ID, PERIOD_RECORD, MEMBER, OP, VALUE, STAMPED, REACHED, CLAMP, DESC,
        METADATA, PERIOD_PREFIX, MAX_SCORE, REACHED_C, EXPIRY_MS,
        MIN_RULE, MAX_RULE, MAX_INCREMENT, MAX_MEMBERS, OVER_BUDGET, EMIT, PREVIOUS = unpack(ARGV)

  local bad = check_config(K_CFG, CONFIG)
  if bad then return {bad} end
  local desc = DESC == TRUE
  local max = tonumber(MAX_SCORE)

  -- Retention: a period this board has not opened must lie inside the window counted back
  -- from the newest period it has.
  local opening = redis.call('HEXISTS', K_PERIODS, PERIOD_ID) == 0
  local newest = nil
  if opening then
    for _, id in ipairs(redis.call('HKEYS', K_PERIODS)) do
      if newest == nil or id > newest then newest = id end
    end
    if newest and PERIOD_ID < newest then
      local floor = string.match(redis.call('HGET', K_PERIODS, newest), '(%S+)$')
      if PERIOD_ID < floor then return {S_PERIOD_NOT_RETAINED} end
    end
  end

  local rec = redis.call('HGET', K_M, MEMBER)
  local old_s, old_tb, old
  if rec then
    old_s, old_tb = parse_record(rec)
    old = tonumber(old_s)
  end
  local v = tonumber(VALUE)
  local new
  if OP == 'incr' then
    new = (old or 0) + v
    if new > max or new < -max then return {S_SCORE_OVERFLOW, old_s or '0'} end
  elseif OP == 'set' or old == nil then
    new = v
  elseif (desc and v > old) or (not desc and v < old) then
    new = v
  else
    new = old
  end
  -- The board's score rules and the memory budget (ScoreRules::check in Rust words the
  -- refusal from what this returns).
  if MIN_RULE ~= '' or MAX_RULE ~= '' or MAX_INCREMENT ~= '' or MAX_MEMBERS ~= '' then
    local members = redis.call('HLEN', K_M)
    local broken = OP == 'incr' and MAX_INCREMENT ~= '' and math.abs(v) > tonumber(MAX_INCREMENT)
    if new ~= old then
      broken = broken or (MIN_RULE ~= '' and new < tonumber(MIN_RULE))
        or (MAX_RULE ~= '' and new > tonumber(MAX_RULE))
    end
    broken = broken or (old == nil and MAX_MEMBERS ~= '' and members >= tonumber(MAX_MEMBERS))
    if broken then return {S_RULE_BROKEN, old_s or '', string.format('%.0f', new), members} end
  end
  if old == nil and OVER_BUDGET == TRUE then return {S_OVER_BUDGET} end
  local changed = old == nil or new ~= old
  local new_s = old_s
  local tb = old_tb
  if changed then
    new_s = string.format('%.0f', new)
    local seq = redis.call('INCR', K_SEQ)
    if seq > MAX_SEQ then
      redis.call('DECR', K_SEQ) -- nothing else has changed yet
      return {S_RANKING_FULL}
    end
    local reached, reached_c = REACHED, REACHED_C
    if STAMPED == TRUE then
      -- Stamped writes never go back in time on one board, whichever server stamped them.
      local last = redis.call('GET', K_CLOCK)
      if last and last > reached and last <= CLAMP then
        reached, reached_c = last, complement(last)
      end
      if not last or reached > last then redis.call('SET', K_CLOCK, reached) end
    end
    tb = tiebreak(reached, reached_c, seq, desc)
    if rec then
      redis.call('ZREM', K_Z, old_tb .. ':' .. MEMBER)
      dense_remove(K_Z, K_D, old_s)
    end
    redis.call('ZADD', K_Z, new_s, tb .. ':' .. MEMBER)
    dense_add(K_D, new_s)
    redis.call('HSET', K_M, MEMBER, new_s .. ' ' .. tb)
  end
  if METADATA ~= '' then redis.call('HSET', K_META, MEMBER, METADATA) end
  -- Retention by expiry: the period's keys go when the period leaves the last `retention`.
  if EXPIRY_MS ~= NO_EXPIRY then
    if changed then
      redis.call('PEXPIREAT', K_Z, EXPIRY_MS)
      redis.call('PEXPIREAT', K_M, EXPIRY_MS)
      redis.call('PEXPIREAT', K_D, EXPIRY_MS)
    end
    if METADATA ~= '' then redis.call('PEXPIREAT', K_META, EXPIRY_MS) end
  end

  if opening then
    redis.call('HSET', K_PERIODS, PERIOD_ID, PERIOD_RECORD)
    if newest == nil or PERIOD_ID > newest then
      -- The newest period moved: drop the periods that left the retention window.
      local floor = string.match(PERIOD_RECORD, '(%S+)$')
      for _, id in ipairs(redis.call('HKEYS', K_PERIODS)) do
        if id < floor then
          for _, s in ipairs(PERIOD_KEYS) do
            redis.call('UNLINK', PERIOD_PREFIX .. id .. ':' .. s)
          end
          redis.call('HDEL', K_PERIODS, id)
        end
      end
    end
  end
  local pos = position(K_Z, tb .. ':' .. MEMBER, desc)
  if changed and EMIT == TRUE then
    announce(K_EV, K_ANN, PERIOD_ID, PREVIOUS)
    local reached = string.sub(tb, 1, 18)
    if desc then reached = complement(reached) end
    emit(K_EV, 'k', 'score', 'm', MEMBER, 's', new_s, 'r', pos + 1, 'a', reached, 'p', PERIOD_ID)
  end
  return {S_OK, new_s, pos + 1, tb, changed and 1 or 0}
end
