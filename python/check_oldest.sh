#!/usr/bin/env bash
# The Python tests (with torch and without) against the oldest versions the package claims: each lower
# bound of pyproject.toml's `all` extra (`torch>=2.9` -> torch==2.9.0, onnx, onnxruntime, numpy) in a
# fresh venv, with the release wheel installed. The torch side uses semi-private APIs
# (torch.utils._pytree, Dim.AUTO, graph_signature's input specs) that move between torch versions;
# CI tests the newest (torch 2.15, .ci/run), this the oldest. Downloads about 3.5 GB (torch and its CUDA
# libraries from the package index), so it is run by hand before a release, not by CI.
#
#   bash python/check_oldest.sh [WHEEL] [VENV]    # default: dist/'s x86_64 wheel, target/oldest-deps
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

WHEEL=${1:-$(ls dist/fxonnx-*-cp39-abi3-manylinux*_x86_64*.whl 2>/dev/null | head -1)}
[ -n "$WHEEL" ] || { echo "error: no x86_64 wheel in dist/ (run python/release.sh)" >&2; exit 1; }
VENV=${2:-target/oldest-deps}
PY=${PYTHON:-python3}
PIP=(-m pip --disable-pip-version-check --no-cache-dir --quiet)

# `name>=X.Y` of the `all` extra -> `name==X.Y.0`.
mapfile -t pins < <("$PY" - <<'PYEOF'
import re, tomllib
extra = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["all"]
for requirement in extra:
    m = re.fullmatch(r"([A-Za-z0-9_.-]+)>=(\d+)\.(\d+)", requirement)
    if not m:
        raise SystemExit(f"error: {requirement!r} is not of the form name>=X.Y")
    print(f"{m[1]}=={m[2]}.{m[3]}.0")
PYEOF
)
echo "oldest claimed: ${pins[*]}"
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
# onnxscript: the tests compare dim names with torch.onnx's own export, which needs it.
"$VENV/bin/python" "${PIP[@]}" install "${pins[@]}" onnxscript==0.7.2 pytest==9.2.0
"$VENV/bin/python" "${PIP[@]}" install --force-reinstall --no-deps "$WHEEL"
"$VENV/bin/python" -c "import torch, onnx, onnxruntime, numpy; print('torch', torch.__version__, 'onnx', onnx.__version__, 'onnxruntime', onnxruntime.__version__, 'numpy', numpy.__version__)"
"$VENV/bin/python" -m pytest -q python/tests/test_api.py python/tests/test_torch.py
