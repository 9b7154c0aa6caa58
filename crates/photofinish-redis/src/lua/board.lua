-- Board-level operations. KEYS: cfg periods seq clock. ARGV: op, then by op:
--   create: config JSON           → {'created'|'same'|'conflict', stored config}
--   drop:   period key prefix     → {'ok'} or {'no_board'}
--   periods: config, prefix       → {'ok', id, record, members, id, record, members, …}
--   count:  config, prefix, id    → {'ok', members of that period}
local op = ARGV[1]
if op == 'create' then
  local cfg = redis.call('GET', KEYS[1])
  if not cfg then
    redis.call('SET', KEYS[1], ARGV[2])
    return {'created', ARGV[2]}
  end
  if cfg == ARGV[2] then return {'same', cfg} end
  return {'conflict', cfg}
end
if op == 'drop' then
  if redis.call('EXISTS', KEYS[1]) == 0 then return {'no_board'} end
  for _, id in ipairs(redis.call('HKEYS', KEYS[2])) do
    for _, s in ipairs(PERIOD_KEYS) do redis.call('UNLINK', ARGV[2] .. id .. ':' .. s) end
  end
  redis.call('UNLINK', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
  return {'ok'}
end
local bad = check_config(KEYS[1], ARGV[2])
if bad then return {bad} end
if op == 'periods' then
  local out = {'ok'}
  local all = redis.call('HGETALL', KEYS[2])
  for i = 1, #all, 2 do
    out[#out + 1] = all[i]
    out[#out + 1] = all[i + 1]
    out[#out + 1] = redis.call('ZCARD', ARGV[3] .. all[i] .. ':z')
  end
  return out
end
-- count
return {'ok', redis.call('ZCARD', ARGV[3] .. ARGV[4] .. ':z')}
