#!/usr/bin/env python3
"""Where the time of one write's function goes, segment by segment (docs/BENCHMARKS.md §10):
copies of the library loaded on the redis-server at PORT (start Photofinish on it and write
once first), each with the write function cut short by a `return` at one point of
`apply_write` (write_fn.lua), each called 30,000 times (pipelined) as an `incr` of the one
member of its own one-member board, in three shuffled rounds; prints the median µs per call
of each and the difference from the one before: what that segment adds. A cut leaves the
board as the writes up to it leave it, so every variant keeps working on its own board.

Usage: bench/redis-write-segments.py PORT     Needs: redis-py.
"""
import random
import statistics
import sys

import redis

port = int(sys.argv[1])
calls = 30000
r = redis.Redis(port=port)
lib = next(l for l in r.execute_command("FUNCTION", "LIST", "WITHCODE")
           if l[b"library_name"].startswith(b"photofinish_"))
version = lib[b"library_name"].decode()[len("photofinish_"):]
base = lib[b"library_code"].decode()
RET = "do return {'ok'} end\n"
# (name, the line of apply_write after which the write returns; None: the whole write)
cuts = [
    ("unpack keys, nothing else", "  local K_CFG, K_SEQ, K_PERIODS, K_CLOCK, K_EV, K_ANN = unpack(KEYS)\n"),
    ("+ args, config check (GET)", "  local expiry = deadline(EXPIRY_MS, P .. 'r')\n"),
    ("+ period record (HGET), bucket", "  local bkey = P .. 'b:' .. bucket_of(tonumber(H32), L, S)\n"),
    ("+ find the member (HGET, ZSCORE)", "  local found = old_prefix ~= nil\n"),
    ("+ new score, INCR seq, SET clock", "    reached = r\n"),
    ("+ tie-break", "    prefix = entry_prefix(nh, nl, d, tiebreak(r, rc, seq, desc))\n"),
    ("+ ZREM, 2 ZCOUNT, ZADD, HSET, ZREVRANK", "  local tb = string.sub(prefix, #prefix - TIEBREAK_LEN + 1)\n"),
    ("+ announce (GET), XADD: the whole write", None),
]
for i, (_, line) in enumerate(cuts):
    code = base.replace(f"photofinish_{version}", f"pfseg{i}").replace(f"_{version}'", f"_seg{i}'")
    if line:
        at = code.index("local function apply_write")
        k = code.index(line, at) + len(line)
        code = code[:k] + RET + code[k:]
    r.execute_command("FUNCTION", "LOAD", "REPLACE", code)

cfg = b'{"order":"desc","update":"incr","reset":"never","timezone":"UTC","week_start":"monday","retention":8}'


def run(i):
    k = f"pf:{{wseg{i}}}:".encode()
    r.set(k + b"cfg", cfg)
    args = [f"pf_write_seg{i}", 6, k + b"cfg", k + b"seq", k + b"periods", k + b"clk", k + b"events",
            k + b"announced", cfg, b"all", b"-9223372036854775808 9223372036854775807 all", b"m1",
            b"incr", b"0", b"5", b"1", b"\x01\x98I\xefK\xbas\x80", b"\xfeg\xb6\x10\xb4E\x8c\x7f",
            b"\xe1\t\xd7\x90\x17\xe0\x00\x00", b"1", b"", k + b"p:", k + b"p:all:", b"0", b"", b"", b"",
            b"0", b"1", b"all", b"\xb1\xf1\xc6\xd5\x11\x9ax\x01", b"295335937"]
    r.execute_command("FCALL", *args)
    r.config_resetstat()
    for _ in range(calls // 100):
        p = r.pipeline(transaction=False)
        for _ in range(100):
            p.execute_command("FCALL", *args)
        p.execute()
    return r.info("commandstats")["cmdstat_fcall"]["usec"] / calls


times = {i: [] for i in range(len(cuts))}
for _ in range(3):
    order = list(range(len(cuts)))
    random.shuffle(order)
    for i in order:
        times[i].append(run(i))
prev = 0.0
for i, (name, _) in enumerate(cuts):
    m = statistics.median(times[i])
    print(f"{name:42} {m:6.2f} µs  (+{m - prev:5.2f})")
    prev = m
for i in range(len(cuts)):
    r.execute_command("FUNCTION", "DELETE", f"pfseg{i}")
