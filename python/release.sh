#!/usr/bin/env bash
# The release artifacts of the `fxonnx` Python package, built into dist/ by one command:
#   - a manylinux2014 (glibc 2.17) abi3 wheel (CPython >= 3.9) for each of x86_64 and aarch64, built by
#     maturin with zig as the C compiler and linker (no Docker image needed; aarch64 is cross-compiled),
#     the native module stripped;
#   - the source distribution (sdist), which builds with a Rust toolchain (README, "Install").
# Then python/check_wheels.py checks every wheel: the glibc symbol versions its module needs are no newer
# than its tag, the module's architecture, stripping, the abi3 tag, and `auditwheel show` agrees.
#
#   bash python/release.sh                      # all of it (about 2 builds of the library)
#   RELEASE_ARCHES=x86_64 bash python/release.sh  # one wheel and the sdist
#
# Needs rustup (the aarch64 target is added when missing) and a python3 with venv; the build tools
# (maturin, ziglang, auditwheel, pinned below) go into a venv in target/. Nothing is cached outside the
# clone: pip caches nothing, zig's caches go to target/release-cache. Honours CARGO_BUILD_JOBS.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD

OUT=${DIST:-dist}
ARCHES=${RELEASE_ARCHES:-x86_64 aarch64}
# The lowest policy the wheels are tagged with: glibc 2.17 (CentOS 7, RHEL 7+, Ubuntu 14.04+, Debian 8+).
POLICY=manylinux2014
TOOLS=${RELEASE_TOOLS_VENV:-$ROOT/target/release-tools}
PY=${PYTHON:-python3}
MATURIN=1.16.0
ZIG=0.17.1
AUDITWHEEL=6.8.2

export XDG_CACHE_HOME="$ROOT/target/release-cache"
export ZIG_GLOBAL_CACHE_DIR="$XDG_CACHE_HOME/zig"
export ZIG_LOCAL_CACHE_DIR="$XDG_CACHE_HOME/zig-local"
START=$SECONDS
step() { printf '\n-- release: %s (%ss)\n' "$*" "$((SECONDS - START))"; }

step "build tools in $TOOLS (maturin $MATURIN, ziglang $ZIG, auditwheel $AUDITWHEEL)"
have_tools() {
    "$TOOLS/bin/python" - "$MATURIN" "$ZIG" "$AUDITWHEEL" <<'PYEOF' 2>/dev/null
import sys
from importlib.metadata import version
wanted = dict(zip(("maturin", "ziglang", "auditwheel"), sys.argv[1:]))
sys.exit(0 if all(version(k) == v for k, v in wanted.items()) else 1)
PYEOF
}
if ! have_tools; then
    rm -rf "$TOOLS"
    "$PY" -m venv "$TOOLS"
    "$TOOLS/bin/python" -m pip install --no-cache-dir --disable-pip-version-check --quiet \
        "maturin==$MATURIN" "ziglang==$ZIG" "auditwheel==$AUDITWHEEL"
fi
# maturin finds zig as `python3 -m ziglang` of the first python3 on PATH.
export PATH="$TOOLS/bin:$PATH"

triples=()
for arch in $ARCHES; do
    case "$arch" in
        x86_64|aarch64) triples+=("$arch-unknown-linux-gnu") ;;
        *) echo "error: unknown architecture '$arch' (x86_64 or aarch64)" >&2; exit 2 ;;
    esac
done
missing=()
installed=$(rustup target list --installed 2>/dev/null || true)
for t in "${triples[@]}"; do
    grep -qx "$t" <<<"$installed" || missing+=("$t")
done
if [ "${#missing[@]}" -gt 0 ]; then
    step "rustup target add ${missing[*]}"
    rustup target add "${missing[@]}"
fi

mkdir -p "$OUT"
rm -f "$OUT"/fxonnx-*.whl "$OUT"/fxonnx-*.tar.gz

step "sdist"
maturin sdist --out "$OUT"

for t in "${triples[@]}"; do
    step "wheel $t ($POLICY, abi3, stripped)"
    maturin build --release --locked --zig --compatibility "$POLICY" --target "$t" --out "$OUT"
done

step "check the wheels"
arch_args=()
for arch in $ARCHES; do arch_args+=(--arch "$arch"); done
"$TOOLS/bin/python" python/check_wheels.py --self-test "$OUT" "${arch_args[@]}"

step "done"
ls -l "$OUT"/fxonnx-*
