-- The snapshot lease (docs/redis-layout.md, "Snapshots, lease, trim").
-- KEYS: 1 lease, 2 fence counter. ARGV: 1 'take' | 'renew' | 'release', 2 TTL (ms),
-- 3 the holder's token (renew, release).
-- take: a fresh token (from 1) if nobody holds the lease, else 0; renew/release: 1 if the
-- caller still holds it (and it is renewed or released), else 0.
local held = redis.call('GET', KEYS[1])
if ARGV[1] == 'take' then
  if held then return 0 end
  local token = redis.call('INCR', KEYS[2])
  redis.call('SET', KEYS[1], token, 'PX', ARGV[2])
  return token
end
if held ~= ARGV[3] then return 0 end
if ARGV[1] == 'renew' then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
else
  redis.call('DEL', KEYS[1])
end
return 1
