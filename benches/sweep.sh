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
