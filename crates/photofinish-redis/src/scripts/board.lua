-- Board-level operations. Keys and arguments: `BoardCall` in scripts/board.rs.
--   create:  config JSON          → {'created'|'same'|'conflict', stored config}
--   drop:    period key prefix    → {'ok'} or {'no_board'}
--   announce: config, period id, previous id → {'ok'}: the period's reset event, once
--   readers: (nothing)            → {'ok'}: this node has readers of the board's events;
--            they are written for READERS_TTL_MS more (a `gap` entry first if they were
--            not), or {'no_board'}
--   patch:   expected config, new config → {'ok'}, {'no_board'} or {'config_changed'}
--   retain:  config, prefix, then per period: id, record, time to live in ms ('0' = never)
--            → {'ok'}: after a retention change, each period that still exists gets its
--            record (floor) and its keys' expiry under the new retention
--   periods: config, prefix       → {'ok', id, record, members, id, record, members, …}
--   count:   config, prefix, id   → {'ok', members of that period}
--   hook_advance: config, cursor  → {'ok'}: the webhook cursor moves to cursor unless it is
--            there or later (nothing on a board without a webhook); the claim ends
--   hook_claim: config, token, period end, hold ms, renew ('1': extend the claim token
--            holds) → {'ok'}, or {'held'}: another token holds it, or the cursor reached
--            the period's end (it was posted)
--   import:  config, prefix, period id, staging prefix, staging record key, time to live ms
--            ('0' = never) → {'ok', entries}: an import's staged period (load.lua) is
--            renamed into place, or {'not_empty', entries held} / {'no_stage'}: nothing
--            changed
--   import_abort: staging prefix, staging record key, period id → {'ok'}: the staged
--            keys are removed
local K_CFG, K_PERIODS, K_SEQ, K_CLOCK, K_EV, K_ANN, K_HOOK, K_HOOK_CLAIM = unpack(KEYS)
local OP = ARGV[1]
if OP == 'create' then
  local CONFIG = ARGV[2]
  local cfg = redis.call('GET', K_CFG)
  if not cfg then
    redis.call('SET', K_CFG, CONFIG)
    redis.call('PERSIST', K_EV) -- a stream left by a deletion a moment ago goes on
    return {S_CREATED, CONFIG}
  end
  if cfg == CONFIG then return {S_SAME, cfg} end
  return {S_CONFLICT, cfg}
end
if OP == 'drop' then
  local PERIOD_PREFIX = ARGV[2]
  if redis.call('EXISTS', K_CFG) == 0 then return {S_NO_BOARD} end
  local all = redis.call('HGETALL', K_PERIODS)
  for i = 1, #all, 2 do
    for _, keys in ipairs(period_keys(PERIOD_PREFIX .. all[i] .. ':', all[i + 1])) do
      redis.call('UNLINK', unpack(keys))
    end
  end
  redis.call('UNLINK', K_CFG, K_PERIODS, K_SEQ, K_CLOCK, K_ANN, K_HOOK, K_HOOK_CLAIM)
  -- Readers on every node learn the board is gone; the stream itself goes a minute later,
  -- and a board created again meanwhile goes on numbering after it.
  emit(K_EV, 'k', 'deleted')
  redis.call('PEXPIRE', K_EV, EVENTS_DELETED_TTL_MS)
  return {S_OK}
end
if OP == 'announce' then
  -- A period began: its reset event, unless a write or another node sent it already.
  local CONFIG, PERIOD_ID, PREVIOUS = ARGV[2], ARGV[3], ARGV[4]
  local bad = check_config(K_CFG, CONFIG)
  if bad then return {bad} end
  announce(K_EV, K_ANN, PERIOD_ID, PREVIOUS)
  return {S_OK}
end
if OP == 'readers' then
  if redis.call('EXISTS', K_CFG) == 0 then return {S_NO_BOARD} end
  if not redis.call('SET', readers_key(K_EV), '1', 'PX', READERS_TTL_MS, 'GET') then
    emit(K_EV, 'k', 'gap')
  end
  return {S_OK}
end
if OP == 'patch' then
  local EXPECTED, CONFIG = ARGV[2], ARGV[3]
  local bad = check_config(K_CFG, EXPECTED)
  if bad then return {bad} end
  redis.call('SET', K_CFG, CONFIG)
  -- A webhook removed forgets its cursor: set again, it starts from its own first period.
  if not string.find(CONFIG, '"webhook":', 1, true) then
    redis.call('UNLINK', K_HOOK, K_HOOK_CLAIM)
  end
  return {S_OK}
