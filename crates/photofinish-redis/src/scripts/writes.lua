-- Writes of one board in order, in one call: `apply_write` for each group of WRITE_ARGS
-- arguments (`WriteCall::args` in scripts/write.rs; the chunks of `write_many` in
-- store/writes.rs), each on its own (one's refusal stops none after it), in one batch
-- (`in_batch`, write_fn.lua). KEYS: the board's keys, as one write's. Answers one write's
-- answer per group, in order; a config other than the server's answers that status for
-- every group, none applied.
local n = #ARGV / WRITE_ARGS
local out = {}
local bad = check_config(KEYS[1], ARGV[1])
if bad then
  for i = 1, n do out[i] = {bad} end
  return out
end
in_batch(KEYS[2], KEYS[4], function(ctx)
  for i = 0, n - 1 do
    out[i + 1] = apply_write(KEYS, {unpack(ARGV, i * WRITE_ARGS + 1, (i + 1) * WRITE_ARGS)}, ctx)
  end
end)
return out
