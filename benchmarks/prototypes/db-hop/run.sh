#!/usr/bin/env bash
# Alternates the variants: bash benchmarks/prototypes/db-hop/run.sh [rounds]
# (needs wrk; SPIN_US=20 by default). Prints req/s, p50, p99 and process CPU
# per request for each run.
set -u
cd "$(dirname "$0")"
export SPIN_US=${SPIN_US:-20}
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
  echo "$name SPIN_US=$SPIN_US req/s=$rps p50=$(echo "$out" | awk '/ 50%/{print $2}') p99=$(echo "$out" | awk '/ 99%/{print $2}') cpu_us=$(echo "($t1-$t0)*10000/($rps*8)" | bc -l | cut -c1-5)"
  kill $p; wait $p 2>/dev/null; sleep 0.5
}
for _ in $(seq "${1:-2}"); do
  run single single.ts
  PUBLISH=turn run hop-per-turn hop.ts
  run hop-per-request hop.ts
done
rm -rf "$DIR"
