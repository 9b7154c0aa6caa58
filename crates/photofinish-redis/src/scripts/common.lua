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
local S_HELD = 'held'
local S_NOT_EMPTY = 'not_empty'
local S_NO_STAGE = 'no_stage'

-- Flags passed as ARGV: '1' true, '0' false.
local TRUE = '1'

-- The largest sequence a ranking entry holds (MAX_SEQ in layout.rs): 54 bits of its order.
local MAX_SEQ = 999999999999999
-- 100 % in the units percentages are passed in (10^-4 %; FULL_PERCENT_UNITS in core's
-- query.rs).
local FULL_PERCENT_UNITS = 1000000
-- A period's keys expire never when the expiry argument is this.
local NO_EXPIRY = '0'

-- Every expiry a script is given is a time to live in ms ('0' = never); this turns it
-- into a deadline on Redis' own clock (nil for never). The server's clock may not be
-- Redis' (another host, an offset, a test's manual clock): a deadline it computed and
-- Redis judged would expire keys early or late by the difference — at once, when the
-- server's instant lies days behind Redis' (docs/redis-layout.md, "Expiry"). With an
-- `anchor` (a period's `r`) that already has a deadline, that one is kept, so all of a
-- period's keys expire together whichever call or node set them; without one (`retain`,
-- an import's rename) the deadline is new.
local function deadline(ttl_ms, anchor)
  if ttl_ms == NO_EXPIRY then return nil end
  if anchor then
    local at = redis.call('PEXPIRETIME', anchor)
    if at > 0 then return at end
  end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ttl_ms)
end

-- Exact 64-bit integers. Lua's numbers are doubles, exact to 2^53, so a score is carried as
-- (hi, lo) = (floor(x / 2^32), x mod 2^32): hi in [-2^31, 2^31), lo in [0, 2^32).
local TWO32 = 4294967296
local TWO31 = 2147483648
local TWO53 = 9007199254740992

local function i64_of_number(x)
  local hi = math.floor(x / TWO32)
  return hi, x - hi * TWO32
end

-- a + b, or nil when the sum leaves the i64 range.
local function i64_add(ah, al, bh, bl)
  local hi, lo = ah + bh, al + bl
  if lo >= TWO32 then hi, lo = hi + 1, lo - TWO32 end
  if hi >= TWO31 or hi < -TWO31 then return nil end
  return hi, lo
end

-- -1, 0 or 1 as a < b, a = b, a > b.
local function i64_cmp(ah, al, bh, bl)
  if ah ~= bh then return ah < bh and -1 or 1 end
  if al ~= bl then return al < bl and -1 or 1 end
  return 0
end

-- The nearest double (one rounding: hi * 2^32 is exact): the ZSET score.
local function i64_double(hi, lo)
  return hi * TWO32 + lo
end

-- Whether a score's double is past 2^53, where doubles stop holding every integer: its
-- entries then carry the exact score in front of their member (`big` in layout.rs).
local function is_big(d)
  return d >= TWO53 or d <= -TWO53
end

local function u32be(n)
  return string.char(math.floor(n / 16777216), math.floor(n / 65536) % 256,
                     math.floor(n / 256) % 256, n % 256)
end
local function u32_at(s, i)
  local a, b, c, d = string.byte(s, i, i + 3)
  return ((a * 256 + b) * 256 + c) * 256 + d
end

-- The 8-byte order-preserving key of a score: big-endian two's complement with the sign
-- bit flipped, so byte order is numeric order (`score_key` in layout.rs).
local function i64_key(hi, lo)
  return u32be(hi + TWO31) .. u32be(lo)
end
local function i64_of_key(s, at)
  return u32_at(s, at) - TWO31, u32_at(s, at + 4)
end

-- The decimal text of an integer-valued number inside ±2^53. '%d' (a C long) instead of
-- Lua's own '%.14g' or '%.17g', which a number passed to redis.call gets: the float
-- formatting took a few per cent of Redis' time (docs/BENCHMARKS.md §10).
local function int_text(n)
  return string.format('%d', n)
end

-- The decimal text of a score, exact over the whole range.
local function i64_text(hi, lo)
  local d = hi * TWO32 + lo
  if not is_big(d) then return int_text(d) end
  local sign = ''
  if hi < 0 then
    sign = '-'
    if lo == 0 then hi = -hi else hi, lo = -hi - 1, TWO32 - lo end
  end
  local digits = {}
  while hi > 0 or lo > 0 do
    local r = hi % 10
    hi = (hi - r) / 10
    local cur = r * TWO32 + lo
    local r2 = cur % 10
    lo = (cur - r2) / 10
    table.insert(digits, 1, r2)
  end
  return sign .. table.concat(digits)
