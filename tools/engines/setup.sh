#!/usr/bin/env bash
# Makes the real-engine test bed: a Debian testing root with Debian's llama.cpp server and two
# random-weight Llama models written by our own generator: `tiny` (n_embd 512, 8 layers, ~100 MB)
# and `micro` (256, 4 layers, ~13 MB, about four times faster: the e2e tests' and the bench's).
# Debian 12's libc is too old for testing's llama.cpp, hence the root. Reused when present;
# `--force` rebuilds it.
#
#   npm run engines:setup            # root under $SLUICE_ENGINES_DIR (default ./.engines)
#
# Exit codes: 0 ready, 3 this machine cannot host it (the reason on one line), 1 failed.
set -euo pipefail
cd "$(dirname "$0")/../.."

dir=${SLUICE_ENGINES_DIR:-$PWD/.engines}
root="$dir/forky"
models="$dir/models"
stamp="$root/.sluice-ready"
force=0
[ "${1:-}" = "--force" ] && force=1

log() { printf '[engines] %s\n' "$*"; }
cannot() { printf '[engines] cannot set up the real engine here: %s\n' "$*" >&2; exit 3; }

[ "$(uname -s)" = Linux ] || cannot "not Linux ($(uname -s))"
[ "$(id -u)" = 0 ] || cannot "debootstrap and chroot need root"
case "$(dpkg --print-architecture 2>/dev/null || echo unknown)" in
  amd64 | arm64) arch=$(dpkg --print-architecture) ;;
  *) cannot "no Debian package architecture this script knows" ;;
esac

if [ "$force" = 1 ]; then
  umount "$root/proc" 2>/dev/null || true
  rm -rf "$root" "$models"
fi

if [ ! -f "$stamp" ]; then
  if ! command -v debootstrap >/dev/null 2>&1; then
    command -v apt-get >/dev/null 2>&1 || cannot "no debootstrap and no apt-get to install it"
    log "installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  fi
  # The mirror apt already uses on this machine (deb822 or one-line sources).
  mirror=$(grep -hoE '^(URIs:|deb) +https?://[^ ]+/debian/?' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
    awk '{print $2}' | head -1 || true)
  mirror=${mirror:-http://deb.debian.org/debian}
  # Debian 12's debootstrap has no script for testing ("forky"); sid's bootstraps it.
  script=/usr/share/debootstrap/scripts/sid
  [ -f "$script" ] || cannot "debootstrap has no 'sid' script"
  rm -rf "$root"
  mkdir -p "$dir"
  log "bootstrapping Debian testing into $root from $mirror (a few minutes)"
  debootstrap --variant=minbase --arch="$arch" forky "$root" "$mirror" "$script" >"$dir/debootstrap.log" 2>&1 ||
    { tail -5 "$dir/debootstrap.log" >&2; cannot "debootstrap failed (is $mirror reachable?); log: $dir/debootstrap.log"; }
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  mountpoint -q "$root/proc" || mount --bind /proc "$root/proc"
  # Testing's Release file has been seen past its Valid-Until date.
  apt_opts=(-o Acquire::Check-Valid-Until=false -qq)
  log "installing llama.cpp-tools and python3-gguf in the root"
  chroot "$root" apt-get "${apt_opts[@]}" update >/dev/null ||
    cannot "apt-get update in the root failed (is $mirror reachable?)"
  DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get "${apt_opts[@]}" install -y --no-install-recommends \
    llama.cpp-tools python3-gguf python3-numpy >"$dir/apt.log" 2>&1 ||
    { tail -5 "$dir/apt.log" >&2; cannot "apt-get in the root failed (is $mirror reachable?); log: $dir/apt.log"; }
  chroot "$root" apt-get clean
  touch "$stamp"
fi

mountpoint -q "$root/proc" || mount --bind /proc "$root/proc"
mkdir -p "$root/models"
for spec in tiny:512:8 micro:256:4; do
  IFS=: read -r name embd layers <<<"$spec"
  if [ ! -s "$root/models/$name.gguf" ]; then
    log "writing model $name (n_embd $embd, $layers layers)"
    cp tools/engines/write-tiny-llama.py "$root/tmp/write-tiny-llama.py"
    chroot "$root" python3 /tmp/write-tiny-llama.py "/models/$name.gguf" --embd "$embd" --layers "$layers"
  fi
done
version=$(chroot "$root" dpkg-query -W -f '${Version}' llama.cpp-tools)
log "ready: llama-server $version in $root, models in $root/models"
