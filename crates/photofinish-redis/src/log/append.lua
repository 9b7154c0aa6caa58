-- Appends a group of entries to a board's log (docs/redis-log.md, "Appending"): numbers
-- them after the head, chains each check from the one before, and answers the numbers, the
-- last check and the entries after the caller's `after` that it has not applied.
-- KEYS: 1 log stream, 2 head hash.
-- ARGV: 1 after (-1: none wanted), 2 most missed entries answered, 3 stamp (µs),
--       4 largest skew from Redis's TIME (µs; -1: not checked), 5… payloads.
local head = redis.call('HMGET', KEYS[2], 'n', 'c')
local n = tonumber(head[1]) or 0
local c = head[2] or ''
local skew = tonumber(ARGV[4])
if skew >= 0 then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  if math.abs(now - tonumber(ARGV[3])) > skew then
    return {'skew', string.format('%.0f', now)}
  end
end
local missed = false
local after = tonumber(ARGV[1])
if after >= 0 and after < n then
  if n - after <= tonumber(ARGV[2]) then
    missed = redis.call('XRANGE', KEYS[1], string.format('0-%.0f', after + 1), string.format('0-%.0f', n))
  else
    missed = 'behind'
  end
end
local first = n + 1
for i = 5, #ARGV do
  n = n + 1
  c = string.sub(redis.sha1hex(c .. ARGV[i]), 1, 16)
  redis.call('XADD', KEYS[1], string.format('0-%.0f', n), 'p', ARGV[i], 'c', c)
end
redis.call('HSET', KEYS[2], 'n', string.format('%.0f', n), 'c', c)
return {'ok', string.format('%.0f', first), string.format('%.0f', n), c, missed}
