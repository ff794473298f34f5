#!/usr/bin/env bash
# Installs otpd on a systemd machine: the binary, the `otpd` system user, its
# state directory, the config from otp.config.example.toml, the hardened unit
# and the docs (README.md and docs/ in /usr/share/doc/otpd, where `otpd --help`
# points). Safe to run again (to upgrade): it replaces the binary, the unit and
# the docs, and never touches an existing config, env file or database.
# It runs from an unpacked release archive (everything beside it, the binary
# as ./otpd; no Bun needed) or from a clone (scripts/install.sh, dist/otpd).
#
#   sudo ./install.sh                            # install on this machine
#   DESTDIR=/tmp/pkg ./install.sh                # stage into a directory (packaging, tests)
#   OTPD_BINARY=path/to/otpd ./install.sh        # another binary (or --binary PATH)
#
# With DESTDIR set nothing outside DESTDIR is changed: no user is created, no
# owner set, no systemctl; the script prints what the operator must do instead.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# A release archive holds the files beside this script (docs/install.md); a
# clone holds them one level up, with the unit beside it and the build in dist/.
if [ -f "$here/otp.config.example.toml" ]; then
  root=$here
  binary=${OTPD_BINARY:-$root/otpd}
  unit=$root/otpd.service
  no_binary="the archive holds otpd beside install.sh"
else
  root=$(dirname "$here")
  binary=${OTPD_BINARY:-$root/dist/otpd}
  unit=$here/otpd.service
  no_binary="run bun run build first"
fi
example=$root/otp.config.example.toml
readme=$root/README.md
docs=$root/docs
where="run this script from an unpacked otpd release archive or a clone of the otpd repository"
destdir=${DESTDIR:-}
destdir=${destdir%/}

