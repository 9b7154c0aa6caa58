-- Loads entries into one board-period with their own tie-breaks: the upgrade from an older
-- format (store/upgrade.rs) and an import's staged period (store/import.rs). Keys and
-- arguments: `LoadCall` in scripts/load.rs.
-- KEYS: periods [seq]. ARGV: P PERIOD_ID RECORD DESC EXPIRY_MS, then per entry NAME H H32
-- HI LO R RC SEQ META ('' for none). With the seq key (an import), the entries take the
-- board's next sequence numbers in order (SEQ is ignored) and the periods key expires with
-- the rest. EXPIRY_MS is a time to live, as every script's (`deadline` in common.lua). An
-- entry whose name the period holds already is skipped, so a load interrupted and run
-- again adds each entry once. Answers {'ok', entries added, names skipped...}.
local K_PERIODS, K_SEQ = KEYS[1], KEYS[2]
local P, PERIOD_ID, RECORD, DESC, EXPIRY_MS = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local desc = DESC == TRUE
-- A staged import's keys live EXPIRY_MS past its latest chunk; an upgraded period's keep
-- the deadline its first chunk set.
local expiry = deadline(EXPIRY_MS, (not K_SEQ) and (P .. 'r') or nil)
local WIDTH = 9

local rec = redis.call('HGET', K_PERIODS, PERIOD_ID)
local L, S = 0, 0
if rec and select(2, string.gsub(rec, ' ', ' ')) == 4 then L, S = record_buckets(rec) end
local members = redis.call('ZCARD', P .. 'r')
local first_seq = nil
if K_SEQ then
  local n = (#ARGV - 5) / WIDTH
  first_seq = redis.call('INCRBY', K_SEQ, n) - n + 1
end
local added, skipped = 0, {}
for i = 6, #ARGV, WIDTH do
  local name, H, h32 = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local bkey = P .. 'b:' .. bucket_of(h32, L, S)
  local field, prefix = bucket_find(P, bkey, H, name)
  if not prefix then
    local hi, lo = tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4])
    local d = i64_double(hi, lo)
    local seq = tonumber(ARGV[i + 7])
    if first_seq then seq = first_seq + (i - 6) / WIDTH end
    local tb = tiebreak(ARGV[i + 5], ARGV[i + 6], seq, desc)
    prefix = entry_prefix(hi, lo, d, tb)
    L, S = member_add(P, bkey, field, hi, lo, d, prefix, name, L, S, members, expiry)
    local meta = ARGV[i + 8]
    if meta ~= '' then
      redis.call('HSET', P .. 'meta', name, meta)
      if expiry then redis.call('PEXPIREAT', P .. 'meta', expiry) end
    end
    members = members + 1
    added = added + 1
  else
    skipped[#skipped + 1] = name
  end
end
redis.call('HSET', K_PERIODS, PERIOD_ID, record_with_buckets(RECORD, L, S))
if K_SEQ and expiry then redis.call('PEXPIREAT', K_PERIODS, expiry) end
local out = {S_OK, added}
for _, name in ipairs(skipped) do out[#out + 1] = name end
return out
