local held = redis.call('GET', KEYS[1])
if ARGV[1] == 'take' and not held then
  local token = ARGV[3]
  if token == '' then token = redis.call('INCR', KEYS[2]) end
  redis.call('SET', KEYS[1], token, 'PX', ARGV[2])
  return ARGV[3] == '' and token or 1
end
if held ~= ARGV[3] then return 0 end
if ARGV[1] == 'release' then redis.call('DEL', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
