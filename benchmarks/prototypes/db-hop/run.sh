#!/usr/bin/env bash
# Alternates the variants: bash benchmarks/prototypes/db-hop/run.sh [rounds] [suite]
# (needs wrk). Prints req/s, p50, p99 and process CPU per request for each run.
#
# Suites (BENCHMARKS.md, eighth and tenth rounds):
#   normal   synchronous = NORMAL: one thread (single), a database thread fed
#            once per turn (hop, PUBLISH=turn) and request by request (hop).
#   full     synchronous = FULL: otpd's design today (single-full: one request
#            thread, the flush on a worker, answers after it), a database
#            thread flushing inline (hop, FSYNC=1), the flush on a third
#            thread (hop-flusher), and the next batch run while the previous
#            one flushes (hop-overlap).
#   threads  NORMAL: one database thread fed by one or two HTTP threads (hop2).
#   elysia   NORMAL: single and hop, bare and behind an Elysia route (ELYSIA=1).
#
# SPIN_US: busy work per request on the database side (default 20 for
# normal, 6 otherwise); SPIN_HTTP_US: on the request thread (default 0 for
# normal, 9 otherwise). 6 and 9 split otpd's verify as measured in the tenth
# round (in-process probe).
set -u
cd "$(dirname "$0")"
ROUNDS=${1:-2}
SUITE=${2:-normal}
if [ "$SUITE" = normal ]; then
  export SPIN_US=${SPIN_US:-20} SPIN_HTTP_US=${SPIN_HTTP_US:-0}
else
  export SPIN_US=${SPIN_US:-6} SPIN_HTTP_US=${SPIN_HTTP_US:-9}
fi
DIR=$(mktemp -d)
run() {
  local name=$1 file=$2
  rm -f "$DIR"/db.sqlite*
  DB="$DIR/db.sqlite" PORT=18090 bun "$file" >"$DIR/out" 2>&1 &
  local p=$!
  for _ in $(seq 100); do grep -q ready "$DIR/out" 2>/dev/null && break; sleep 0.2; done
  sleep 0.5
  wrk -t2 -c64 -d2s -s p.lua http://127.0.0.1:18090/ >/dev/null
  local t0 t1 out rps
  t0=$(awk '{print $14+$15}' /proc/$p/stat)
  out=$(wrk -t2 -c64 -d8s --latency -s p.lua http://127.0.0.1:18090/)
  t1=$(awk '{print $14+$15}' /proc/$p/stat)
  rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
  echo "$name SPIN_US=$SPIN_US SPIN_HTTP_US=$SPIN_HTTP_US req/s=$rps p50=$(echo "$out" | awk '/ 50%/{print $2}') p99=$(echo "$out" | awk '/ 99%/{print $2}') cpu_us=$(echo "($t1-$t0)*10000/($rps*8)" | bc -l | cut -c1-5)"
  kill $p; wait $p 2>/dev/null; sleep 0.5
}
for _ in $(seq "$ROUNDS"); do
  case "$SUITE" in
    normal)
      run single single.ts
      PUBLISH=turn run hop-per-turn hop.ts
      run hop-per-request hop.ts ;;
    full)
      run single-full single-full.ts
      FSYNC=1 run hop-full-inline hop.ts
      run hop-full-flusher hop-flusher.ts
      run hop-full-overlap hop-overlap.ts ;;
    threads)
      run single single.ts
      run hop-per-request hop.ts
      HTTP_THREADS=1 run hop2-1http hop2.ts
      run hop2-2http hop2.ts ;;
    elysia)
      run single single.ts
      ELYSIA=1 run single-elysia single.ts
      run hop-per-request hop.ts
      ELYSIA=1 run hop-elysia hop.ts ;;
    *) echo "unknown suite $SUITE (normal, full, threads, elysia)" >&2; exit 2 ;;
  esac
done
rm -rf "$DIR"
