#!/usr/bin/env bash
# Runs the image's filesystem ROOTFS as the container would (CMD as USER, in
# WORKDIR, with the image's Env), where no container runtime can start one:
# in private mount, network and PID namespaces, the root read-only, only
# VOLUME (/var/lib/otpd) writable, /proc mounted. Run by container-check.ts
# under `unshare --mount --net --pid --fork --propagation private`.
#   container-run.sh ROOTFS VOLUME OUT USER WORKDIR HEALTHCHECK ENV... -- CMD...
# Writes into OUT: serve.log, status (the server's /proc status), health,
# keys.json, send.json, verify.json, metrics, serve.rc.
set -euo pipefail
root=$1 volume=$2 out=$3 user=$4 workdir=$5 health=$6
shift 6
envs=()
while [ "$1" != -- ]; do envs+=("$1"); shift; done
shift

ip link set lo up
mount --bind "$root" "$root"
mount --bind "$volume" "$root/var/lib/otpd"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount -o remount,bind,ro "$root"

as_user() { chroot --userspec="$user" "$root" /usr/bin/env -i -C "$workdir" "${envs[@]}" "$@"; }

# Not through as_user: $! must be the server itself (chroot execs env, env execs otpd).
chroot --userspec="$user" "$root" /usr/bin/env -i -C "$workdir" "${envs[@]}" "$@" >"$out/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  if as_user bash -c "$health" 2>/dev/null; then echo healthy >"$out/health"; break; fi
  sleep 0.2
done
cat "$root/proc/$pid/status" >"$out/status"
as_user otpd keys create --name container-check --json >"$out/keys.json"
key=$(sed -n 's/.*"key": "\(.*\)".*/\1/p' "$out/keys.json")
curl -s http://127.0.0.1:8080/api/v1/send -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
  -d '{"channel":"sms","recipient":"+15550100001"}' >"$out/send.json"
id=$(sed -n 's/.*"verification_id":"\([^"]*\)".*/\1/p' "$out/send.json")
curl -s http://127.0.0.1:8080/api/v1/verify -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
  -d "{\"verification_id\":\"$id\",\"code\":\"123456\"}" >"$out/verify.json"
curl -s http://127.0.0.1:9090/metrics >"$out/metrics"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
echo "$rc" >"$out/serve.rc"
