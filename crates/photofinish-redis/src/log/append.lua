local function num(x) return string.format('%.0f', x) end
-- An entry's fields are always {'p', payload, 'c', check} (this script's XADD below).
local function check_of(entry) return entry[2][4] or '' end
local function missed_between(after, before)
  if after < 0 or after + 1 > before then return {} end
  if before - after > tonumber(ARGV[3]) then return 'behind' end
  return redis.call('XRANGE', KEYS[1], '0-' .. num(after + 1), '0-' .. num(before))
end
local head = redis.call('HMGET', KEYS[2], 'n', 'c', 'v')
local n = tonumber(head[1]) or 0
local c = head[2] or ''
local v = tonumber(head[3]) or 0 -- the newest format (a payload's first byte) in the log
local after = tonumber(ARGV[1])
local imports = tonumber(ARGV[7])
local count = #ARGV - 7 - imports
local seen = redis.call('ZSCORE', KEYS[3], ARGV[6])
if seen then
  local first = tonumber(seen)
  local last = first + count - 1
  local at = redis.call('XRANGE', KEYS[1], '0-' .. num(last), '0-' .. num(last))
  local lc = at[1] and check_of(at[1]) or ''
  return {'ok', num(first), num(last), lc, missed_between(after, first - 1)}
end
if after >= 0 then
  if after > n then return {'diverged'} end
  if after == n then
    if c ~= ARGV[2] then return {'diverged'} end
  elseif after > 0 then
    local at = redis.call('XRANGE', KEYS[1], '0-' .. num(after), '0-' .. num(after))
    if not at[1] or check_of(at[1]) ~= ARGV[2] then return {'diverged'} end
  elseif #redis.call('XRANGE', KEYS[1], '0-1', '0-1') == 0 then
    return {'diverged'} -- from the start, but the start is trimmed
  end
end
local skew = tonumber(ARGV[5])
if skew >= 0 then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  if math.abs(now - tonumber(ARGV[4])) > skew then return {'skew', num(now)} end
end
local chunk_keys = {}
for i = 8, 7 + imports do
  local id, chunks = string.match(ARGV[i], '^imp(%d+)%.(%d+)$')
  if not id then return {'import_gone', ARGV[i]} end
  for j = 0, tonumber(chunks) - 1 do
    local key = KEYS[4] .. ':' .. id .. ':' .. j
    if redis.call('EXISTS', key) == 0 then return {'import_gone', ARGV[i]} end
    chunk_keys[#chunk_keys + 1] = key
  end
end
local missed = missed_between(after, n)
local mine = count > 0 and string.byte(ARGV[8 + imports], 1) or 0
if count > 0 and v > mine then return {'newer', num(v)} end -- nothing after a newer format
local first = n + 1
for i = 8 + imports, #ARGV do
  n = n + 1
  c = string.sub(redis.sha1hex(c .. ARGV[i]), 1, 16)
  redis.call('XADD', KEYS[1], '0-' .. num(n), 'p', ARGV[i], 'c', c)
end
for _, key in ipairs(chunk_keys) do redis.call('PERSIST', key) end
for i = 8, 7 + imports do redis.call('ZADD', KEYS[5], n, ARGV[i]) end
if count > 0 then
  redis.call('HSET', KEYS[2], 'n', num(n), 'c', c, 'v', num(math.max(v, mine)))
  redis.call('ZADD', KEYS[3], first, ARGV[6])
  if redis.call('ZCARD', KEYS[3]) > 2000 then redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -1001) end
end
return {'ok', num(first), num(n), c, missed}
