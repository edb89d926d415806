#!/usr/bin/env python3
"""Run onnx.checker (full check) and ONNX Runtime's loader on every model a fuzzing run kept
(`FXONNX_FUZZ_SAVE=DIR fuzz/run.sh ...`): every model fxonnx writes from a mutant must be valid.
Each model's archive is next to it (`HASH.pt2`), for `fxonnx export HASH.pt2` to reproduce it.

    python fuzz/check_models.py DIR

Prints the counts and each failure's first line; exits 1 if any model is invalid. A valid model
that onnxruntime's CPU provider has no kernel for (NOT_IMPLEMENTED: bfloat16 arithmetic, Resize of
float64) is counted and listed apart: valid ONNX, which other runtimes run, not an invalid model.
"""
import pathlib
import sys

import onnx
import onnxruntime as ort

ort.set_default_logger_severity(3)
models = sorted(pathlib.Path(sys.argv[1]).glob("*.onnx"))
bad, no_kernel = [], []
for m in models:
    try:
        proto = onnx.load(str(m))
        onnx.checker.check_model(proto, full_check=True)
    except Exception as e:  # noqa: BLE001 - every failure is reported
        bad.append((m.name, str(e).strip().splitlines()[0][:200]))
        continue
    try:
        ort.InferenceSession(str(m), providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001
        first = str(e).strip().splitlines()[0][:200]
        (no_kernel if "NOT_IMPLEMENTED" in first else bad).append((m.name, first))
ok = len(models) - len(bad) - len(no_kernel)
print(
    f"{len(models)} models: {ok} pass onnx.checker (full) and load in ONNX Runtime, "
    f"{len(no_kernel)} valid without an onnxruntime CPU kernel, {len(bad)} invalid"
)
for name, err in no_kernel:
    print(f"  no kernel {name}: {err}")
for name, err in bad:
    print(f"  invalid   {name}: {err}")
sys.exit(1 if bad else 0)
