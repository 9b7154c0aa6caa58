# Sourced by bench/redis-batch-load.sh, redis-http-writes.sh, redis-cmdstats.sh and
# redis-import.sh (not run on its own): `serve_on_fresh_redis` starts a redis-server without
# persistence on $RPORT and `$BIN serve` on it at $PORT (RESP off), and stops both when the
# script exits (`stop_served`, which a script that needs more at exit calls from its own trap).
stop_served() {
    kill "$PF_PID" 2>/dev/null
    redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1 || true
}
serve_on_fresh_redis() {
    redis-server --port "$RPORT" --save '' --appendonly no --daemonize yes --logfile /dev/null
    sleep 0.5
    $BIN serve --listen 127.0.0.1:"$PORT" --resp-listen off --storage redis://127.0.0.1:"$RPORT" >/dev/null 2>&1 &
    PF_PID=$!
    trap stop_served EXIT
    sleep 1
}
