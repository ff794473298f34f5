#!/usr/bin/env bash
# The archive's walk-through as root (docs/install.md#release-archives), on
# this machine but in private mount and network namespaces whose /etc (a
# copy), /usr/local/bin, /var/lib and /usr/share/doc are directories of WORK,
# so the host is untouched: ./install.sh, then as the otpd user keys create,
# credits add, serve (on 127.0.0.1:8080, the config's default), a send and
# its verify, SIGTERM. Run by check.ts under
# `unshare --mount --net --propagation private`.
#   root-install-run.sh ARCHIVE_DIR WORK OUT
# Writes into OUT: install.log, keys.json, credits.log, serve.log, send.json,
# verify.json, serve.rc, files (owner, mode and path of what was installed).
set -euo pipefail
archive=$1 work=$2 out=$3

ip link set lo up
cp -a /etc "$work/etc"
mkdir "$work/bin" "$work/varlib" "$work/doc"
mount --bind "$work/etc" /etc
mount --bind "$work/bin" /usr/local/bin
mount --bind "$work/varlib" /var/lib
if [ -d /usr/share/doc ]; then mount --bind "$work/doc" /usr/share/doc; fi

cd "$archive"
./install.sh >"$out/install.log" 2>&1
cd /
as_otpd() { setpriv --reuid=otpd --regid=otpd --init-groups "$@"; }
config=(--config /etc/otpd/otp.config.toml)
as_otpd /usr/local/bin/otpd keys create --init --name backend --json "${config[@]}" >"$out/keys.json"
as_otpd /usr/local/bin/otpd credits add 1000 "${config[@]}" >"$out/credits.log"
# Not through as_otpd: $! must be the server itself (setpriv execs otpd).
setpriv --reuid=otpd --regid=otpd --init-groups /usr/local/bin/otpd serve "${config[@]}" >"$out/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  if curl -sf http://127.0.0.1:8080/healthz >/dev/null; then break; fi
  sleep 0.2
done
key=$(sed -n 's/.*"key": "\(.*\)".*/\1/p' "$out/keys.json")
curl -s http://127.0.0.1:8080/api/v1/send -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
  -d '{"channel":"sms","recipient":"+15550100001"}' >"$out/send.json"
id=$(sed -n 's/.*"verification_id":"\([^"]*\)".*/\1/p' "$out/send.json")
curl -s http://127.0.0.1:8080/api/v1/verify -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
  -d "{\"verification_id\":\"$id\",\"code\":\"123456\"}" >"$out/verify.json"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
echo "$rc" >"$out/serve.rc"
stat -c '%U:%G %a %n' /usr/local/bin/otpd /var/lib/otpd /var/lib/otpd/otpd.db /var/lib/otpd/otpd.secret /etc/otpd/otp.config.toml /etc/otpd/otpd.env /etc/systemd/system/otpd.service >"$out/files"
