-- The number of arguments of one write (`WriteCall::ARGS` in scripts/write.rs).
local WRITE_ARGS = 24

-- What the writes of one call on one board share (a batch: writes.lua, keyed.lua's batch
-- mode), the batch context `ctx`. The board's config is checked once, before the first
-- (by the caller); the board's sequence, its stamped clock and its announced period are
-- read at most once and then kept here, and the sequence and clock are written back once,
-- after the last; the period records read and the member counts of the periods a batch
-- adds members to are kept too (all of them dropped when a write drops expired periods).
-- The keys end as they would after the same writes one call each.
--
-- `in_batch(K_SEQ, K_CLOCK, writes)` runs `writes(ctx)` with a fresh context, then writes
-- the sequence and clock back — also when `writes` raised an error, which is raised again:
-- Redis keeps what a call did before an error, so the writes that landed keep the sequence
-- numbers they took. (K_SEQ and K_CLOCK may be nil when no write can run.)
local function in_batch(K_SEQ, K_CLOCK, writes)
  local ctx = {recs = {}, cards = {}}
  local ok, err = pcall(writes, ctx)
  if ctx.clock_set then redis.call('SET', K_CLOCK, ctx.clock) end
  if ctx.seq_set then redis.call('SET', K_SEQ, int_text(ctx.seq)) end
  if not ok then error(err) end
end

