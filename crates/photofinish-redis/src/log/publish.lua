if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'lease_lost' end
local n = ARGV[2]
local at = redis.call('XRANGE', KEYS[2], '0-' .. n, '0-' .. n)[1]
local kept = false
for i = 1, at and #at[2] or 0, 2 do
  if at[2][i] == 'c' and at[2][i + 1] == ARGV[3] then kept = true end
end
if not kept then return 'entry_gone' end
for i = 0, ARGV[5] - 1 do
  if redis.call('EXISTS', ARGV[8] .. i) == 0 then return 'chunks_gone' end
end
local old = redis.call('HMGET', KEYS[4], 'prefix', 'chunks')
for i = 0, ARGV[5] - 1 do
  redis.call('PERSIST', ARGV[8] .. i)
end
if old[1] and old[1] ~= ARGV[8] then
  for i = 0, tonumber(old[2]) - 1 do
    redis.call('UNLINK', old[1] .. i)
  end
end
redis.call('HSET', KEYS[4], 'n', n, 'c', ARGV[3], 'version', ARGV[4], 'token', ARGV[1],
  'chunks', ARGV[5], 'bytes', ARGV[6], 'crc', ARGV[7], 'prefix', ARGV[8])
local below = math.min(tonumber(n) + 1, tonumber(ARGV[9]))
if below > 1 then
  redis.call('XTRIM', KEYS[2], 'MINID', string.format('0-%.0f', below))
  local gone = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', '(' .. string.format('%.0f', below))
  for _, name in ipairs(gone) do
    local id, chunks = string.match(name, '^imp(%d+)%.(%d+)$')
    if id then
      for i = 0, tonumber(chunks) - 1 do
        redis.call('UNLINK', ARGV[10] .. ':' .. id .. ':' .. i)
      end
    end
    redis.call('ZREM', KEYS[5], name)
  end
end
return 'ok'