end

-- A ZSET score (a double that holds an integer) as ZADD and ZCOUNT read it.
local function double_text(d)
  if not is_big(d) then return int_text(d) end
  return string.format('%.17g', d)
end

-- The 14-byte tie-break: reached_at (58 bits, µs) then the sequence (54 bits), big-endian,
-- so byte order is (reached_at, sequence) order (`tiebreak` in layout.rs). `r` is the
-- 8-byte reached_at shifted left by 6 bits, `rc` its byte complement; on desc boards every
-- byte is complemented, so that ZREVRANGE lists equal scores earliest first.
local function tiebreak(r, rc, seq, desc)
  local top = math.floor(seq / 281474976710656) -- seq >> 48
  local low = seq - top * 281474976710656
  if desc then
    top, low, r = -top, 281474976710655 - low, rc
  end
  local last = string.byte(r, 8) + top
  local lh = math.floor(low / TWO32)
  return string.sub(r, 1, 7) .. string.char(last, math.floor(lh / 256), lh % 256)
    .. u32be(low - lh * TWO32)
end

-- The reached_at (µs, decimal) of an 8-byte `r` (reached_at shifted left by 6 bits).
local function reached_text(r)
  local hi, lo = u32_at(r, 1), u32_at(r, 5)
  return i64_text(math.floor(hi / 64), (hi % 64) * 67108864 + math.floor(lo / 64))
end

-- Byte complement of a short string.
local function complement(s)
  local out = {}
  for i = 1, #s do out[i] = string.char(255 - string.byte(s, i)) end
  return table.concat(out)
end

-- Whether 8-byte big-endian a < b (Lua's string order follows the locale).
local function u64_less(a, b)
  local ah, bh = u32_at(a, 1), u32_at(b, 1)
  if ah ~= bh then return ah < bh end
  return u32_at(a, 5) < u32_at(b, 5)
end

-- The length of the tie-break, and of the score key in front of a big score's entry.
local TIEBREAK_LEN = 14
local KEY_LEN = 8

-- A ranking entry's member: [score key, if big] .. tie-break .. name. Its prefix (all but
-- the name) is what a member's bucket field holds.
local function entry_prefix(hi, lo, d, tb)
  if is_big(d) then return i64_key(hi, lo) .. tb end
  return tb
end

-- The exact score of an entry with prefix `prefix` and ZSET score text `score`.
local function entry_score(prefix, score)
  local d = tonumber(score)
  if #prefix == KEY_LEN + TIEBREAK_LEN then return i64_of_key(prefix, 1) end
  return i64_of_number(d)
end

-- One board-period's ranking: its keys and how it counts. `P` is the period key prefix
-- (`…:p:<pid>:`): `r` the ranking ZSET, `x` its big-score entries again (member and score
-- the same; byte order there is score order, so ZLEXCOUNT counts exact scores), `t` the
-- ties (one entry per member that is not the first of its exact score: member = score key
-- .. 4-byte index, score = the double), `meta` metadata, `b:<n>` the buckets.

-- Entries strictly better than exact score (hi, lo) with double d.
local function better(P, hi, lo, d, desc)
  local r, x = P .. 'r', P .. 'x'
  local n
  if desc then n = redis.call('ZCOUNT', r, '(' .. double_text(d), '+inf')
  else n = redis.call('ZCOUNT', r, '-inf', '(' .. double_text(d)) end
  if not is_big(d) then return n end
  -- Inside one double: big entries with a better exact score, counted by their keys.
  if desc then
    local nh, nl = i64_add(hi, lo, 0, 1)
    if not nh then return n end
    return n + redis.call('ZLEXCOUNT', x, '[' .. i64_key(nh, nl), '+')
      - redis.call('ZCOUNT', x, '(' .. double_text(d), '+inf')
  end
  return n + redis.call('ZLEXCOUNT', x, '-', '(' .. i64_key(hi, lo))
    - redis.call('ZCOUNT', x, '-inf', '(' .. double_text(d))
end

-- Entries with exactly score (hi, lo).
local function group_size(P, hi, lo, d)
  if not is_big(d) then
    local s = double_text(d)
    return redis.call('ZCOUNT', P .. 'r', s, s)
  end
  local nh, nl = i64_add(hi, lo, 0, 1)
  local upper = nh and '(' .. i64_key(nh, nl) or '+'
  return redis.call('ZLEXCOUNT', P .. 'x', '[' .. i64_key(hi, lo), upper)
end

