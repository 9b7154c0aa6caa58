-- Shared helpers, prepended to every Photofinish script (see docs/redis-layout.md).
-- Every key a script touches carries the board's hash tag, so a script runs on one slot.
local DIGIT_COMPLEMENT = {['0']='9',['1']='8',['2']='7',['3']='6',['4']='5',
                          ['5']='4',['6']='3',['7']='2',['8']='1',['9']='0'}

-- Each digit d of an all-digit string replaced by 9 - d.
local function complement(digits)
  return (string.gsub(digits, '%d', DIGIT_COMPLEMENT))
end

-- The 33-digit tie-break (18-digit reached_at, 15-digit sequence), digit-complemented on
-- desc boards so that ZREVRANGE lists equal scores earliest first. `reached18c` is the
-- complement of `reached18`, passed in so that the common path does no string rewriting.
local function tiebreak(reached18, reached18c, seq, desc)
  if desc then return reached18c .. string.format('%015d', 999999999999999 - seq) end
  return reached18 .. string.format('%015d', seq)
end

-- 0-based position of an encoded member in the board's order.
local function position(z, enc, desc)
  if desc then return redis.call('ZREVRANK', z, enc) end
  return redis.call('ZRANK', z, enc)
end

-- Entries (or distinct scores, with the distinct-score set) strictly better than `score`.
local function better(z, score, desc)
  if desc then return redis.call('ZCOUNT', z, '(' .. score, '+inf') end
  return redis.call('ZCOUNT', z, '-inf', '(' .. score)
end

-- 1-based rank of an entry at 0-based `pos` with score `score` in `style`.
local function rank_of(z, d, pos, score, style, desc)
  if style == 'competition' then return 1 + better(z, score, desc) end
  if style == 'dense' then return 1 + better(d, score, desc) end
  return pos + 1
end

-- The distinct-score set `d`: a ZSET whose members and scores are the scores held in `z`.
-- Call dense_add after adding an entry with `score` to z, dense_remove after removing one.
local function dense_add(d, score)
  redis.call('ZADD', d, score, score)
end
local function dense_remove(z, d, score)
  if redis.call('ZCOUNT', z, score, score) == 0 then redis.call('ZREM', d, score) end
end

-- The period suffixes of one board-period's keys.
local PERIOD_KEYS = {'z', 'm', 'meta', 'd'}

-- The board's config must be the one the server resolved the period with.
local function check_config(cfg_key, expected)
  local cfg = redis.call('GET', cfg_key)
  if not cfg then return 'no_board' end
  if cfg ~= expected then return 'config_changed' end
  return nil
end
