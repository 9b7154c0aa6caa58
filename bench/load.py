#!/usr/bin/env python3
"""Loads N members into a Photofinish board through the batch API (1000 writes a request).

Usage: load.py BASE_URL BOARD N [CONFIG_JSON]    Member ids are 16 bytes: player0000000000..
Env PF_TOKEN: an admin API key, sent as Authorization: Bearer."""
import json, os, random, sys, urllib.request

base, board, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
config = (sys.argv[4] if len(sys.argv) > 4 else "{}").encode()
auth = {"Authorization": f"Bearer {os.environ['PF_TOKEN']}"} if os.environ.get("PF_TOKEN") else {}
rng = random.Random(42)
SCORE_MAX = int(os.environ.get("PF_SCORE_MAX", "1000000"))  # scores in [0, PF_SCORE_MAX)
req = urllib.request.Request(f"{base}/v1/boards/{board}", data=config, method="PUT", headers=auth)
urllib.request.urlopen(req).read()
for start in range(0, n, 1000):
    entries = [{"member": f"player{i:010d}", "score": rng.randrange(SCORE_MAX), "op": "set"} for i in range(start, min(n, start + 1000))]
    req = urllib.request.Request(f"{base}/v1/boards/{board}/scores:batch", data=json.dumps({"entries": entries}).encode(), method="POST", headers={"Content-Type": "application/json", **auth})
    urllib.request.urlopen(req).read()
    if start % 200_000 == 0:
        print(f"loaded {start}", file=sys.stderr)