end
if OP == 'hook_advance' then
  local CONFIG, CURSOR = ARGV[2], ARGV[3]
  local bad = check_config(K_CFG, CONFIG)
  if bad then return {bad} end
  if string.find(CONFIG, '"webhook":', 1, true) then
    local now = redis.call('GET', K_HOOK)
    if not now or tonumber(now) < tonumber(CURSOR) then redis.call('SET', K_HOOK, CURSOR) end
  end
  redis.call('UNLINK', K_HOOK_CLAIM)
  return {S_OK}
end
if OP == 'hook_claim' then
  local CONFIG, TOKEN, UNTIL, HOLD_MS, RENEW = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
  local bad = check_config(K_CFG, CONFIG)
  if bad then return {bad} end
  local cursor = redis.call('GET', K_HOOK)
  if cursor and tonumber(cursor) >= tonumber(UNTIL) then return {S_HELD} end
  local holder = redis.call('GET', K_HOOK_CLAIM)
  if holder and holder ~= TOKEN then return {S_HELD} end
  if RENEW == TRUE and holder ~= TOKEN then return {S_HELD} end
  redis.call('SET', K_HOOK_CLAIM, TOKEN, 'PX', HOLD_MS)
  return {S_OK}
end
if OP == 'import_abort' then
  local STAGE, STAGE_REC, PERIOD_ID = ARGV[2], ARGV[3], ARGV[4]
  local rec = redis.call('HGET', STAGE_REC, PERIOD_ID)
  if rec then
    for _, keys in ipairs(period_keys(STAGE, rec)) do redis.call('UNLINK', unpack(keys)) end
  end
  redis.call('UNLINK', STAGE_REC)
  return {S_OK}
end
local CONFIG, PERIOD_PREFIX = ARGV[2], ARGV[3]
local bad = check_config(K_CFG, CONFIG)
if bad then return {bad} end
if OP == 'import' then
  local PERIOD_ID, STAGE, STAGE_REC = ARGV[4], ARGV[5], ARGV[6]
  local EXPIRY = deadline(ARGV[7])
  local P = PERIOD_PREFIX .. PERIOD_ID .. ':'
  local held = redis.call('ZCARD', P .. 'r')
  if held > 0 then return {S_NOT_EMPTY, held} end
  local rec = redis.call('HGET', STAGE_REC, PERIOD_ID)
  if not rec then return {S_NO_STAGE} end
  local old = redis.call('HGET', K_PERIODS, PERIOD_ID)
  if old then
    for _, keys in ipairs(period_keys(P, old)) do redis.call('UNLINK', unpack(keys)) end
  end
  local entries = redis.call('ZCARD', STAGE .. 'r')
  for _, keys in ipairs(period_keys(STAGE, rec)) do
    for _, key in ipairs(keys) do
      if redis.call('EXISTS', key) == 1 then
        local to = P .. string.sub(key, #STAGE + 1)
        redis.call('RENAME', key, to)
        if EXPIRY then redis.call('PEXPIREAT', to, EXPIRY)
        else redis.call('PERSIST', to) end
      end
    end
  end
  redis.call('HSET', K_PERIODS, PERIOD_ID, rec)
  redis.call('UNLINK', STAGE_REC)
  return {S_OK, entries}
end
if OP == 'retain' then
  for i = 4, #ARGV, 3 do
    local id, record, expiry = ARGV[i], ARGV[i + 1], deadline(ARGV[i + 2])
    local old = redis.call('HGET', K_PERIODS, id)
    if old then
      local rec = record_with_buckets(record, record_buckets(old))
      redis.call('HSET', K_PERIODS, id, rec)
      for _, keys in ipairs(period_keys(PERIOD_PREFIX .. id .. ':', rec)) do
        for _, key in ipairs(keys) do
          if expiry then redis.call('PEXPIREAT', key, expiry)
          else redis.call('PERSIST', key) end
        end
      end
    end
  end
  return {S_OK}
end
if OP == 'periods' then
  local out = {S_OK}
  local all = redis.call('HGETALL', K_PERIODS)
  for i = 1, #all, 2 do
    out[#out + 1] = all[i]
    out[#out + 1] = all[i + 1]
    out[#out + 1] = redis.call('ZCARD', PERIOD_PREFIX .. all[i] .. ':r')
  end
  return out
end
-- count
return {S_OK, redis.call('ZCARD', PERIOD_PREFIX .. ARGV[4] .. ':r')}
