#!/usr/bin/env bash
# An import of N members into a board on a fresh redis-server (docs/bench-history.md §10,
# "Imports"): `photofinish import` of a JSON Lines file of N rows, the members and scores
# bench/load.py loads (`rows`: 16-byte names player0000000000…, scores uniform in
# [0, PF_SCORE_MAX), by default [0, 10^6), so 37% tie),
# then the wall time, Redis's used_memory and INFO commandstats (the `fcall` line is the
# load calls, the others the commands they made). SORTED=1 lists the rows by score, best
# first, as an export does; the default keeps load.py's member order (scores at random).
# Usage: BIN=target/release/photofinish [SORTED=1] bench/redis-import.sh [N]
# Needs: a release build, redis-server, redis-cli, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
BIN=${BIN:-target/release/photofinish}
RPORT=6396 PORT=7796
FILE=$(mktemp)
. bench/redis-serve.sh
serve_on_fresh_redis
trap 'stop_served; rm -f "$FILE"' EXIT
PYTHONPATH=bench python3 - "$N" "${SORTED:-0}" >"$FILE" <<'PY'
import sys
from load import rows
n, by_score = int(sys.argv[1]), sys.argv[2] == "1"
rows = list(rows(n))
if by_score:
    rows.sort(key=lambda row: -row[1])
for member, score in rows:
    sys.stdout.write('{"member":"%s","score":%d,"reached_at":"2026-11-23T00:00:00.000000Z","metadata":null}\n' % (member, score))
PY
curl -sf -X PUT "localhost:$PORT/v1/boards/bench" -d '{}' >/dev/null
redis-cli -p $RPORT config resetstat >/dev/null
T0=$(date +%s.%N)
$BIN --server "http://127.0.0.1:$PORT" import --board bench "$FILE"
T1=$(date +%s.%N)
echo "$(basename "$BIN"): import of $N members (sorted: ${SORTED:-0}) $(python3 -c "print(f'{$T1-$T0:.2f}')") s"
redis-cli -p $RPORT info memory | grep '^used_memory:'
redis-cli -p $RPORT info commandstats | grep cmdstat | sed 's/cmdstat_//; s/,rejected.*//' |
    sort -t= -k3 -n -r | column -t -s:, | head -10
