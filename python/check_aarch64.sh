#!/usr/bin/env bash
# Runs the no-torch tests (python/tests/test_api.py) against the aarch64 wheel on an x86_64 machine:
# Debian's arm64 CPython 3.11 under qemu-user, both unpacked into target/aarch64-sysroot (nothing is
# installed on the system; Debian's arm64 package list is added for the download and removed after).
# About 3 minutes; run by hand before a release (CI checks the aarch64 wheel's symbols, not its run).
#
#   bash python/check_aarch64.sh [WHEEL]      # default: dist/'s aarch64 wheel (python/release.sh)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

WHEEL=${1:-$(ls dist/fxonnx-*-cp39-abi3-manylinux*_aarch64*.whl 2>/dev/null | head -1)}
[ -n "$WHEEL" ] || { echo "error: no aarch64 wheel in dist/ (run python/release.sh)" >&2; exit 1; }
WHEEL=$(realpath "$WHEEL")
SYSROOT=$PWD/target/aarch64-sysroot
ROOT=$SYSROOT/root

if [ ! -x "$ROOT/usr/bin/python3.11" ]; then
    rm -rf "$SYSROOT"
    mkdir -p "$SYSROOT/debs"
    added=0
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        dpkg --add-architecture arm64
        added=1
    fi
    restore() { if [ "$added" = 1 ]; then dpkg --remove-architecture arm64; apt-get update -qq; fi; }
    trap restore EXIT
    apt-get update -qq
    (cd "$SYSROOT/debs" && apt-get download -q -o APT::Sandbox::User=root qemu-user-static \
        libc6:arm64 libgcc-s1:arm64 zlib1g:arm64 libexpat1:arm64 libffi8:arm64 libssl3:arm64 \
        libbz2-1.0:arm64 liblzma5:arm64 libsqlite3-0:arm64 libuuid1:arm64 libcrypt1:arm64 \
        libtinfo6:arm64 libncursesw6:arm64 libreadline8:arm64 libnsl2:arm64 libtirpc3:arm64 libdb5.3:arm64 \
        python3.11-minimal:arm64 libpython3.11-minimal:arm64 libpython3.11-stdlib:arm64)
    for deb in "$SYSROOT"/debs/*.deb; do dpkg -x "$deb" "$ROOT"; done
    restore
    trap - EXIT
fi

# `pyarm` runs the arm64 Python under qemu with itself as sys.executable, so that the tests'
# subprocesses (a fresh interpreter, the `fxonnx` command beside it) run under qemu too.
cat >"$ROOT/usr/bin/pyarm" <<EOF
#!/bin/sh
exec "$ROOT/usr/bin/qemu-aarch64-static" -L "$ROOT" -0 "$ROOT/usr/bin/pyarm" "$ROOT/usr/bin/python3.11" "\$@"
EOF
cat >"$ROOT/usr/bin/fxonnx" <<EOF
#!/bin/sh
exec "$ROOT/usr/bin/pyarm" -c 'import sys; from fxonnx._cli import main; main()' "\$@"
EOF
chmod +x "$ROOT/usr/bin/pyarm" "$ROOT/usr/bin/fxonnx"

SITE=$SYSROOT/site
rm -rf "$SITE"
mkdir -p "$SITE"
python3 -m zipfile -e "$WHEEL" "$SITE"
python3 -m pip install --quiet --disable-pip-version-check --no-cache-dir --root-user-action=ignore --target "$SITE" pytest==9.2.0
export PYTHONPATH=$SITE
"$ROOT/usr/bin/pyarm" -c 'import platform, fxonnx; print("fxonnx", fxonnx.__version__, "on", platform.machine())'
"$ROOT/usr/bin/pyarm" -m pytest -q -p no:cacheprovider python/tests/test_api.py
