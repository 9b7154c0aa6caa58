#!/usr/bin/env python3
"""What one write costs inside Redis, the function against its commands (docs/BENCHMARKS.md
§10): 20,000 pipelined calls of the library's `write` function, each an `incr` of the same
member of a one-member board (so no cache misses), against a redis-server on PORT that
holds the library (start Photofinish on it once: it loads the library at its first call),
then `INFO commandstats`: the `fcall` line is the whole write, the others the commands it
made. The arguments are a real call's (`WriteCall` in crates/photofinish-redis/src/scripts/
write.rs), for board `wcost` in namespace `pf`.

With --empty, the calls go to a copy of the library (loaded as `pfcost`) whose write
returns at once: what the call itself costs with the same 30 arguments.

Usage: bench/redis-write-cost.py PORT [CALLS] [--empty]     Needs: redis-py.
"""
import sys

import redis

argv = [a for a in sys.argv[1:] if a != "--empty"]
empty = "--empty" in sys.argv
port = int(argv[0])
calls = int(argv[1]) if len(argv) > 1 else 20000
r = redis.Redis(port=port)
names = [
    f[b"name"].decode()
    for lib in r.execute_command("FUNCTION", "LIST")
    if lib[b"library_name"].startswith(b"photofinish_")
    for f in lib[b"functions"]
]
write = next((n for n in names if n.startswith("pf_write_")), None)
if write is None:
    sys.exit("no pf_write_* function: start photofinish on this redis and write once first")
if empty:
    lib = next(l for l in r.execute_command("FUNCTION", "LIST", "WITHCODE")
               if l[b"library_name"].startswith(b"photofinish_"))
    version = lib[b"library_name"].decode()[len("photofinish_"):]
    code = lib[b"library_code"].decode().replace(f"photofinish_{version}", "pfcost")
    code = code.replace(f"_{version}'", "_cost'")
    code = code.replace("return apply_write(KEYS, ARGV)", "do return {'ok'} end")
    r.execute_command("FUNCTION", "LOAD", "REPLACE", code)
    write = "pf_write_cost"
cfg = b'{"order":"desc","update":"incr","reset":"never","timezone":"UTC","week_start":"monday","retention":8}'
k = b"pf:{wcost}:"
r.set(k + b"cfg", cfg)
args = [write, 6, k + b"cfg", k + b"seq", k + b"periods", k + b"clk", k + b"events", k + b"announced",
        cfg, b"all", b"-9223372036854775808 9223372036854775807 all", b"m1", b"incr", b"0", b"5",
        b"1", b"\x01\x98I\xefK\xbas\x80", b"\xfeg\xb6\x10\xb4E\x8c\x7f", b"\xe1\t\xd7\x90\x17\xe0\x00\x00",
        b"1", b"", k + b"p:", k + b"p:all:", b"0", b"", b"", b"", b"0", b"1", b"all",
        b"\xb1\xf1\xc6\xd5\x11\x9ax\x01", b"295335937"]
r.execute_command("FCALL", *args)  # opens the period and adds the member
r.config_resetstat()
for _ in range(calls // 100):
    p = r.pipeline(transaction=False)
    for _ in range(100):
        p.execute_command("FCALL", *args)
    p.execute()
stats = sorted(r.info("commandstats").items(), key=lambda kv: -kv[1]["usec"])
inner = 0.0
for name, v in stats:
    if name == "cmdstat_config|resetstat":
        continue
    per_write = v["usec"] / calls
    if name != "cmdstat_fcall":
        inner += per_write
    print(f"{name[8:]:10} calls/write={v['calls'] / calls:.0f} µs/write={per_write:.2f}")
print(f"commands: {inner:.2f} µs/write; the rest of the function: "
      f"{stats[0][1]['usec'] / calls - inner:.2f} µs/write")
