-- Loads entries into one board-period with their own tie-breaks (the upgrade from an older
-- format, store/upgrade.rs). Keys and arguments: `LoadCall` in scripts/load.rs.
-- KEYS: periods. ARGV: P PERIOD_ID RECORD DESC EXPIRY_MS, then per entry NAME H H32 HI LO
-- R RC SEQ. An entry whose name the period holds already is skipped, so a load interrupted
-- and run again adds each entry once. Answers {'ok', entries added}.
local K_PERIODS = KEYS[1]
local P, PERIOD_ID, RECORD, DESC, EXPIRY_MS = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local desc = DESC == TRUE
local expiry = EXPIRY_MS ~= NO_EXPIRY and EXPIRY_MS or nil

local rec = redis.call('HGET', K_PERIODS, PERIOD_ID)
local L, S = 0, 0
if rec and select(2, string.gsub(rec, ' ', ' ')) == 4 then L, S = record_buckets(rec) end
local members = redis.call('ZCARD', P .. 'r')
local added = 0
for i = 6, #ARGV, 8 do
  local name, H, h32 = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local bkey = P .. 'b:' .. bucket_of(h32, L, S)
  local field, prefix = bucket_find(P, bkey, H, name)
  if not prefix then
    local hi, lo = tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4])
    local d = i64_double(hi, lo)
    local tb = tiebreak(ARGV[i + 5], ARGV[i + 6], tonumber(ARGV[i + 7]), desc)
    prefix = entry_prefix(hi, lo, d, tb)
    L, S = member_add(P, bkey, field, hi, lo, d, prefix, name, L, S, members, expiry)
    members = members + 1
    added = added + 1
  end
end
redis.call('HSET', K_PERIODS, PERIOD_ID, record_with_buckets(RECORD, L, S))
return {S_OK, added}