die() {
  echo "install.sh: error: $*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case $1 in
    --binary) [ $# -ge 2 ] || die "--binary needs a path"; binary=$2; shift 2 ;;
    --binary=*) binary=${1#--binary=}; shift ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

if [ -z "$destdir" ] && [ "$(id -u)" -ne 0 ]; then
  die "installing on this machine needs root: run it with sudo (or set DESTDIR=DIR to stage the files into DIR)"
fi
[ -f "$binary" ] || die "$binary does not exist: $no_binary (or give another binary with --binary PATH)"
[ -x "$binary" ] || die "$binary is not executable"
[ -f "$example" ] || die "$example is missing: $where"
[ -f "$unit" ] || die "$unit is missing: $where"
[ -f "$readme" ] || die "$readme is missing: $where"
[ -f "$docs/operating.md" ] || die "$docs is missing: $where"

user=otpd
bin_path=/usr/local/bin/otpd
state_dir=/var/lib/otpd
etc_dir=/etc/otpd
config_path=$etc_dir/otp.config.toml
env_path=$etc_dir/otpd.env
unit_path=/etc/systemd/system/otpd.service
doc_dir=/usr/share/doc/otpd
todo=() # what the operator must still do on the real system (DESTDIR only)

say() { echo "install.sh: $*"; }

# Runs a command that changes the real system, or, under DESTDIR, records it for the operator.
on_system() {
  if [ -n "$destdir" ]; then todo+=("$*"); else "$@"; fi
}

# install(1) into a temporary name, then rename: a running otpd keeps its old
# inode, and a half-copied file never has the final name.
put() { # mode source target
  local tmp
  tmp=$(dirname "$3")/.$(basename "$3").install-tmp
  install -m "$1" "$2" "$tmp"
  mv -f "$tmp" "$3"
}

# 1. The binary.
install -d -m 0755 "$destdir/usr/local/bin"
put 0755 "$binary" "$destdir$bin_path"
say "installed $bin_path"

# 2. The system user: no login shell, no home of its own beyond its state directory.
nologin=/usr/sbin/nologin
[ -x "$nologin" ] || nologin=/sbin/nologin
add_user=(useradd --system --user-group --home-dir "$state_dir" --no-create-home --shell "$nologin" "$user")
if [ -n "$destdir" ]; then
  todo+=("id -u $user >/dev/null 2>&1 || ${add_user[*]}")
elif id -u "$user" >/dev/null 2>&1; then
  say "system user $user exists"
else
  "${add_user[@]}"
  say "created system user $user"
fi

# 3. State directory: the database and otpd.secret, readable by otpd only.
install -d -m 0750 "$destdir$state_dir"
on_system chown "$user:$user" "$state_dir"

# 4. Config and env file: created once, never overwritten (they are the operator's).
install -d -m 0750 "$destdir$etc_dir"
on_system chown "root:$user" "$etc_dir"
if [ -e "$destdir$config_path" ]; then
  say "kept the existing $config_path"
else
  grep -q '^path = "./data/otpd.db"$' "$example" || die "$example has no line 'path = \"./data/otpd.db\"' to point at $state_dir"
  tmp=$destdir$config_path.install-tmp
  sed "s|^path = \"./data/otpd.db\"\$|path = \"$state_dir/otpd.db\"|" "$example" >"$tmp"
  chmod 0640 "$tmp"
  mv -f "$tmp" "$destdir$config_path"
  on_system chown "root:$user" "$config_path"
  say "wrote $config_path"
fi
if [ -e "$destdir$env_path" ]; then
  say "kept the existing $env_path"
else
  tmp=$destdir$env_path.install-tmp
  cat >"$tmp" <<'EOF'
# Environment for otpd.service, read by systemd (root) only: put provider
# secrets here rather than in otp.config.toml. Any config key can be set as
# OTPD_<SECTION>__<KEY>=value, for example:
# OTPD_LOGGING__LEVEL=debug
# After a change: systemctl restart otpd (a reload does not re-read this file).
# Operator commands read it with --env-file, for example:
#   sudo cat /etc/otpd/otpd.env | sudo -u otpd otpd config check --env-file -
EOF
  chmod 0600 "$tmp"
  mv -f "$tmp" "$destdir$env_path"
  say "wrote $env_path"
fi

# 5. The docs, where `otpd --help` points: the README, docs/*.md and the
# pictures they show (docs/*.png), laid out as in the repository so that their
# relative links work; always replaced, and files no longer shipped are removed.
install -d -m 0755 "$destdir$doc_dir" "$destdir$doc_dir/docs"
put 0644 "$readme" "$destdir$doc_dir/README.md"
for page in "$docs"/*.md "$docs"/*.png; do
  [ -f "$page" ] || continue
  put 0644 "$page" "$destdir$doc_dir/docs/$(basename "$page")"
done
for page in "$destdir$doc_dir"/docs/*.md "$destdir$doc_dir"/docs/*.png; do
  [ -f "$page" ] || continue
  [ -f "$docs/$(basename "$page")" ] || rm -f "$page"
done
say "installed $doc_dir/README.md and $doc_dir/docs/"

# 6. The unit: always replaced (local changes belong in a drop-in: systemctl edit otpd).
install -d -m 0755 "$destdir/etc/systemd/system"
put 0644 "$unit" "$destdir$unit_path"
say "installed $unit_path"
if [ -z "$destdir" ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
fi

running=no
if [ -z "$destdir" ] && [ -d /run/systemd/system ] && systemctl is-active --quiet otpd; then running=yes; fi

echo
if [ -n "$destdir" ]; then
  echo "Staged into $destdir. On the target machine, as root, also run:"
  for c in "${todo[@]}"; do echo "  $c"; done
  echo "  systemctl daemon-reload"
  echo
fi
echo "Next steps:"
echo "  1. Review $config_path (listen address, providers) and put provider secrets in $env_path."
echo "     Check it (provider secrets included): sudo cat $env_path | sudo -u $user $bin_path config check --config $config_path --env-file -"
if [ "$running" = yes ]; then
  echo "  2. otpd is running the old binary: systemctl restart otpd"
else
  echo "  2. Start otpd now and at every boot: systemctl enable --now otpd"
fi
echo "  3. Create an API key and add credits (run as $user, so the database stays its own):"
echo "     sudo -u $user $bin_path keys create --name backend --config $config_path"
echo "     sudo -u $user $bin_path credits add 1000 --config $config_path"
echo "  4. Follow the logs: journalctl -u otpd -f (errors only: journalctl -u otpd -p err)"
echo "  After editing $config_path: systemctl reload otpd"
