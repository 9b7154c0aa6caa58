-- The webhook's claim on a board's period close (docs/redis-layout.md, "What spans boards"): the
-- node that holds it posts; it holds it for a while and renews it while it works.
-- KEYS: 1 the claim. ARGV: 1 'take' | 'renew', 2 the claimant's token, 3 hold (ms).
-- 1 if the caller holds the claim afterwards (taken, or its own renewed), else 0; 'renew'
-- never takes a claim nobody holds (the caller's expired: someone else may be posting).
local held = redis.call('GET', KEYS[1])
if held == ARGV[2] then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 1
end
if held or ARGV[1] == 'renew' then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
