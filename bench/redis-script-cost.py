#!/usr/bin/env python3
"""What an EVALSHA of Photofinish's scripts costs before doing anything (docs/BENCHMARKS.md §10):
each body is loaded with SCRIPT LOAD and called 20,000 times (pipelined); the usec_per_call of
INFO commandstats is printed.

Usage: bench/redis-script-cost.py [PORT]   (a redis-server on 127.0.0.1:PORT, default 6379;
needs redis-py)"""
import os, sys
import redis

port = int(sys.argv[1]) if len(sys.argv) > 1 else 6379
r = redis.Redis(port=port)
here = os.path.join(os.path.dirname(__file__), "..", "crates", "photofinish-redis", "src", "scripts")
common = open(os.path.join(here, "common.lua")).read()
write_fn = open(os.path.join(here, "write_fn.lua")).read()


def cost(body, n=20000, args=()):
    sha = r.script_load(body)
    r.config_resetstat()
    p = r.pipeline(transaction=False)
    for i in range(n):
        p.evalsha(sha, 0, *args)
        if i % 1000 == 999:
            p.execute()
    p.execute()
    return r.info("commandstats")["cmdstat_evalsha"]["usec_per_call"]


print("return 1:", cost("return 1"))
print("return 1 with 30 arguments:", cost("return 1", args=[str(i) * 3 for i in range(30)]))
print("common.lua + return 1:", cost(common + "\nreturn 1"))
print("common.lua + write_fn.lua + return 1:", cost(common + "\n" + write_fn + "\nreturn 1"))
