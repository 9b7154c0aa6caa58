#!/usr/bin/env python3
"""What one write costs inside Redis (docs/bench-history.md §10), against a redis-server on PORT
that holds the library (start Photofinish on it and write once: the first call loads it).
Each measure is 20,000 pipelined calls (CALLS) of a `write` function, each an `incr` of the
one member of a one-member board (so no cache misses), with a real call's arguments
(`WriteCall` in crates/photofinish-redis/src/scripts/write.rs), in namespace `pf`. Nobody
watches the board (it has no `readers` key), so the writes append no event
(docs/redis-layout.md, "Events only while watched").

- default: the library's own `write`, then `INFO commandstats` split: the `fcall` line is
  the whole write, the others the commands it made.
- --empty: a copy of the library whose write returns at once: what the call itself costs
  with the same 30 arguments.
- --segments: copies whose write returns early at one point each of `apply_write`
  (write_fn.lua), in three shuffled rounds; the median µs per call of each and what each
  segment adds to the one before. A cut leaves a board as the writes up to it leave it, so
  each copy works on its own board.

Usage: bench/redis-write-cost.py PORT [CALLS] [--empty | --segments]     Needs: redis-py.
"""
import random
import statistics
import sys

import redis

flags = {a for a in sys.argv[1:] if a.startswith("--")}
argv = [a for a in sys.argv[1:] if not a.startswith("--")]
port = int(argv[0])
calls = int(argv[1]) if len(argv) > 1 else 20000
r = redis.Redis(port=port)
lib = next((l for l in r.execute_command("FUNCTION", "LIST", "WITHCODE")
            if l[b"library_name"].startswith(b"photofinish_")), None)
if lib is None:
    sys.exit("no photofinish library: start photofinish on this redis and write once first")
version = lib[b"library_name"].decode()[len("photofinish_"):]
CODE = lib[b"library_code"].decode()
CFG = b'{"order":"desc","update":"incr","reset":"never","timezone":"UTC","week_start":"monday","retention":8}'


def load_copy(name, cut=None, body=None):
    """Loads the library again as `name` (its functions `pf_*_<name>`), the write returning
    at once after the line `cut` of apply_write, or with its body replaced by `body`; the
    name of its write function."""
    code = CODE.replace(f"photofinish_{version}", name).replace(f"_{version}'", f"_{name}'")
    if cut:
        k = code.index(cut, code.index("local function apply_write")) + len(cut)
        code = code[:k] + "do return {'ok'} end\n" + code[k:]
    if body:
        code = code.replace("return apply_write(KEYS, ARGV)", body)
    r.execute_command("FUNCTION", "LOAD", "REPLACE", code)
    return f"pf_write_{name}"


def measure(write, board):
    """µs per call of `write` over CALLS calls on `board`, after a first call that opens the
    period and adds the member."""
    k = f"pf:{{{board}}}:".encode()
    r.set(k + b"cfg", CFG)
    args = [write, 6, k + b"cfg", k + b"seq", k + b"periods", k + b"clk", k + b"events",
            k + b"announced", CFG, b"all", b"-9223372036854775808 9223372036854775807 all", b"m1",
            b"incr", b"0", b"5", b"1", b"\x01\x98I\xefK\xbas\x80", b"\xfeg\xb6\x10\xb4E\x8c\x7f",
            b"\xe1\t\xd7\x90\x17\xe0\x00\x00", b"1", b"", k + b"p:", k + b"p:all:", b"0", b"", b"",
            b"", b"0", b"1", b"all", b"\xb1\xf1\xc6\xd5\x11\x9ax\x01", b"295335937"]
    r.execute_command("FCALL", *args)
    r.config_resetstat()
    for _ in range(calls // 100):
        p = r.pipeline(transaction=False)
        for _ in range(100):
            p.execute_command("FCALL", *args)
        p.execute()
    return r.info("commandstats")["cmdstat_fcall"]["usec"] / calls


# (what the write has done when it returns, the line of apply_write it returns after;
# None: the whole write)
CUTS = [
    ("unpacking its keys (the call itself)",
     "  local K_CFG, K_SEQ, K_PERIODS, K_CLOCK, K_EV, K_ANN = unpack(KEYS)\n"),
    ("+ its arguments, the config check (GET)", "  local expiry = deadline(EXPIRY_MS, P .. 'r')\n"),
    ("+ the period record (HGET), its bucket",
     "  local bkey = P .. 'b:' .. bucket_of(tonumber(H32), L, S)\n"),
    ("+ finding the member (HGET, ZSCORE)", "  local found = old_prefix ~= nil\n"),
    ("+ new score, INCR seq, SET clock", "    reached = r\n"),
    ("+ the tie-break", "    prefix = entry_prefix(nh, nl, d, tiebreak(r, rc, seq, desc))\n"),
    ("+ ZREM, 2 ZCOUNT, ZADD, HSET, ZREVRANK",
     "  local tb = string.sub(prefix, #prefix - TIEBREAK_LEN + 1)\n"),
    ("+ readers check (EXISTS): the whole write", None),
]

if "--segments" in flags:
    writes = [load_copy(f"seg{i}", cut=cut) for i, (_, cut) in enumerate(CUTS)]
    times = {i: [] for i in range(len(CUTS))}
    for _ in range(3):
        order = list(range(len(CUTS)))
        random.shuffle(order)
        for i in order:
            times[i].append(measure(writes[i], f"wseg{i}"))
    prev = 0.0
    for i, (name, _) in enumerate(CUTS):
        m = statistics.median(times[i])
        print(f"{name:42} {m:6.2f} µs  (+{m - prev:5.2f})")
        prev = m
    for i in range(len(CUTS)):
        r.execute_command("FUNCTION", "DELETE", f"seg{i}")
elif "--empty" in flags:
    write = load_copy("pfcost", body="do return {'ok'} end")
    print(f"fcall      calls/write=1 µs/write={measure(write, 'wcost'):.2f}")
    r.execute_command("FUNCTION", "DELETE", "pfcost")
else:
    measure(f"pf_write_{version}", "wcost")
    stats = sorted(r.info("commandstats").items(), key=lambda kv: -kv[1]["usec"])
    inner = 0.0
    for name, v in stats:
        if name in ("cmdstat_config|resetstat", "cmdstat_info"):
            continue
        per_write = v["usec"] / calls
        if name != "cmdstat_fcall":
            inner += per_write
        print(f"{name[8:]:10} calls/write={v['calls'] / calls:.0f} µs/write={per_write:.2f}")
    print(f"commands: {inner:.2f} µs/write; the rest of the function: "
          f"{stats[0][1]['usec'] / calls - inner:.2f} µs/write")
