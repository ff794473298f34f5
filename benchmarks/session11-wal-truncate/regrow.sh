#!/bin/bash
# usage: regrow.sh BINARY SYNC  -> load 5 s, idle 4 s, then measured load 15 s (after 3 s warm-up)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# After a burst and an idle gap (a truncated WAL with the new build), the next load: the WAL file sizes at the end of the gap, after the warm-up and after the run.
# Needs wrk. Reproduce: bash benchmarks/session11-wal-truncate/regrow.sh dist/otpd NORMAL
BIN=$(realpath "$1"); SYNC=${2:-NORMAL}
. "$ROOT/benchmarks/bench-server.sh"
bench_server "$BIN" "$SYNC" 18080
export BENCH_LUA_DIR=$ROOT/scripts BENCH_STATS_OUT=/dev/null BENCH_KEY=$KEY
BENCH_RUN=1 wrk -t2 -c64 -d5s -s $ROOT/scripts/bench-send.lua http://127.0.0.1:18080 >/dev/null
sleep 4; w0=$(stat -c %s otpd.db-wal)
BENCH_RUN=2 wrk -t2 -c64 -d3s -s $ROOT/scripts/bench-send.lua http://127.0.0.1:18080 >/dev/null
w1=$(stat -c %s otpd.db-wal)
BENCH_RUN=3 wrk -t2 -c64 -d15s --latency -s $ROOT/scripts/bench-send.lua http://127.0.0.1:18080 > out.txt
w2=$(stat -c %s otpd.db-wal)
echo "$(basename $BIN) $SYNC rps $(grep Requests/sec out.txt | awk '{print $2}') p99 $(grep ' 99%' out.txt | awk '{print $2}') wal idle-end $w0 after-warmup $w1 end $w2"
kill $PID; wait; tail -2 serve.log; rm -rf $D
