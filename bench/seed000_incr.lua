-- Seed 000's composite-score increment: score = floor(old) + delta + (MAX - ts) * 1e-13.
-- KEYS[1] board, KEYS[2] member; ARGV[1] delta, ARGV[2] the time fraction.
local score = redis.call('zscore', KEYS[1], KEYS[2])
if not(score) then
  score = 0
end
score = math.floor(score) + tonumber(ARGV[1]) + tonumber(ARGV[2])
redis.call('zadd', KEYS[1], score, KEYS[2])
return 1
