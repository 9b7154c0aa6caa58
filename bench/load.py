#!/usr/bin/env python3
"""Loads N members into a Photofinish board through the batch API (1000 writes a request).

Usage: load.py BASE_URL BOARD N [CONFIG_JSON]    Member ids are 16 bytes: player0000000000..
Env PF_TOKEN: an admin API key, sent as Authorization: Bearer.
Env PF_SCORE_MAX: scores are drawn uniformly from [0, PF_SCORE_MAX) (default 10^6).
`rows(n)` is the members and scores it loads, for other bench scripts (redis-import.sh)."""
import json, os, random, sys, urllib.request

SCORE_MAX = int(os.environ.get("PF_SCORE_MAX", "1000000"))


def rows(n):
    """(member, score) of the n members, in member order, the same on every run."""
    rng = random.Random(42)
    for i in range(n):
        yield f"player{i:010d}", rng.randrange(SCORE_MAX)


def main():
    base, board, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    config = (sys.argv[4] if len(sys.argv) > 4 else "{}").encode()
    auth = {"Authorization": f"Bearer {os.environ['PF_TOKEN']}"} if os.environ.get("PF_TOKEN") else {}
    req = urllib.request.Request(f"{base}/v1/boards/{board}", data=config, method="PUT", headers=auth)
    urllib.request.urlopen(req).read()
    all_rows = rows(n)
    for start in range(0, n, 1000):
        entries = [{"member": m, "score": s, "op": "set"} for m, s in (next(all_rows) for _ in range(min(1000, n - start)))]
        req = urllib.request.Request(f"{base}/v1/boards/{board}/scores:batch", data=json.dumps({"entries": entries}).encode(), method="POST", headers={"Content-Type": "application/json", **auth})
        urllib.request.urlopen(req).read()
        if start % 200_000 == 0:
            print(f"loaded {start}", file=sys.stderr)


if __name__ == "__main__":
    main()
