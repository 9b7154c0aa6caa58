-- Lists a board in the namespace's registry before its create is appended, unless that
-- would pass the board limit (docs/redis-layout.md, "What spans boards").
-- KEYS: 1 the registry (a set of names). ARGV: 1 the board, 2 the limit (-1: none).
-- 1 if the name is listed (now or already), 0 if the limit is reached.
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
local limit = tonumber(ARGV[2])
if limit >= 0 and redis.call('SCARD', KEYS[1]) >= limit then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
return 1