-- Ties strictly better than (hi, lo): entries better that are not first of their score.
local function ties_better(P, hi, lo, desc)
  if desc then
    local nh, nl = i64_add(hi, lo, 0, 1)
    if not nh then return 0 end
    return redis.call('ZLEXCOUNT', P .. 't', '[' .. i64_key(nh, nl), '+')
  end
  return redis.call('ZLEXCOUNT', P .. 't', '-', '(' .. i64_key(hi, lo))
end

-- 1-based rank in `style` of an entry at 0-based `pos` with exact score (hi, lo).
local function rank_of(P, pos, hi, lo, style, desc)
  if style == 'ordinal' then return pos + 1 end
  local d = i64_double(hi, lo)
  local b = better(P, hi, lo, d, desc)
  if style == 'dense' then return 1 + b - ties_better(P, hi, lo, desc) end
  return 1 + b
end

-- 0-based position of an entry in the board's order.
local function position(P, member, desc)
  if desc then return redis.call('ZREVRANK', P .. 'r', member) end
  return redis.call('ZRANK', P .. 'r', member)
end

-- Adds an entry (score (hi, lo), double d, member `m`) to the ranking, its big copy and ties.
local function entry_add(P, hi, lo, d, m, expiry)
  local score = double_text(d)
  local c = group_size(P, hi, lo, d)
  if c > 0 then
    redis.call('ZADD', P .. 't', score, i64_key(hi, lo) .. u32be(c))
    if expiry then redis.call('PEXPIREAT', P .. 't', expiry) end
  end
  redis.call('ZADD', P .. 'r', score, m)
  if is_big(d) then
    redis.call('ZADD', P .. 'x', score, m)
    if expiry then redis.call('PEXPIREAT', P .. 'x', expiry) end
  end
end

-- Removes an entry added by entry_add.
local function entry_remove(P, hi, lo, d, m)
  redis.call('ZREM', P .. 'r', m)
  if is_big(d) then redis.call('ZREM', P .. 'x', m) end
  local c = group_size(P, hi, lo, d)
  if c > 0 then redis.call('ZREM', P .. 't', i64_key(hi, lo) .. u32be(c)) end
end

-- Buckets: member name → entry prefix, spread by the name's 64-bit hash (computed by the
-- server, `name_hash` in layout.rs) over small hashes that Redis keeps as compact
-- listpacks. Their number grows by linear hashing: with level L and split pointer S there
-- are 2^L + S buckets, and one more is split off each time the ranking passes BUCKET_LOAD
-- entries per bucket. The field is the 8-byte hash; a second name with the same hash (not
-- seen in practice, but handled) takes the field with one more byte 1, 2, … appended.
local BUCKET_LOAD = 32
local MAX_PROBES = 255

-- The number of the bucket of a name whose hash's low 32 bits are h32, as key text.
local function bucket_of(h32, L, S)
  local n = 2 ^ L
  local b = h32 % n
  if b < S then b = h32 % (2 * n) end
  return int_text(b)
end

-- The bucket field, prefix and ZSET score of `name`; when absent, the free field it takes.
local function bucket_find(P, bkey, H, name)
  local field = H
  for k = 1, MAX_PROBES do
    local v = redis.call('HGET', bkey, field)
    if not v then return field end
    local score = redis.call('ZSCORE', P .. 'r', v .. name)
    if score then return field, v, score end
    field = H .. string.char(k)
  end
  error('more than ' .. MAX_PROBES .. ' names share one 64-bit hash')
end

-- Frees `field` of the chain starting at H: the chain's last field moves into it.
local function bucket_delete(bkey, H, field)
  local last, lastk = field, #field > #H and string.byte(field, #field) or 0
  for k = lastk + 1, MAX_PROBES do
    local f = H .. string.char(k)
    if redis.call('HEXISTS', bkey, f) == 0 then break end
    last = f
  end
  if last ~= field then
    redis.call('HSET', bkey, field, redis.call('HGET', bkey, last))
  end
  redis.call('HDEL', bkey, last)
end

