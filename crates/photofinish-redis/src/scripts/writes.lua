-- Writes of one board in order, in one call: `apply_write` for each group of WRITE_ARGS
-- arguments (`WriteCall::args` in scripts/write.rs; the chunks of `write_many` in
-- store/writes.rs), each on its own (one's refusal stops none
-- after it), sharing one batch context (write_fn.lua). KEYS: the board's keys, as one
-- write's. Answers one write's answer per group, in order; a config other than the
-- server's answers that status for every group, none applied.
local n = #ARGV / WRITE_ARGS
local out = {}
local bad = check_config(KEYS[1], ARGV[1])
if bad then
  for i = 1, n do out[i] = {bad} end
  return out
end
local ctx = batch_context()
-- Redis keeps what a call did before an error: the sequence and clock are written back
-- whatever happens, so the writes that landed keep theirs taken.
local ok, err = pcall(function()
  for i = 0, n - 1 do
    out[i + 1] = apply_write(KEYS, {unpack(ARGV, i * WRITE_ARGS + 1, (i + 1) * WRITE_ARGS)}, ctx)
  end
end)
batch_finish(ctx, KEYS[2], KEYS[4])
if not ok then error(err) end
return out
