-- An operation under an idempotency key (docs/SPEC.md §7), atomically with the key's
-- record: a repeat with the same request fingerprint answers the remembered answer and
-- applies nothing; another fingerprint is refused; a new key applies the operation and, if
-- it succeeded, remembers its answer with a TTL. Keys and arguments: `KeyedCall` in
-- scripts/keyed.rs.
-- KEYS: the key's record, then each entry's keys in turn.
-- ARGV: FP TTL_MS MODE N, then per entry: NKEYS NARGS and its NARGS arguments. An entry
-- with no keys was refused on the server's side before the call: its two arguments are the
-- error's code and message, answered in its place ({S_REFUSED, code, message}).
-- MODE: write (one entry), batch (entries in order, each on its own), remove (one entry),
-- create (one entry: config and event stream keys; CONFIG PERIOD_ID PERIOD_START PERIOD_END
-- PERIOD_PREFIX).
-- Answers {S_APPLIED, answer} or {S_REPLAYED, answer}, {S_KEY_REUSED}, or the operation's
-- own refusal (not remembered).
local K_IDEM = KEYS[1]
local FP, TTL_MS, MODE, N = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])

local stored = redis.call('GET', K_IDEM)
if stored then
  local rec = cmsgpack.unpack(stored)
  if rec[1] ~= FP then return {S_KEY_REUSED} end
  return {S_REPLAYED, rec[2]}
end

local entries = {}
local ki, ai = 2, 5
for i = 1, N do
  local nk, na = tonumber(ARGV[ai]), tonumber(ARGV[ai + 1])
  ai = ai + 2
  local keys, args = {}, {}
  for j = 1, nk do keys[j] = KEYS[ki]; ki = ki + 1 end
  for j = 1, na do args[j] = ARGV[ai]; ai = ai + 1 end
  entries[i] = {keys, args}
end

-- One write entry's answer; a write that landed also names its period (id and record),
-- so a replay answers it whatever the clock says by then.
local function write_entry(e, ctx)
  if #e[1] == 0 then return {S_REFUSED, e[2][1], e[2][2]} end
  local r = apply_write(e[1], e[2], ctx)
  if r[1] == S_OK then
    r[#r + 1] = e[2][2]
    r[#r + 1] = e[2][3]
  end
  return r
end

local answer
if MODE == 'write' then
  answer = write_entry(entries[1])
  if answer[1] ~= S_OK then return answer end
elseif MODE == 'batch' then
  -- The entries share the board's config, checked once before anything applies, and one
  -- batch context (write_fn.lua).
  local board_keys
  for i = 1, N do
    local e = entries[i]
    if #e[1] > 0 then
      local bad = check_config(e[1][1], e[2][1])
      if bad then return {bad} end
      board_keys = e[1]
      break
    end
  end
  answer = {}
  in_batch(board_keys and board_keys[2], board_keys and board_keys[4], function(ctx)
    for i = 1, N do answer[i] = write_entry(entries[i], ctx) end
  end)
elseif MODE == 'remove' then
  local e = entries[1]
  if #e[1] == 0 then return {S_REFUSED, e[2][1], e[2][2]} end
  answer = apply_remove(e[1], e[2])
  if answer[1] ~= S_OK then return answer end
else
  local K_CFG, K_EV = entries[1][1][1], entries[1][1][2]
  local CONFIG, PERIOD_ID, PERIOD_START, PERIOD_END, PERIOD_PREFIX = unpack(entries[1][2])
  local cfg = redis.call('GET', K_CFG)
  local status = S_SAME
  if not cfg then
    redis.call('SET', K_CFG, CONFIG)
    redis.call('PERSIST', K_EV) -- a stream left by a deletion a moment ago goes on
    cfg, status = CONFIG, S_CREATED
  elseif cfg ~= CONFIG then
    return {S_CONFLICT, cfg}
  end
  local members = redis.call('ZCARD', PERIOD_PREFIX .. PERIOD_ID .. ':r')
  answer = {status, cfg, members, PERIOD_ID, PERIOD_START, PERIOD_END}
end
redis.call('SET', K_IDEM, cmsgpack.pack({FP, answer}), 'PX', TTL_MS)
return {S_APPLIED, answer}
