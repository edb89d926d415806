#!/bin/sh
# The DEV sweep (issue 17): ../shared/tools/sweep.py builds 104 architectures of timm, torchvision and
# transformers as cases, runs torch.onnx and fxonnx on each, and checks both with check_onnx.py;
# the summary becomes reports/sweep.md. Needs the reference venv (torch, transformers, timm:
# ../shared/tools/requirements-reference.txt) and a release build of fxonnx.
#
#     PYTHON=/path/to/venv/bin/python benches/sweep.sh [OUT_DIR] [sweep.py options, e.g. --only A,B]
#
# The architectures outside the DEV list that fxonnx is also measured on (benches/sweep_unseen.json):
#
#     REPORT=reports/sweep_unseen.md benches/sweep.sh target/sweep-unseen --candidates benches/sweep_unseen.json
#
# Every stage is resumable (sweep.py skips what OUT_DIR already holds); --redo starts over.
#
# Then every dynamic model is checked at its example size, its alternative size and the edges of its
# range constraints (benches/sizes.py, on the models the sweep exported); the table is appended to
# the report, and a model wrong at any size makes the script fail after the report is written.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/target/sweep}
[ $# -gt 0 ] && shift
python=${PYTHON:-python3}
tools=${SHARED_TOOLS:-$here/../shared/tools}
# A copy of the binary: a rebuild during the sweep does not change the tool under test.
mkdir -p "$out"
cp "$here/target/release/fxonnx" "$out/fxonnx"
nice -n 10 "$python" "$tools/sweep.py" all --out "$out" --cmd "$out/fxonnx export {pt2} -o {onnx} --quiet" "$@"
report=${REPORT:-$here/reports/sweep.md}
cp "$out/sweep.md" "$report"
python3 "$here/benches/sweep_table.py" "$out" >> "$report"
"$python" "$here/benches/sweep_latency.py" "$out" >> "$report"
sizes_ok=0
nice -n 10 "$python" "$here/benches/sizes.py" "$out/cases" --fxonnx "$out/fxonnx" --onnx-dir "$out/onnx-fxonnx" \
    --checker "$tools/check_onnx.py" --out "$out/sizes.md" > "$out/sizes.jsonl" || sizes_ok=$?
{ printf '\n## Every size in range (benches/sizes.py)\n\n'; cat "$out/sizes.md"; } >> "$report"
exit "$sizes_ok"