-- One write, atomically: `apply_write(KEYS, ARGV, ctx)` with the keys and arguments of
-- `WriteCall` in scripts/write.rs, and the batch context when it is one of several
-- (nil alone). Used alone (write.lua), in batches (writes.lua) and under an idempotency
-- key (keyed.lua).
local function apply_write(KEYS, ARGV, ctx)
  local K_CFG, K_SEQ, K_PERIODS, K_CLOCK, K_EV, K_ANN = unpack(KEYS)
  local CONFIG, PERIOD_ID, PERIOD_RECORD, MEMBER, OP, VALUE_HI, VALUE_LO, STAMPED, R, RC,
        CLAMP, DESC, METADATA, PERIODS_PREFIX, P, EXPIRY_MS, MIN_RULE, MAX_RULE,
        MAX_MEMBERS, OVER_BUDGET, EMIT, PREVIOUS, H, H32 = unpack(ARGV)

  if not ctx then
    local bad = check_config(K_CFG, CONFIG)
    if bad then return {bad} end
  end
  local desc = DESC == TRUE
  local expiry = deadline(EXPIRY_MS, P .. 'r')

  -- The period's record (absent: the write opens it). Retention: a period this board has
  -- not opened must lie inside the window counted back from the newest period it has.
  local rec = ctx and ctx.recs[PERIOD_ID] or redis.call('HGET', K_PERIODS, PERIOD_ID)
  local opening = not rec
  local newest = nil
  if opening then
    for _, id in ipairs(redis.call('HKEYS', K_PERIODS)) do
      if newest == nil or id > newest then newest = id end
    end
    if newest and PERIOD_ID < newest then
      if PERIOD_ID < record_floor(redis.call('HGET', K_PERIODS, newest)) then
        return {S_PERIOD_NOT_RETAINED}
      end
    end
    rec = PERIOD_RECORD .. ' 0 0'
  end
  local L, S = record_buckets(rec)
  local bkey = P .. 'b:' .. bucket_of(tonumber(H32), L, S)

  -- The member's entry: its bucket field, prefix and ZSET score (a new member: the free
  -- field its prefix goes in).
  local field, old_prefix, old_text = bucket_find(P, bkey, H, MEMBER)
  local found = old_prefix ~= nil
  local oh, ol
  if found then oh, ol = entry_score(old_prefix, old_text) end
  local vh, vl = tonumber(VALUE_HI), tonumber(VALUE_LO)
  local nh, nl
  if OP == 'incr' then
    nh, nl = i64_add(oh or 0, ol or 0, vh, vl)
    if not nh then return {S_SCORE_OVERFLOW, i64_text(oh or 0, ol or 0)} end
  elseif OP == 'set' or not found then
    nh, nl = vh, vl
  else
    local c = i64_cmp(vh, vl, oh, ol)
    if (desc and c > 0) or (not desc and c < 0) then nh, nl = vh, vl else nh, nl = oh, ol end
  end
  local changed = not found or i64_cmp(nh, nl, oh, ol) ~= 0
  -- The board's score rules and the memory budget (ScoreRules::check in Rust words the
  -- refusal from what this returns; max_increment was checked there before the call).
  if MIN_RULE ~= '' or MAX_RULE ~= '' or MAX_MEMBERS ~= '' then
    local members = redis.call('ZCARD', P .. 'r')
    local broken = false
    if changed and MIN_RULE ~= '' then
      local rh, rl = i64_of_key(MIN_RULE, 1)
      broken = i64_cmp(nh, nl, rh, rl) < 0
    end
    if changed and MAX_RULE ~= '' then
      local rh, rl = i64_of_key(MAX_RULE, 1)
      broken = broken or i64_cmp(nh, nl, rh, rl) > 0
    end
    broken = broken or (not found and MAX_MEMBERS ~= '' and members >= tonumber(MAX_MEMBERS))
    if broken then
      return {S_RULE_BROKEN, found and i64_text(oh, ol) or '', i64_text(nh, nl), members}
    end
  end
  if not found and OVER_BUDGET == TRUE then return {S_OVER_BUDGET} end

  local new_text = i64_text(nh, nl)
  local prefix, reached = old_prefix, nil
  if changed then
    local seq
    if ctx then
      if ctx.seq == nil then ctx.seq = tonumber(redis.call('GET', K_SEQ) or 0) end
      seq = ctx.seq + 1
      if seq > MAX_SEQ then return {S_RANKING_FULL} end
      ctx.seq, ctx.seq_set = seq, true
    else
      seq = redis.call('INCR', K_SEQ)
      if seq > MAX_SEQ then
        redis.call('DECR', K_SEQ) -- nothing else has changed yet
        return {S_RANKING_FULL}
      end
    end
    local r, rc = R, RC
    if STAMPED == TRUE then
      -- Stamped writes never go back in time on one board, whichever server stamped them.
      -- One call as a rule: the clock takes r and answers the one it held; if that was
      -- later (another server's clock runs ahead), it goes back, and the write takes it
      -- unless that would leave the period.
      -- In a batch the clock is read once and written back once (the later of the two).
      local last
      if ctx then
        if ctx.clock == nil then ctx.clock = redis.call('GET', K_CLOCK) end
        last = ctx.clock
      else
        last = redis.call('SET', K_CLOCK, r, 'GET')
      end
      if last and u64_less(r, last) then
        if not ctx then redis.call('SET', K_CLOCK, last) end
        if not u64_less(CLAMP, last) then r, rc = last, complement(last) end
      elseif ctx then
        ctx.clock, ctx.clock_set = r, true
      end
    end
    reached = r
    local d = i64_double(nh, nl)
    prefix = entry_prefix(nh, nl, d, tiebreak(r, rc, seq, desc))
    if found then
      entry_remove(P, oh, ol, tonumber(old_text), old_prefix .. MEMBER)
      entry_add(P, nh, nl, d, prefix .. MEMBER, expiry)
      redis.call('HSET', bkey, field, prefix)
    else
      local members
      if ctx then
        members = ctx.cards[P] or redis.call('ZCARD', P .. 'r')
        ctx.cards[P] = members + 1
      else
        members = redis.call('ZCARD', P .. 'r')
      end
      local nL, nS = member_add(P, bkey, field, nh, nl, d, prefix, MEMBER, L, S, members,
                                expiry)
      if nL ~= L or nS ~= S then
        rec = record_with_buckets(rec, nL, nS)
        if not opening then redis.call('HSET', K_PERIODS, PERIOD_ID, rec) end
      end
    end
  end
  if METADATA ~= '' then
    redis.call('HSET', P .. 'meta', MEMBER, METADATA)
    if expiry then redis.call('PEXPIREAT', P .. 'meta', expiry) end
  end

  if opening then
    redis.call('HSET', K_PERIODS, PERIOD_ID, rec)
    if newest == nil or PERIOD_ID > newest then
      -- The newest period moved: drop the periods that left the retention window.
      local floor = record_floor(rec)
      local all = redis.call('HGETALL', K_PERIODS)
      if ctx then ctx.recs, ctx.cards = {}, {} end
      for i = 1, #all, 2 do
        local id = all[i]
        if id < floor then
          for _, keys in ipairs(period_keys(PERIODS_PREFIX .. id .. ':', all[i + 1])) do
            redis.call('UNLINK', unpack(keys))
          end
          redis.call('HDEL', K_PERIODS, id)
        end
      end
    end
  end
  local pos = position(P, prefix .. MEMBER, desc)
  local tb = string.sub(prefix, #prefix - TIEBREAK_LEN + 1)
  if changed and EMIT == TRUE and watched(K_EV, ctx) then
    announce(K_EV, K_ANN, PERIOD_ID, PREVIOUS, ctx)
    emit(K_EV, 'k', 'score', 'm', MEMBER, 's', new_text, 'r', int_text(pos + 1),
         'a', reached_text(reached), 'p', PERIOD_ID)
  end
  if ctx then ctx.recs[PERIOD_ID] = rec end
  return {S_OK, new_text, pos + 1, tb, changed and 1 or 0}
end
