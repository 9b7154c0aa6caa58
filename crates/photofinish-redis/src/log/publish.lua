-- Publishes a snapshot written as chunks (docs/redis-layout.md, "Snapshots, lease, trim"), if
-- the writer still holds the lease, the log still holds the entry it was taken at and every
-- chunk is still there (none expired or was evicted); then
-- deletes the previous snapshot's chunks and trims the log below it, keeping the last
-- entries for replay, and deletes the chunks of imports taken by entries trimmed (no node
-- can take them any more: one that has not loads the board from this snapshot).
-- KEYS: 1 lease, 2 log stream, 3 head hash (unused), 4 snapshot hash, 5 imports taken (sorted set
--       of "imp<id>.<chunks>", score = the entry).
-- ARGV: 1 token, 2 n, 3 check, 4 format version, 5 chunks, 6 bytes, 7 crc, 8 this
--       snapshot's chunk key prefix ("…:snap:<token>.<n>:"), 9 the lowest entry kept (the
--       publisher keeps the entries holding the last 10,000 commands),
--       10 the import counter's key (import chunks are "<it>:<id>:<i>").
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'lease_lost' end
local n = ARGV[2]
local at = redis.call('XRANGE', KEYS[2], '0-' .. n, '0-' .. n)
local kept = false
if at[1] then
  local fields = at[1][2]
  for i = 1, #fields, 2 do
    if fields[i] == 'c' and fields[i + 1] == ARGV[3] then kept = true end
  end
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
