-- Seed 000's tied (competition) rank: the rank of the first member with the same integer part.
local rank = 0
local score = redis.call('zscore', KEYS[1], KEYS[2])
if not(score) then
  score = 0
else
  score = math.floor(score)
  local first = redis.call('zrevrangebyscore', KEYS[1], score + 1, score, 'limit', 0, 1)
  rank = redis.call('zrevrank', KEYS[1], first[1])
end
return {score, rank}
