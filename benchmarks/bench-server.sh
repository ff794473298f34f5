# Sourced by the measurement scripts under benchmarks/ (regrow.sh, threads.sh).
# bench_server BINARY SYNC PORT: a fresh database in a temp dir with the bench's
# config (limits raised, every channel on a noop provider, a metrics token), a key
# and 10^9 credits, then `serve` on 127.0.0.1:PORT in the background.
# Sets D (the dir, also the working directory), KEY, PID and TOK.
bench_server() {
  local bin=$1 sync=$2 port=$3
  D=$(mktemp -d /tmp/bench-server-XXXX); TOK=m1234567890123456789012345678901234
  cat > $D/c.toml <<EOF
[server]
metrics_token = "$TOK"
[database]
path = "$D/otpd.db"
synchronous = "$sync"
[limits]
key_requests_per_minute = 1000000000
recipient_per_minute = 1000000000
recipient_per_hour = 1000000000
recipient_per_day = 1000000000
[channels]
sms = ["bench"]
email = ["bench"]
voice = ["bench"]
[providers.bench]
type = "noop"
EOF
  cd $D && KEY=$($bin keys create --json --config c.toml | python3 -c 'import json,sys;print(json.load(sys.stdin)["key"])') && $bin credits add 1000000000 --config c.toml >/dev/null
  $bin serve --listen 127.0.0.1:$port --config c.toml > serve.log 2>&1 &
  PID=$!
  sleep 1
}
