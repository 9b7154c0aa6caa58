#!/usr/bin/env python3
"""What a call of Photofinish's Lua costs before doing anything (docs/bench-history.md §10): as a
script (each body loaded with SCRIPT LOAD, called with EVALSHA) and as a function of a library
that holds the same helpers (FUNCTION LOAD, FCALL), 20,000 calls each (pipelined); the
usec_per_call of INFO commandstats is printed.

Usage: bench/redis-script-cost.py [PORT]   (a redis-server on 127.0.0.1:PORT, default 6379;
needs redis-py)"""
import os, sys
import redis

port = int(sys.argv[1]) if len(sys.argv) > 1 else 6379
r = redis.Redis(port=port)
here = os.path.join(os.path.dirname(__file__), "..", "crates", "photofinish-redis", "src", "scripts")
common = open(os.path.join(here, "common.lua")).read()
write_fn = open(os.path.join(here, "write_fn.lua")).read()


def timed(command, n, args):
    r.config_resetstat()
    p = r.pipeline(transaction=False)
    for i in range(n):
        p.execute_command(*command, *args)
        if i % 1000 == 999:
            p.execute()
    p.execute()
    name = command[0].lower()
    return r.info("commandstats")[f"cmdstat_{name}"]["usec_per_call"]


def cost(body, n=20000, args=()):
    return timed(["EVALSHA", r.script_load(body), 0], n, args)


def function_cost(n=20000, args=()):
    lib = ("#!lua name=pf_cost\n" + common + "\n" + write_fn +
           "\nredis.register_function('pf_cost_one', function(keys, args) return 1 end)\n")
    r.function_load(lib, replace=True)
    try:
        return timed(["FCALL", "pf_cost_one", 0], n, args)
    finally:
        r.function_delete("pf_cost")


print("return 1:", cost("return 1"))
print("return 1 with 30 arguments:", cost("return 1", args=[str(i) * 3 for i in range(30)]))
print("common.lua + return 1:", cost(common + "\nreturn 1"))
print("common.lua + write_fn.lua + return 1:", cost(common + "\n" + write_fn + "\nreturn 1"))
print("FCALL, library of common.lua + write_fn.lua, function returning 1:", function_cost())
print("the same with 30 arguments:", function_cost(args=[str(i) * 3 for i in range(30)]))