-- After an entry was added: splits the next bucket when the load passes BUCKET_LOAD.
-- Returns the new (L, S).
local function bucket_grow(P, L, S, members, expiry)
  local n = 2 ^ L
  if members <= BUCKET_LOAD * (n + S) then return L, S end
  local from, to = P .. 'b:' .. S, P .. 'b:' .. (S + n)
  local all = redis.call('HGETALL', from)
  local moved, fields = {}, {}
  for i = 1, #all, 2 do
    local f = all[i]
    if u32_at(f, 5) % (2 * n) ~= S then
      moved[#moved + 1] = f
      moved[#moved + 1] = all[i + 1]
      fields[#fields + 1] = f
    end
  end
  if #fields > 0 then
    redis.call('HSET', to, unpack(moved))
    redis.call('HDEL', from, unpack(fields))
    if expiry then redis.call('PEXPIREAT', to, expiry) end
  end
  S = S + 1
  if S == n then L, S = L + 1, 0 end
  return L, S
end

-- Adds a member the period does not hold (`members` entries before it): its entry
-- `prefix .. name`, its bucket field, the expiry of keys it may have created, and a
-- bucket split when one is due. Returns the new (L, S).
local function member_add(P, bkey, field, hi, lo, d, prefix, name, L, S, members, expiry)
  entry_add(P, hi, lo, d, prefix .. name, expiry)
  redis.call('HSET', bkey, field, prefix)
  if expiry then
    redis.call('PEXPIREAT', P .. 'r', expiry)
    redis.call('PEXPIREAT', bkey, expiry)
  end
  return bucket_grow(P, L, S, members + 1, expiry)
end

-- A period record: "<start_us> <end_us> <floor id> <L> <S>" (the bucket state last).
local function record_floor(rec)
  return string.match(rec, '^%S+ %S+ (%S+)')
end
-- The match starts near the end (" L S" is at most 14 characters: S < 2^L, and L ≤ 32 as a
-- ZSET holds under 2^32 entries): from the first character it tried every space of the
-- record, 0.6 µs a write against 0.25 (docs/BENCHMARKS.md §10).
local function record_buckets(rec)
  local L, S = string.match(rec, ' (%d+) (%d+)$', math.max(1, #rec - 23))
  return tonumber(L), tonumber(S)
end
local function record_with_buckets(rec, L, S)
  return string.match(rec, '^(%S+ %S+ %S+)') .. ' ' .. L .. ' ' .. S
end

-- Every key of a period with record `rec`, in UNLINK-sized groups.
local function period_keys(P, rec)
  local L, S = record_buckets(rec)
  local groups, keys = {}, {P .. 'r', P .. 'x', P .. 't', P .. 'meta'}
  for b = 0, 2 ^ L + S - 1 do
    keys[#keys + 1] = P .. 'b:' .. b
    if #keys == 1000 then groups[#groups + 1] = keys; keys = {} end
  end
  groups[#groups + 1] = keys
  return groups
end

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
-- remove, reset, gap, deleted), m member, s score, r rank, a reached_at µs, p period, q
-- previous.
local EVENTS_KEPT = '10000'
-- How long a deleted board's stream outlives it, so every node's reader sees the end.
local EVENTS_DELETED_TTL_MS = 60000

local function emit(K_EV, ...)
  redis.call('XADD', K_EV, 'MAXLEN', '~', EVENTS_KEPT, '0-*', ...)
end

-- Score and remove events are written only while some node has readers of the board: a
-- node with a feed for it refreshes the board's readers key every second (`readers` in
-- board.lua, store/events.rs), with a time to live of READERS_TTL_MS; a write or remove
-- that finds no such key writes no event, which saves about a fifth of a write
-- (docs/BENCHMARKS.md §10). A refresh that finds the key gone appends a `gap` entry, since
-- events may have gone unwritten before it: a reader resuming from an id before the gap is
-- sent a resync (docs/redis-layout.md, "Events only while watched").
local READERS_TTL_MS = 15000

-- '<ns>:{<board>}:events' → '<ns>:{<board>}:readers' (`BoardKeys::readers` in layout.rs).
local function readers_key(K_EV)
  return string.sub(K_EV, 1, -7) .. 'readers'
end

-- Whether the board has readers (kept for the rest of a batch in its context `ctx`).
local function watched(K_EV, ctx)
  if ctx and ctx.watched ~= nil then return ctx.watched end
  local w = redis.call('EXISTS', readers_key(K_EV)) == 1
  if ctx then ctx.watched = w end
  return w
end

-- Sends the reset of PERIOD_ID once, whichever node or write gets here first: only when the
-- last period announced on the board is an earlier one (the first is only recorded). A
-- batch's writes (`ctx`, write_fn.lua's batch context) read the announced period once.
local function announce(K_EV, K_ANN, PERIOD_ID, PREVIOUS, ctx)
  local last
  if ctx and ctx.ann ~= nil then last = ctx.ann else last = redis.call('GET', K_ANN) end
  if ctx then ctx.ann = last end
  if last and last >= PERIOD_ID then return end
  redis.call('SET', K_ANN, PERIOD_ID)
  if ctx then ctx.ann = PERIOD_ID end
  if last then emit(K_EV, 'k', 'reset', 'p', PERIOD_ID, 'q', PREVIOUS) end
end
