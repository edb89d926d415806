#!/usr/bin/env bash
# Export each zoo model at opsets 13 to 18 and check each file with the shared checker
# (onnx.checker full, onnxruntime against the expected outputs on both input sets); print the
# markdown table of reports/opsets.md: pass with the node count (and its difference from opset 18),
# or the export's error.
#
# usage: benches/opsets.sh [FXONNX_BIN] [ZOO_DIR] > table.md
#   FXONNX_BIN  default target/release/fxonnx (build it first: cargo build --release)
#   ZOO_DIR     default /work/zoo (one folder per model: model.pt2, inputs/expected npz, meta.json)
#   PYTHON      env, default /work/ci-venv/bin/python (onnx + onnxruntime + numpy)
#   CHECK       env, default /work/shared/tools/check_onnx.py
#   MODELS      env, the model names (default: every folder of ZOO_DIR with a model.pt2)
set -euo pipefail
bin=${1:-target/release/fxonnx}
zoo=${2:-/work/zoo}
py=${PYTHON:-/work/ci-venv/bin/python}
check=${CHECK:-/work/shared/tools/check_onnx.py}
models=${MODELS:-$(for d in "$zoo"/*/; do [ -e "$d/model.pt2" ] && basename "$d"; done)}
opsets="13 14 15 16 17 18"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One cell: "pass, N nodes" / "FAIL: what failed" / "error: the export's message".
cell() {
    local m=$1 o=$2 out=$work/$1.$2.onnx
    if ! "$bin" export "$zoo/$m/model.pt2" --opset "$o" -o "$out" >"$work/log" 2>&1; then
        echo "error: $(grep -m1 -i 'error' "$work/log" | sed 's/^error: //; s/|/\\|/g')"
        return
    fi
    "$py" "$check" "$out" "$zoo/$m" --no-time 2>/dev/null | tail -1 | "$py" -c '
import json, sys
r = json.loads(sys.stdin.read())
if r.get("all_ok"):
    print("pass, %d nodes" % r["onnx_nodes"])
else:
    why = r.get("checker_error") or r.get("ort_load_error") or r.get("ort_error") or r.get("dyn_error")
    why = why or "outside the tolerance: tol_ratio %s" % r.get("tol_ratio")
    print("FAIL: " + str(why)[:200].replace("|", "\\|").replace("\n", " "))
'
    rm -f "$out" "$out.data"
}

echo "| model | $(echo $opsets | sed 's/ / | /g') |"
echo "|---|$(for _ in $opsets; do printf -- '---|'; done)"
for m in $models; do
    declare -A cells=()
    for o in $opsets; do cells[$o]=$(cell "$m" "$o"); done
    base=$(echo "${cells[18]}" | sed -n 's/^pass, \([0-9]*\) nodes$/\1/p')
    row="| $m |"
    for o in $opsets; do
        c=${cells[$o]}
        n=$(echo "$c" | sed -n 's/^pass, \([0-9]*\) nodes$/\1/p')
        if [ -n "$n" ] && [ -n "$base" ] && [ "$o" != 18 ]; then
            d=$((n - base))
            [ "$d" -ge 0 ] && d="+$d"
            c="pass, $n nodes ($d)"
        fi
        row="$row $c |"
    done
    echo "$row"
    unset cells
done
