#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# debian_check.sh: Loom as a new user meets it on a stock Debian 12, in a fresh bookworm root made
# with debootstrap (root only; slow: minutes of downloads and a full build).
#   1. the wheel: the root has Debian's python3 and nothing else of Loom's (no compiler, no LLVM, no
#      SLEEF: checked); apt-get install python3-venv, then packaging/check_wheel.sh installs the wheel
#      into a venv and runs wheel_smoke.py (SLEEF from the package, llvmlite beside it) and a sample of
#      tests/python;
#   2. the README: a clean clone of this repository's HEAD, then `bash scripts/demo.sh` and
#      `bash scripts/test.sh` exactly as the README says (setup.sh installs the packages itself).
# Usage: bash packaging/debian_check.sh WHEEL [ROOT]   (ROOT default /var/tmp/loom-bookworm, remade)
# Environment: LOOM_DEBIAN_MIRROR (default http://deb.debian.org/debian), LOOM_JOBS (passed on),
# LOOM_DEBIAN_SKIP_SOURCE=1 (only the wheel part), LOOM_DEBIAN_REUSE=1 (start from the tarball of an
# earlier untouched debootstrap result, ROOT.pristine.tar, instead of downloading again). Prints the
# time of every step.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD
wheel=$(cd "$(dirname "${1:?usage: debian_check.sh WHEEL [ROOT]}")" && pwd)/$(basename "$1")
root=${2:-/var/tmp/loom-bookworm}
mirror=${LOOM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
[ "$(id -u)" = 0 ] || { echo "debian_check: needs root (debootstrap, chroot)" >&2; exit 1; }
[ -f "$wheel" ] || { echo "debian_check: no wheel $wheel" >&2; exit 1; }

mounts=()
cleanup() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
t0=$SECONDS
step() { echo "== [$((SECONDS - t0)) s] $*"; }

if findmnt -rno TARGET | grep -q "^$root\(/\|$\)"; then
  echo "debian_check: something is mounted under $root; unmount it first" >&2
  exit 1
fi
if ! command -v debootstrap >/dev/null; then
  step "apt-get install debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null
fi
rm -rf --one-file-system "$root"
pristine=$root.pristine.tar
if [ "${LOOM_DEBIAN_REUSE:-0}" = 1 ] && [ -f "$pristine" ]; then
  step "unpacking the untouched debootstrap result $pristine (LOOM_DEBIAN_REUSE=1)"
  mkdir -p "$root" && tar -C "$root" -xf "$pristine"
else
  step "debootstrap bookworm $root (+ python3, as a stock system has it)"
  s=$SECONDS
  debootstrap --include=python3 bookworm "$root" "$mirror" >/tmp/debootstrap.log 2>&1 ||
    { tail -n 30 /tmp/debootstrap.log >&2; exit 1; }
  echo "   debootstrap: $((SECONDS - s)) s"
  tar -C "$root" -cf "$pristine" .
fi
cat >"$root/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
SOURCES
cp /etc/resolv.conf "$root/etc/resolv.conf"
# A host that reaches PyPI through a TLS-intercepting proxy names its CA bundle in PIP_CERT or
# SSL_CERT_FILE: the root gets a copy (a user behind that proxy would have to do the same).
ca_env=()
host_ca=${PIP_CERT:-${SSL_CERT_FILE:-}}
if [ -n "$host_ca" ] && [ -f "$host_ca" ]; then
  mkdir -p "$root/etc/ssl"
  cp "$host_ca" "$root/etc/ssl/host-ca-bundle.crt"
  ca_env=(PIP_CERT=/etc/ssl/host-ca-bundle.crt SSL_CERT_FILE=/etc/ssl/host-ca-bundle.crt)
fi
for m in proc sys dev dev/pts; do
  mkdir -p "$root/$m"
  mount --bind "/$m" "$root/$m"
  mounts+=("$root/$m")
done
in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 ${LOOM_JOBS:+LOOM_JOBS=$LOOM_JOBS} "${ca_env[@]}" bash -c "$1"; }

# the repository as a user gets it: a clean clone of HEAD (uncommitted changes are not in it)
git clone -q --no-hardlinks "$repo" "$root/root/loom"
git clone -q --no-hardlinks "$repo" "$root/root/loom-wheelcheck"
mkdir -p "$root/root/wheelhouse"
cp "$wheel" "$root/root/wheelhouse/"

step "the wheel on a system without a compiler, LLVM or SLEEF"
in_root '! command -v cc && ! command -v gcc && ! command -v clang && ! ls /usr/lib/llvm-* && ! ls /usr/lib/x86_64-linux-gnu/libsleef* && ! ls /usr/lib/x86_64-linux-gnu/libLLVM*' >/dev/null 2>&1 ||
  { echo "debian_check: the fresh root is not bare (a compiler, LLVM or SLEEF is there)" >&2; exit 1; }
in_root 'python3 -c "import sys; print(\"   system python\", sys.version.split()[0])"; python3 -m pip --version 2>&1 | head -1 | sed "s/^/   /"'
s=$SECONDS
in_root 'DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >/dev/null'
echo "   apt-get install python3-venv: $((SECONDS - s)) s"
s=$SECONDS
in_root "cd /root/loom-wheelcheck && PYTHON=/usr/bin/python3 LOOM_CHECK_VENV=/root/wheel-venv \
  LOOM_WHEEL_TESTS='${LOOM_DEBIAN_WHEEL_TESTS:-tests/python/test_api.py tests/python/test_ops.py tests/python/test_fuse.py tests/python/test_reduce.py tests/python/test_lazy.py tests/python/test_packaging.py tests/python/test_typing.py}' \
  bash packaging/check_wheel.sh /root/wheelhouse/$(basename "$wheel")"
echo "   wheel check: $((SECONDS - s)) s"
in_root '! command -v cc' >/dev/null || { echo "debian_check: the wheel check installed a compiler" >&2; exit 1; }

if [ "${LOOM_DEBIAN_SKIP_SOURCE:-0}" != 1 ]; then
  step "README: bash scripts/demo.sh (clean clone, stock python3)"
  s=$SECONDS
  in_root 'cd /root/loom && bash scripts/demo.sh' 2>&1 | tail -n 15
  echo "   demo.sh: $((SECONDS - s)) s"
  step "README: bash scripts/test.sh"
  s=$SECONDS
  in_root 'cd /root/loom && bash scripts/test.sh' 2>&1 | grep -E "^==|tests passed|tests failed|passed|failed|FAIL|test: " | tail -n 30
  rc=${PIPESTATUS[0]}
  echo "   test.sh: $((SECONDS - s)) s (exit $rc)"
  [ "$rc" -eq 0 ] || exit "$rc"
fi
step "debian_check: all passed"
