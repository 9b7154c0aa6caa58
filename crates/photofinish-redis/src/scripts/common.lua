-- Shared helpers, prepended to every Photofinish script (see docs/redis-layout.md).
-- Every key a script touches carries the board's hash tag, so a script runs on one slot.
-- The constants below are named the same in Rust (`scripts/mod.rs`, `layout.rs`).

-- Status words, the first element of every reply (`status` in scripts/mod.rs).
local S_OK = 'ok'
local S_NO_BOARD = 'no_board'
local S_CONFIG_CHANGED = 'config_changed'
local S_PERIOD_NOT_FOUND = 'period_not_found'
local S_MEMBER_NOT_FOUND = 'member_not_found'
local S_PERIOD_NOT_RETAINED = 'period_not_retained'
local S_SCORE_OVERFLOW = 'score_overflow'
local S_RANKING_FULL = 'ranking_full'
local S_CREATED = 'created'
local S_SAME = 'same'
local S_CONFLICT = 'conflict'
local S_RULE_BROKEN = 'rule_broken'
local S_OVER_BUDGET = 'over_budget'
local S_APPLIED = 'applied'
local S_REPLAYED = 'replayed'
local S_KEY_REUSED = 'key_reused'
local S_REFUSED = 'refused'

-- Flags passed as ARGV: '1' true, '0' false.
local TRUE = '1'

-- The largest sequence the 15-digit tie-break holds (MAX_SEQ in layout.rs).
local MAX_SEQ = 999999999999999
-- Where a member's name starts in its ZSET member: after the 33-digit tie-break and ':'
-- (TIEBREAK_DIGITS + 2, 1-based, in layout.rs).
local NAME_START = 35
-- A period's keys expire never when the expiry argument is this.
local NO_EXPIRY = '0'

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
  if desc then return reached18c .. string.format('%015d', MAX_SEQ - seq) end
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

-- A member's record in the `m` hash: "<score> <tie-break>".
local function parse_record(rec)
  return string.match(rec, '^(%S+) (%d+)$')
end

-- The period suffixes of one board-period's keys (PERIOD_PARTS in layout.rs).
local PERIOD_KEYS = {'z', 'm', 'meta', 'd'}

-- The board's config must be the one the server resolved the period with.
local function check_config(cfg_key, expected)
  local cfg = redis.call('GET', cfg_key)
  if not cfg then return S_NO_BOARD end
  if cfg ~= expected then return S_CONFIG_CHANGED end
  return nil
end

-- A period other than the current one must hold a ranking to be read.
local function period_exists(periods_key, pid, is_current)
  return is_current == TRUE or redis.call('HEXISTS', periods_key, pid) == 1
end

-- Live events (docs/SPEC.md §8): each board's stream, capped to at least EVENTS_KEPT entries,
-- ids 0-1, 0-2, … (the sequence part is the event id readers see). Fields: k (kind: score,
-- remove, reset, deleted), m member, s score, r rank, a reached_at µs, p period, q previous.
local EVENTS_KEPT = '10000'
-- How long a deleted board's stream outlives it, so every node's reader sees the end.
local EVENTS_DELETED_TTL_MS = 60000

local function emit(K_EV, ...)
  redis.call('XADD', K_EV, 'MAXLEN', '~', EVENTS_KEPT, '0-*', ...)
end

-- Sends the reset of PERIOD_ID once, whichever node or write gets here first: only when the
-- last period announced on the board is an earlier one (the first is only recorded).
local function announce(K_EV, K_ANN, PERIOD_ID, PREVIOUS)
  local last = redis.call('GET', K_ANN)
  if last and last >= PERIOD_ID then return end
  redis.call('SET', K_ANN, PERIOD_ID)
  if last then emit(K_EV, 'k', 'reset', 'p', PERIOD_ID, 'q', PREVIOUS) end
end
