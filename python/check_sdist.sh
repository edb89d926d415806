#!/usr/bin/env bash
# The source distribution builds where a user has Rust and no wheel fits: `pip install dist/fxonnx-*.tar.gz`
# into a fresh venv (pip fetches maturin, the build backend; cargo builds the library from the sdist's
# files alone), then the no-torch tests run against what it installed.
#
#   bash python/check_sdist.sh [SDIST]                 # default: dist/fxonnx-*.tar.gz (python/release.sh)
#   RUSTUP_TOOLCHAIN=1.85 bash python/check_sdist.sh   # with the oldest toolchain Cargo.toml's rust-version names
#
# Cargo builds in SDIST_TARGET_DIR (default target/sdist-check, inside the clone, kept between runs so
# that a second run recompiles only the fxonnx crates); pip caches nothing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SDIST=${1:-$(ls dist/fxonnx-*.tar.gz 2>/dev/null | head -1)}
[ -n "$SDIST" ] || { echo "error: no sdist in dist/ (run python/release.sh)" >&2; exit 1; }
VENV=target/sdist-venv
PY=${PYTHON:-python3}
PIP=(-m pip --disable-pip-version-check --no-cache-dir)
export CARGO_TARGET_DIR="${SDIST_TARGET_DIR:-$PWD/target/sdist-check}"

# The sdist holds only what `cargo package` lists: no tests, fixtures, reports or CI files.
tar tzf "$SDIST" >target/sdist-files.txt
if grep -E '^[^/]+/(tests|reports|\.ci|fuzz|examples)/' target/sdist-files.txt; then
    echo "error: $SDIST carries the files above, which are not needed to build" >&2
    exit 1
fi
printf '%s: %s files, %s bytes\n' "$(basename "$SDIST")" "$(wc -l <target/sdist-files.txt)" "$(stat -c %s "$SDIST")"

rm -rf "$VENV"
"$PY" -m venv "$VENV"
start=$SECONDS
"$VENV/bin/python" "${PIP[@]}" install --quiet "$SDIST"
echo "pip install $(basename "$SDIST"): $((SECONDS - start)) s with $(rustc --version)"
"$VENV/bin/fxonnx" --version
"$VENV/bin/python" "${PIP[@]}" install --quiet pytest==9.2.0
"$VENV/bin/python" -m pytest -q python/tests/test_api.py
