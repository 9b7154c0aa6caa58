#!/usr/bin/env python3
"""Prints N ZADD commands in Redis protocol for `redis-cli --pipe` (same ids and scores as load.py)."""
import os, random, sys

key, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(42)
SCORE_MAX = int(os.environ.get("PF_SCORE_MAX", "1000000"))  # scores in [0, PF_SCORE_MAX)
out = sys.stdout.buffer
for i in range(n):
    member = f"pf00{i:012d}".encode()  # redis-benchmark's __rand_int__ is 12 digits; 16 bytes as in load.py
    score = str(rng.randrange(SCORE_MAX)).encode()
    out.write(b"*4\r\n$4\r\nZADD\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key.encode(), len(score), score, len(member), member))
