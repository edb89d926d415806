#!/usr/bin/env bash
# Installs a release wheel into a fresh venv as a user would (`pip install WHEEL`, no Rust involved),
# checks that the install takes under INSTALL_SECONDS_LIMIT (10) seconds and that `import fxonnx` loads
# neither torch, onnx, onnxruntime nor numpy, then runs the no-torch tests (python/tests/test_api.py)
# against the installed package. Done with python3 and, when this machine has one (pyenv), CPython 3.9:
# the oldest the abi3 wheel claims.
#
#   bash python/check_install.sh [WHEEL]      # default: dist/'s x86_64 wheel (python/release.sh)
#
# The venvs go to target/install-check-*; pip caches nothing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

WHEEL=${1:-}
if [ -z "$WHEEL" ]; then
    WHEEL=$(ls dist/fxonnx-*-cp39-abi3-manylinux*_x86_64*.whl 2>/dev/null | head -1)
    [ -n "$WHEEL" ] || { echo "error: no x86_64 wheel in dist/ (run python/release.sh)" >&2; exit 1; }
fi
LIMIT=${INSTALL_SECONDS_LIMIT:-10}
PIP=(-m pip --disable-pip-version-check --no-cache-dir --quiet)

pythons=("${PYTHON:-python3}")
if [ -z "${CHECK_PYTHONS:-}" ]; then
    py39=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.9*/bin/python3.9 2>/dev/null | tail -1 || true)
    if [ -n "$py39" ]; then pythons+=("$py39"); else echo "note: no CPython 3.9 on this machine; checking with ${pythons[0]} only"; fi
else
    read -r -a pythons <<<"$CHECK_PYTHONS"
fi

now() { date +%s.%N; }
for py in "${pythons[@]}"; do
    version=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    venv="target/install-check-$version"
    rm -rf "$venv"
    t0=$(now)
    "$py" -m venv "$venv"
    t1=$(now)
    "$venv/bin/python" "${PIP[@]}" install "$WHEEL"
    t2=$(now)
    install=$(echo "$t2 - $t1" | bc)
    printf 'CPython %s: venv %.1f s, pip install %s %.1f s\n' "$version" "$(echo "$t1 - $t0" | bc)" "$(basename "$WHEEL")" "$install"
    if [ "$(echo "$install > $LIMIT" | bc)" = 1 ]; then
        echo "error: installing the wheel took ${install}s, over the ${LIMIT}s limit" >&2
        exit 1
    fi
    # A fresh interpreter: what importing fxonnx costs and loads.
    "$venv/bin/python" - <<'PYEOF'
import subprocess, sys
# Wall time and CPU time (the latter barely moves when other processes load the machine).
code = ("import sys, time; t, c = time.perf_counter(), time.process_time(); import fxonnx; "
        "t, c = time.perf_counter() - t, time.process_time() - c; "
        "heavy = sorted(m for m in ('torch', 'onnx', 'onnxruntime', 'numpy') if m in sys.modules); "
        "print(f'{t * 1000:.1f} {c * 1000:.1f}', ','.join(heavy))")
runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(" ")
        for _ in range(5)]
heavy = {r[2].strip() for r in runs} - {""}
if heavy:
    sys.exit(f"error: import fxonnx loads {heavy}")
wall, cpu = sorted(float(r[0]) for r in runs)[2], sorted(float(r[1]) for r in runs)[2]
print(f"import fxonnx: {wall:.1f} ms wall, {cpu:.1f} ms CPU (medians of 5 fresh interpreters); "
      "loads no torch, onnx, onnxruntime or numpy")
PYEOF
    "$venv/bin/fxonnx" --version
    pytest=pytest==9.2.0
    [ "$version" != 3.9 ] || pytest=pytest==8.4.2  # pytest 9 needs Python 3.10
    "$venv/bin/python" "${PIP[@]}" install "$pytest"
    "$venv/bin/python" -m pytest -q python/tests/test_api.py python/tests/test_files.py
done
