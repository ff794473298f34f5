#!/bin/bash
# usage: threads.sh BINARY SYNC [SECONDS] -> send load (wrk -t2 -c64), then each server thread's CPU time per send.
# Twelfth round (BENCHMARKS.md): where send's server CPU goes, thread by thread. Needs wrk.
# Reproduce: bash benchmarks/prototypes/twelfth-round/threads.sh dist/otpd NORMAL
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BIN=$(realpath "$1"); SYNC=${2:-NORMAL}; SECS=${3:-10}
. "$ROOT/benchmarks/bench-server.sh"
bench_server "$BIN" "$SYNC" 18081
export BENCH_LUA_DIR=$ROOT/scripts BENCH_STATS_OUT=/dev/null BENCH_KEY=$KEY
BENCH_RUN=1 wrk -t2 -c64 -d3s -s $ROOT/scripts/bench-send.lua http://127.0.0.1:18081 >/dev/null
snap() { for t in /proc/$PID/task/*; do echo "$(basename $t) $(cat $t/comm | tr ' ' _) $(cut -d' ' -f14,15 < $t/stat)"; done; }
snap > before.txt
BENCH_RUN=2 wrk -t2 -c64 -d${SECS}s -s $ROOT/scripts/bench-send.lua http://127.0.0.1:18081 > out.txt
snap > after.txt
N=$(grep -E '^ +[0-9]+ requests in' out.txt | awk '{print $1}')
HZ=$(getconf CLK_TCK)
echo "$(basename $BIN) $SYNC: $N sends in ${SECS} s ($(grep Requests/sec out.txt | awk '{print $2}')/s)"
join <(sort before.txt) <(sort after.txt) | awk -v n=$N -v hz=$HZ -v secs=$SECS '{ us = (($6 + $7) - ($3 + $4)) * 1e6 / hz; if (us > 0) printf "  thread %-16s %6.2f us per send  %5.1f %% of a core\n", $2, us / n, us / 1e4 / secs }' | sort -k4 -nr
kill $PID; wait; rm -rf $D
